import { type Cipher, createCipheriv, createHash, type Hash } from 'node:crypto';

/** The SRTP protection profiles (RFC 5764 §4.1.2, RFC 7714 §14.2), as werift numbers them. */
export const SRTP_AES128_CM_HMAC_SHA1_80 = 0x0001;
export const SRTP_AEAD_AES_128_GCM = 0x0007;

/** What the fast path reads from werift's local SRTP context: the session keys it derived after the handshake. */
export interface SrtpSessionKeys {
  profile: number;
  srtpSessionKey: Buffer;
  srtpSessionSalt: Buffer;
  srtpSessionAuthTag: Buffer;
}

const AUTH_TAG_CM = 10;
const AUTH_TAG_GCM = 16;
const SHA1_BLOCK = 64;

/**
 * SRTP protection of outgoing RTP with node:crypto, keyed once per peer connection (docs/voice.md#the-audio-fast-path). Both
 * profiles are counter mode, whose key stream is AES of successive counter blocks: it comes from one AES-ECB cipher
 * (node:crypto, keyed once for the session) and is XORed with the payload, instead of a cipher made per packet.
 * AES-128-CM + HMAC-SHA1-80 (RFC 3711): the HMAC continues from the key's inner and outer pads hashed once.
 * AEAD AES-128-GCM (RFC 7714, NIST SP 800-38D): the tag is GHASH (`Ghash`, tables made once per key) of the header
 * and the encrypted payload, XORed with AES of the first counter block.
 */
export class SrtpProtector {
  readonly tagLength: number;
  private readonly ecb: Cipher;
  private readonly innerPad: Hash | undefined;
  private readonly outerPad: Hash | undefined;
  private readonly ghash: Ghash | undefined;
  private readonly rocBytes = Buffer.alloc(4);

  private constructor(private readonly keys: SrtpSessionKeys) {
    this.ecb = createCipheriv('aes-128-ecb', keys.srtpSessionKey, null);
    this.ecb.setAutoPadding(false);
    if (keys.profile === SRTP_AES128_CM_HMAC_SHA1_80) {
      this.tagLength = AUTH_TAG_CM;
      const inner = Buffer.alloc(SHA1_BLOCK, 0x36);
      const outer = Buffer.alloc(SHA1_BLOCK, 0x5c);
      keys.srtpSessionAuthTag.forEach((byte, i) => {
        inner[i] = (inner[i] ?? 0) ^ byte;
        outer[i] = (outer[i] ?? 0) ^ byte;
      });
      this.innerPad = createHash('sha1').update(inner);
      this.outerPad = createHash('sha1').update(outer);
    } else {
      this.tagLength = AUTH_TAG_GCM;
      this.ghash = new Ghash(this.ecb.update(Buffer.alloc(16)));
    }
  }

  /** A protector for these session keys, or undefined for a profile it does not know (werift then sends). */
  static for(keys: SrtpSessionKeys): SrtpProtector | undefined {
    if (keys.srtpSessionKey.length !== 16) return undefined;
    if (keys.profile === SRTP_AES128_CM_HMAC_SHA1_80) {
      if (keys.srtpSessionSalt.length < 14 || keys.srtpSessionAuthTag.length > SHA1_BLOCK) return undefined;
      return new SrtpProtector(keys);
    }
    if (keys.profile === SRTP_AEAD_AES_128_GCM && keys.srtpSessionSalt.length >= 12) return new SrtpProtector(keys);
    return undefined;
  }

  /**
   * Protects one packet in place: `out` holds the plaintext RTP header in its first `headerLength` bytes and has
   * room for the payload and the tag after it; the encrypted payload and the tag are written there.
   */
  protect(out: Buffer, headerLength: number, payload: Buffer, ssrc: number, sequenceNumber: number, roc: number): void {
    if (this.ghash) this.protectGcm(this.ghash, out, headerLength, payload, ssrc, sequenceNumber, roc);
    else this.protectCm(this.ecb, out, headerLength, payload, ssrc, sequenceNumber, roc);
  }

