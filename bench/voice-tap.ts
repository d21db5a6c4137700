import { type Cipher, createCipheriv } from 'node:crypto';
import type { RTCPeerConnection } from 'werift';
import { SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80 } from '../src/domains/voice/sfu/srtp-protect.ts';

/**
 * The voice bench's listeners read their audio off the socket (docs/performance.md#voice, "Light listeners").
 *
 * A werift listener spends more CPU receiving a packet than the SFU spends forwarding it (its JavaScript SRTP,
 * RTP parsing, jitter and NACK bookkeeping per packet), so with a few hundred listeners on the same two cores
 * the clients, not the SFU, set the delay. A browser receives natively. Once a listener has heard its first
 * packet through werift (the join time is measured that way), the tap takes RTP datagrams off the selected
 * pair's UDP transport before werift sees them and reads only what the bench needs: the speaker's send time in
 * the first 8 bytes of the payload, decrypted with one block of AES key stream. ICE consent, DTLS and RTCP still
 * go through werift. The tag is not verified (a bench, not a receiver). The first packets go through both paths
 * and must agree, or the tap removes itself and werift keeps receiving.
 */

interface RemoteSrtpKeys {
  profile: number;
  srtpSessionKey: Buffer;
  srtpSessionSalt: Buffer;
}

interface UdpTransportLike {
  onData: (data: Buffer, addr: readonly [string, number]) => void;
}

/** Packets checked against werift's own decryption before the tap takes them alone. */
const CROSS_CHECKS = 5;

export class AudioTap {
  private readonly ecb: Cipher;
  private readonly block = Buffer.alloc(16);
  private readonly rollover = new Map<number, { roc: number; last: number }>();
  private checked = 0;
  private pending = new Map<string, number>();
  /** The transports hooked and their own handlers, given back by `remove`. */
  private hooked: { udp: UdpTransportLike; original: UdpTransportLike['onData'] }[] = [];

  private constructor(
    private readonly keys: RemoteSrtpKeys,
    private readonly onSendTime: (sendTime: number) => void,
  ) {
    this.ecb = createCipheriv('aes-128-ecb', keys.srtpSessionKey, null);
    this.ecb.setAutoPadding(false);
  }

  /**
   * Installs a tap on every UDP transport of this peer connection's ICE (the packets arrive on the one the SFU
   * selected, which is not always the pair this side calls nominated), or answers undefined when werift's
   * objects do not have the shape it reads (the listener then keeps receiving through werift).
   */
  static install(pc: RTCPeerConnection, onSendTime: (sendTime: number) => void): AudioTap | undefined {
    const transport = pc.getTransceivers()[0]?.receiver.dtlsTransport as unknown as
      | {
          srtp?: { remoteContext?: Partial<RemoteSrtpKeys> };
          iceTransport?: { connection?: { protocols?: { transport?: Partial<UdpTransportLike> }[] } };
        }
      | undefined;
    const keys = transport?.srtp?.remoteContext;
    const transports = (transport?.iceTransport?.connection?.protocols ?? []).map((p) => p.transport);
    if (!keys?.srtpSessionKey || !keys.srtpSessionSalt || typeof keys.profile !== 'number') return undefined;
    if (keys.profile !== SRTP_AEAD_AES_128_GCM && keys.profile !== SRTP_AES128_CM_HMAC_SHA1_80) return undefined;
    const udps = transports.filter((udp): udp is UdpTransportLike => typeof udp?.onData === 'function');
    if (udps.length === 0) return undefined;
    const tap = new AudioTap(keys as RemoteSrtpKeys, onSendTime);
    for (const udp of udps) {
      const original = udp.onData;
      tap.hooked.push({ udp, original });
      udp.onData = (data, addr) => tap.receive(data, addr, udp, original);
    }
    return tap;
  }

  /** werift's own reading of a packet (the listener's onPacket): the first ones must match the tap's. */
  crossCheck(sequenceNumber: number, ssrc: number, sendTime: number): void {
    const key = `${ssrc}:${sequenceNumber}`;
    const mine = this.pending.get(key);
    if (mine === undefined) return;
    this.pending.delete(key);
    if (mine !== sendTime) this.remove();
    else this.checked++;
  }

