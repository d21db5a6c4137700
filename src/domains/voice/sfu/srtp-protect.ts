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
 * SRTP protection of outgoing RTP with node:crypto, keyed once per peer connection (docs/voice.md#capacity).
 * AES-128-CM + HMAC-SHA1-80 (RFC 3711): the key stream comes from one AES-ECB cipher kept for the session (AES-CM
 * is AES of successive counter blocks), XORed with the payload, and the HMAC continues from the key's inner and
 * outer pads hashed once. AEAD AES-128-GCM (RFC 7714): one cipher per packet, since node:crypto takes the IV only
 * when a cipher is made.
 */
export class SrtpProtector {
  readonly tagLength: number;
  private readonly ecb: Cipher | undefined;
  private readonly innerPad: Hash | undefined;
  private readonly outerPad: Hash | undefined;
  private readonly rocBytes = Buffer.alloc(4);

  private constructor(private readonly keys: SrtpSessionKeys) {
    if (keys.profile === SRTP_AES128_CM_HMAC_SHA1_80) {
      this.tagLength = AUTH_TAG_CM;
      this.ecb = createCipheriv('aes-128-ecb', keys.srtpSessionKey, null);
      this.ecb.setAutoPadding(false);
      const inner = Buffer.alloc(SHA1_BLOCK, 0x36);
      const outer = Buffer.alloc(SHA1_BLOCK, 0x5c);
      keys.srtpSessionAuthTag.forEach((byte, i) => {
        inner[i] = (inner[i] ?? 0) ^ byte;
        outer[i] = (outer[i] ?? 0) ^ byte;
      });
      this.innerPad = createHash('sha1').update(inner);
      this.outerPad = createHash('sha1').update(outer);
    } else this.tagLength = AUTH_TAG_GCM;
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
    if (this.ecb) this.protectCm(this.ecb, out, headerLength, payload, ssrc, sequenceNumber, roc);
    else this.protectGcm(out, headerLength, payload, ssrc, sequenceNumber, roc);
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
    out: Buffer,
    headerLength: number,
    payload: Buffer,
    ssrc: number,
    sequenceNumber: number,
    roc: number,
  ): void {
    // RFC 7714 §8.1: IV = (00 00 || SSRC || ROC || SEQ) XOR salt; the header is the associated data.
    const iv = Buffer.alloc(12);
    iv.writeUInt32BE(ssrc >>> 0, 2);
    iv.writeUInt32BE(roc >>> 0, 6);
    iv.writeUInt16BE(sequenceNumber, 10);
    const salt = this.keys.srtpSessionSalt;
    for (let i = 0; i < 12; i++) iv[i] = (iv[i] ?? 0) ^ (salt[i] ?? 0);
    const cipher = createCipheriv('aes-128-gcm', this.keys.srtpSessionKey, iv);
    cipher.setAAD(out.subarray(0, headerLength));
    const encrypted = cipher.update(payload);
    cipher.final();
    encrypted.copy(out, headerLength);
    cipher.getAuthTag().copy(out, headerLength + payload.length);
  }
}