  private protectCm(
    ecb: Cipher,
    out: Buffer,
    headerLength: number,
    payload: Buffer,
    ssrc: number,
    sequenceNumber: number,
    roc: number,
  ): void {
    const salt = this.keys.srtpSessionSalt;
    const blocks = (payload.length + 15) >>> 4;
    // RFC 3711 §4.1.1: IV = (salt · 2^16) XOR (SSRC · 2^64) XOR (index · 2^16), then one block per 16 bytes.
    const counters = Buffer.alloc(blocks * 16);
    for (let b = 0; b < blocks; b++) {
      const at = b * 16;
      counters.writeUInt32BE(ssrc >>> 0, at + 4);
      counters.writeUInt32BE(roc >>> 0, at + 8);
      counters.writeUInt16BE(sequenceNumber, at + 12);
      for (let i = 0; i < 14; i++) counters[at + i] = (counters[at + i] ?? 0) ^ (salt[i] ?? 0);
      counters.writeUInt16BE(b, at + 14);
    }
    const keyStream = ecb.update(counters);
    for (let i = 0; i < payload.length; i++) out[headerLength + i] = (payload[i] ?? 0) ^ (keyStream[i] ?? 0);
    const end = headerLength + payload.length;
    this.rocBytes.writeUInt32BE(roc >>> 0, 0);
    const inner = (this.innerPad as Hash).copy().update(out.subarray(0, end)).update(this.rocBytes).digest();
    const tag = (this.outerPad as Hash).copy().update(inner).digest();
    tag.copy(out, end, 0, AUTH_TAG_CM);
  }

  private protectGcm(
    ghash: Ghash,
    out: Buffer,
    headerLength: number,
    payload: Buffer,
    ssrc: number,
    sequenceNumber: number,
    roc: number,
  ): void {
    // RFC 7714 §8.1: IV = (00 00 || SSRC || ROC || SEQ) XOR salt; counter block i = IV || i, i from 1; block 1
    // masks the tag, blocks 2… encrypt the payload (SP 800-38D §7.1).
    const salt = this.keys.srtpSessionSalt;
    const blocks = 1 + ((payload.length + 15) >>> 4);
    const iv0 = (salt.readUInt16BE(0) << 16) ^ ((ssrc >>> 16) ^ salt.readUInt16BE(2));
    const iv1 = (((ssrc & 0xffff) ^ salt.readUInt16BE(4)) << 16) ^ ((roc >>> 16) ^ salt.readUInt16BE(6));
    const iv2 = (((roc & 0xffff) ^ salt.readUInt16BE(8)) << 16) ^ (sequenceNumber ^ salt.readUInt16BE(10));
    const counters = Buffer.allocUnsafe(blocks * 16);
    for (let b = 0; b < blocks; b++) {
      counters.writeUInt32BE(iv0 >>> 0, b * 16);
      counters.writeUInt32BE(iv1 >>> 0, b * 16 + 4);
      counters.writeUInt32BE(iv2 >>> 0, b * 16 + 8);
      counters.writeUInt32BE(b + 1, b * 16 + 12);
    }
    const keyStream = this.ecb.update(counters);
    for (let i = 0; i < payload.length; i++) out[headerLength + i] = (payload[i] ?? 0) ^ (keyStream[16 + i] ?? 0);
    const end = headerLength + payload.length;
    ghash.tag(out, headerLength, end, keyStream, out, end);
  }
}

/**
 * GHASH (NIST SP 800-38D §6.4) for one key H, by bytes (Shoup's tables): `byByte[b]` = b·H for the element whose
 * first byte is b, `reduce[b]` = what shifting b out of the last byte adds to the first 32 bits. Elements are four
 * 32-bit big-endian words.
 */
export class Ghash {
  private readonly byByte = new Uint32Array(256 * 4);
  private readonly reduce = new Uint32Array(256);
  /** The running GHASH value (Uint32Array: every word stored as unsigned 32 bits). */
  private readonly z = new Uint32Array(4);

  constructor(h: Buffer) {
    const hw = [h.readUInt32BE(0), h.readUInt32BE(4), h.readUInt32BE(8), h.readUInt32BE(12)];
    for (let b = 0; b < 256; b++) {
      const product = multiply([(b << 24) >>> 0, 0, 0, 0], hw);
      this.byByte.set(product, b * 4);
      const shifted = [0, 0, 0, b];
      for (let i = 0; i < 8; i++) shiftRightOne(shifted);
      this.reduce[b] = shifted[0] ?? 0;
    }
  }