  /** Reading the packets alone (its cross-checks passed and it was not removed). */
  get active(): boolean {
    return this.hooked.length > 0 && this.checked >= CROSS_CHECKS;
  }

  remove(): void {
    for (const { udp, original } of this.hooked) udp.onData = original;
    this.hooked = [];
  }

  private receive(
    data: Buffer,
    addr: readonly [string, number],
    udp: UdpTransportLike,
    original: UdpTransportLike['onData'],
  ): void {
    if (!isRtp(data) || this.hooked.length === 0) {
      original.call(udp, data, addr);
      return;
    }
    const sendTime = this.sendTimeOf(data);
    if (this.checked < CROSS_CHECKS) {
      // Still proving itself: werift reads the packet too, and the listener reports werift's reading.
      if (sendTime !== undefined) this.pending.set(`${data.readUInt32BE(8)}:${data.readUInt16BE(2)}`, sendTime);
      original.call(udp, data, addr);
      return;
    }
    if (sendTime !== undefined) this.onSendTime(sendTime);
  }

  /** The first 8 bytes of the payload, decrypted: the speaker's send time (bench/voice.ts). */
  private sendTimeOf(packet: Buffer): number | undefined {
    let headerLength = 12 + 4 * ((packet[0] ?? 0) & 0x0f);
    if ((packet[0] ?? 0) & 0x10) headerLength += 4 + 4 * packet.readUInt16BE(headerLength + 2);
    if (packet.length < headerLength + 8) return undefined;
    const sequence = packet.readUInt16BE(2);
    const ssrc = packet.readUInt32BE(8);
    const roc = this.rolloverOf(ssrc, sequence);
    const salt = this.keys.srtpSessionSalt;
    const block = this.block;
    block.fill(0);
    if (this.keys.profile === SRTP_AEAD_AES_128_GCM) {
      // RFC 7714 §8.1: IV = (0x0000 ‖ SSRC ‖ ROC ‖ SEQ) XOR salt; the payload starts at counter 2.
      block.writeUInt32BE(ssrc, 2);
      block.writeUInt32BE(roc, 6);
      block.writeUInt16BE(sequence, 10);
      for (let i = 0; i < 12; i++) block[i] = (block[i] ?? 0) ^ (salt[i] ?? 0);
      block.writeUInt32BE(2, 12);
    } else {
      // RFC 3711 §4.1.1: IV = (salt · 2^16) XOR (SSRC · 2^64) XOR (index · 2^16); block counter 0.
      block.writeUInt32BE(ssrc, 4);
      block.writeUInt32BE(roc, 8);
      block.writeUInt16BE(sequence, 12);
      for (let i = 0; i < 14; i++) block[i] = (block[i] ?? 0) ^ (salt[i] ?? 0);
    }
    const keyStream = this.ecb.update(block);
    const plain = Buffer.allocUnsafe(8);
    for (let i = 0; i < 8; i++) plain[i] = (packet[headerLength + i] ?? 0) ^ (keyStream[i] ?? 0);
    return plain.readDoubleLE(0);
  }

  /** The rollover counter, estimated as RFC 3711 §3.3.1 does for packets in order. */
  private rolloverOf(ssrc: number, sequence: number): number {
    let state = this.rollover.get(ssrc);
    if (!state) {
      state = { roc: 0, last: sequence };
      this.rollover.set(ssrc, state);
    }
    if (state.last > 0xc000 && sequence < 0x4000) state.roc = (state.roc + 1) >>> 0;
    state.last = sequence;
    return state.roc;
  }
}

/** RTP, not RTCP (payload types 64–95 with the marker bit are RTCP's 192–223), nor STUN or DTLS. */
function isRtp(data: Buffer): boolean {
  const first = data[0] ?? 0;
  if (first < 128 || first > 191 || data.length < 12) return false;
  const payloadType = (data[1] ?? 0) & 0x7f;
  return payloadType < 64 || payloadType > 95;
}