  /**
   * Writes GHASH(A = data[0, split), C = data[split, end)) XOR mask[0, 16) to out[at, at + 16): the GCM tag.
   */
  tag(data: Buffer, split: number, end: number, mask: Buffer, out: Buffer, at: number): void {
    const z = this.z;
    z.fill(0);
    this.absorb(data, 0, split);
    this.absorb(data, split, end);
    // The lengths block: bit lengths of A and C, 64 bits each (both under 2^32 here).
    z[1] = (z[1] ?? 0) ^ (split * 8);
    z[3] = (z[3] ?? 0) ^ ((end - split) * 8);
    this.multiply();
    for (let w = 0; w < 4; w++) out.writeUInt32BE(((z[w] ?? 0) ^ mask.readUInt32BE(w * 4)) >>> 0, at + w * 4);
  }

  /** Absorbs data[from, to) in 16-byte blocks, the last one zero-padded. */
  private absorb(data: Buffer, from: number, to: number): void {
    const z = this.z;
    for (let at = from; at < to; at += 16) {
      if (at + 16 <= to) for (let w = 0; w < 4; w++) z[w] = (z[w] ?? 0) ^ data.readUInt32BE(at + w * 4);
      else
        for (let i = at; i < to; i++) {
          const w = (i - at) >>> 2;
          z[w] = (z[w] ?? 0) ^ ((data[i] ?? 0) << (24 - 8 * ((i - at) & 3)));
        }
      this.multiply();
    }
  }

  /** z = z · H, one byte at a time from the last (Horner's rule, x^8 being a shift right by 8 bits). */
  private multiply(): void {
    const z = this.z;
    const t = this.byByte;
    const r = this.reduce;
    const x0 = z[0] ?? 0;
    const x1 = z[1] ?? 0;
    const x2 = z[2] ?? 0;
    const x3 = z[3] ?? 0;
    let z0 = 0;
    let z1 = 0;
    let z2 = 0;
    let z3 = 0;
    for (let i = 15; i >= 0; i--) {
      const out = z3 & 0xff;
      z3 = (z3 >>> 8) | (z2 << 24);
      z2 = (z2 >>> 8) | (z1 << 24);
      z1 = (z1 >>> 8) | (z0 << 24);
      z0 = (z0 >>> 8) ^ (r[out] ?? 0);
      const word = i < 8 ? (i < 4 ? x0 : x1) : i < 12 ? x2 : x3;
      const k = ((word >>> (24 - 8 * (i & 3))) & 0xff) * 4;
      z0 ^= t[k] ?? 0;
      z1 ^= t[k + 1] ?? 0;
      z2 ^= t[k + 2] ?? 0;
      z3 ^= t[k + 3] ?? 0;
    }
    z[0] = z0;
    z[1] = z1;
    z[2] = z2;
    z[3] = z3;
  }
}

/** v · x in GCM's bit order (a shift right by one; R = 11100001 || 0^120 folded in for the bit shifted out). */
function shiftRightOne(v: number[]): void {
  const carry = (v[3] ?? 0) & 1;
  v[3] = (((v[3] ?? 0) >>> 1) | ((v[2] ?? 0) << 31)) >>> 0;
  v[2] = (((v[2] ?? 0) >>> 1) | ((v[1] ?? 0) << 31)) >>> 0;
  v[1] = (((v[1] ?? 0) >>> 1) | ((v[0] ?? 0) << 31)) >>> 0;
  v[0] = ((v[0] ?? 0) >>> 1) >>> 0;
  if (carry) v[0] = ((v[0] ?? 0) ^ 0xe1000000) >>> 0;
}

/** x · y in GF(2^128) (SP 800-38D §6.3, Algorithm 1), bit by bit: for the tables only. */
function multiply(x: number[], y: number[]): number[] {
  const z = [0, 0, 0, 0];
  const v = [...y];
  for (let i = 0; i < 128; i++) {
    if ((((x[i >>> 5] ?? 0) >>> (31 - (i & 31))) & 1) === 1)
      for (let w = 0; w < 4; w++) z[w] = ((z[w] ?? 0) ^ (v[w] ?? 0)) >>> 0;
    shiftRightOne(v);
  }
  return z;
}
