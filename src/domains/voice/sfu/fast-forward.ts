import { Socket } from 'node:dgram';
import { isIP } from 'node:net';
import type { RTCDtlsTransport, RTCRtpSender, RTCRtpTransceiver, RtpPacket } from 'werift';
import { RTP_EXTENSION_URI } from 'werift';
import { SrtpProtector, type SrtpSessionKeys } from './srtp-protect.ts';

/**
 * The audio forwarding fast path (docs/voice.md#the-audio-fast-path). werift's `sendRtp` parses the forwarded packet again for
 * every subscriber, rebuilds its header through objects, makes a cipher and an HMAC per packet and sends through
 * three async layers of its ICE stack. Here an incoming audio packet is prepared once (`OutgoingRtp`) and, per
 * subscriber, only its RTP header is written (SSRC, payload type, the subscriber's MID and the speaker's audio level),
 * SRTP-protected with that peer connection's keyed state (`SrtpProtector`, keys from werift's DTLS transport) and
 * sent on the selected ICE pair's UDP socket. The sender's counters that werift's RTCP sender reports and NACK
 * handling read are kept as werift keeps them; anything this path does not cover (TURN or TCP pairs, an unknown
 * SRTP profile, a werift without the fields below) goes through werift's `sendRtp` as before.
 */

/** An incoming audio packet as forwarded to every subscriber: parsed once, serialised per subscriber. */
export class OutgoingRtp {
  /** The payload without RTP padding (padding is not forwarded). */
  readonly payload: Buffer;
  /** NTP time (RFC 3550 §4) when the packet was forwarded, for the senders' reports. */
  readonly ntpTimestamp: bigint;
  private serialized: Buffer | undefined;

  constructor(
    readonly packet: RtpPacket,
    /** The speaker's audio-level header extension value (RFC 6464), forwarded so clients can show who speaks. */
    readonly audioLevel: Buffer | undefined,
  ) {
    this.payload = packet.payload;
    this.ntpTimestamp = ntpNow();
  }

  /** The packet serialised as werift's `sendRtp` takes it (made once, for subscribers the fast path does not cover). */
  get buffer(): Buffer {
    this.serialized ??= this.packet.serialize();
    return this.serialized;
  }
}

/** NTP 64-bit time now: seconds since 1900 in the upper 32 bits, the fraction in the lower 32. */
function ntpNow(): bigint {
  const ms = performance.timeOrigin + performance.now() + NTP_EPOCH_OFFSET_MS;
  const seconds = Math.floor(ms / 1000);
  const fraction = Math.floor(((ms - seconds * 1000) / 1000) * 0x1_0000_0000);
  return (BigInt(seconds) << 32n) | BigInt(fraction >>> 0);
}
const NTP_EPOCH_OFFSET_MS = -Date.UTC(1900, 0, 1);

/** The fields of werift 0.24's RTCRtpSender that its own `sendRtp` updates and its RTCP/NACK code reads. */
interface SenderState {
  ssrc: number;
  seqOffset: number;
  timestampOffset: number;
  sequenceNumber?: number;
  timestamp?: number;
  ntpTimestamp: bigint;
  rtpTimestamp: number;
  octetCount: number;
  packetCount: number;
  headerBytesSent: number;
  headerExtensions: { id: number; uri: string }[];
  rtcpRunning: boolean;
  runRtcp(): Promise<void>;
}

/** werift 0.24's ICE connection and UDP protocol, as far as sending on the selected pair goes. */
interface IceSendPath {
  nominated?: { protocol: unknown; remoteAddr: readonly [string, number] };
  canSendApplicationData(): boolean;
  send(data: Buffer): Promise<void>;
}
interface UdpProtocol {
  transport: { closed?: boolean; socket: { send(data: Buffer, port: number, address: string): void } };
}

interface Route {
  udp: UdpProtocol['transport'];
  host: string;
  port: number;
}

function hasSenderState(sender: unknown): sender is SenderState {
  const s = sender as Partial<SenderState>;
  return (
    typeof s.ssrc === 'number' &&
    typeof s.seqOffset === 'number' &&
    typeof s.timestampOffset === 'number' &&
    typeof s.ntpTimestamp === 'bigint' &&
    typeof s.rtpTimestamp === 'number' &&
    typeof s.octetCount === 'number' &&
    typeof s.packetCount === 'number' &&
    typeof s.headerBytesSent === 'number' &&
    Array.isArray(s.headerExtensions) &&
    typeof s.rtcpRunning === 'boolean' &&
    typeof s.runRtcp === 'function'
  );
}

function isIceSendPath(connection: unknown): connection is IceSendPath {
  const c = connection as Partial<IceSendPath>;
  return typeof c.canSendApplicationData === 'function' && typeof c.send === 'function';
}

function udpSocketOf(protocol: unknown): UdpProtocol['transport'] | undefined {
  const transport = (protocol as Partial<UdpProtocol> | undefined)?.transport;
  return transport?.socket instanceof Socket ? transport : undefined;
}

/** One-byte header extension elements carry 1–16 bytes under IDs 1–14 (RFC 8285 §4.2). */
const MAX_ONE_BYTE_ID = 14;

/**
 * The fast path of one downstream audio transceiver. `send` answers false when this packet must go through werift
 * instead (nothing was sent then).
 */
export class AudioFastPath {
  private protector: SrtpProtector | undefined;
  private keysFor: unknown;
  private extensionsFor: unknown;
  private midFor: string | null | undefined;
  private routeFor: IceSendPath['nominated'];
  private route: Route | undefined;
  private midId = 0;
  private levelId = 0;
  private mid: Buffer = Buffer.alloc(0);

  private constructor(
    private readonly transceiver: RTCRtpTransceiver,
    private readonly sender: RTCRtpSender,
    /** The same sender object, seen through the fields werift's own send keeps. */
    private readonly state: SenderState,
  ) {}

  /** The fast path for a downstream transceiver, or undefined when werift's sender lacks what it relies on. */
  static for(transceiver: RTCRtpTransceiver): AudioFastPath | undefined {
    const sender: unknown = transceiver.sender;
    return hasSenderState(sender) ? new AudioFastPath(transceiver, transceiver.sender, sender) : undefined;
  }

  send(rtp: OutgoingRtp, payloadType: number): boolean {
    const transport = this.sender.dtlsTransport;
    const protector = this.protectorFor(transport);
    const connection: unknown = transport.iceTransport.connection;
    if (!protector || !isIceSendPath(connection) || !this.headerExtensionsKnown()) return false;
    const route = this.routeOf(connection.nominated);
    if (!route) return false;

    const sender = this.state;
    const { header } = rtp.packet;
    const sequenceNumber = (header.sequenceNumber + sender.seqOffset) & 0xffff;
    const timestamp = (header.timestamp + sender.timestampOffset) >>> 0;
    const payload = rtp.payload;
    const headerLength = this.headerLength(header.csrc.length, rtp.audioLevel);
    const out = Buffer.allocUnsafe(headerLength + payload.length + protector.tagLength);
    this.writeHeader(out, headerLength, rtp, payloadType, sequenceNumber, timestamp);
    const context = transport.srtp.localContext;
    const state = context.getSrtpSsrcState(sender.ssrc);
    context.updateRolloverCount(sequenceNumber, state);
    protector.protect(out, headerLength, payload, sender.ssrc, sequenceNumber, state.rolloverCounter);

    // As werift's own send: nothing goes out before ICE consent, or after it lapsed or the transport closed.
    if (connection.canSendApplicationData() && !route.udp.closed) {
      route.udp.socket.send(out, route.port, route.host);
      transport.bytesSent += out.length;
      transport.packetsSent++;
    }
    sender.sequenceNumber = sequenceNumber;
    sender.timestamp = timestamp;
    sender.ntpTimestamp = rtp.ntpTimestamp;
    sender.rtpTimestamp = timestamp;
    sender.octetCount += payload.length;
    sender.headerBytesSent += headerLength;
    sender.packetCount = (sender.packetCount + 1) >>> 0;
    // werift starts its sender reports on the first packet sent.
    if (!sender.rtcpRunning) void sender.runRtcp();
    return true;
  }

  /** The UDP socket and remote address of the selected candidate pair (looked up again when another is selected). */
  private routeOf(pair: IceSendPath['nominated']): Route | undefined {
    if (pair !== this.routeFor) {
      this.routeFor = pair;
      const udp = pair && udpSocketOf(pair.protocol);
      const [host, port] = pair?.remoteAddr ?? ['', 0];
      // A TURN relay or a TCP pair, or a name rather than an address: werift sends.
      this.route = udp && isIP(host) !== 0 ? { udp, host, port } : undefined;
    }
    return this.route;
  }

  /** The SRTP protector for this transport's current session keys (made again if werift replaces its session). */
  private protectorFor(transport: RTCDtlsTransport): SrtpProtector | undefined {
    const context = transport.srtp?.localContext as (SrtpSessionKeys & object) | undefined;
    if (!context) return undefined;
    if (context !== this.keysFor) {
      this.keysFor = context;
      this.protector = SrtpProtector.for(context);
    }
    return this.protector;
  }

  /** The negotiated IDs of the MID and audio-level extensions on this m-line (read again after a negotiation). */
  private headerExtensionsKnown(): boolean {
    const extensions = this.state.headerExtensions;
    const mid = this.transceiver.mid;
    if (extensions !== this.extensionsFor || mid !== this.midFor) {
      this.extensionsFor = extensions;
      this.midFor = mid;
      this.midId = extensions.find((e) => e.uri === RTP_EXTENSION_URI.sdesMid)?.id ?? 0;
      this.levelId = extensions.find((e) => e.uri === RTP_EXTENSION_URI.audioLevelIndication)?.id ?? 0;
      this.mid = Buffer.from(mid ?? '', 'utf8');
      if (this.mid.length === 0 || this.mid.length > 16) this.midId = 0;
    }
    return this.midId <= MAX_ONE_BYTE_ID && this.levelId <= MAX_ONE_BYTE_ID;
  }

  private headerLength(csrcCount: number, level: Buffer | undefined): number {
    let extension = 0;
    if (this.midId) extension += 1 + this.mid.length;
    if (this.levelId && level?.length) extension += 1 + level.length;
    return 12 + 4 * csrcCount + (extension ? 4 + ((extension + 3) & ~3) : 0);
  }

  /** RFC 3550 §5.1 header, with a one-byte extension block (RFC 8285 §4.2) for the MID and the audio level. */
  private writeHeader(
    out: Buffer,
    headerLength: number,
    rtp: OutgoingRtp,
    payloadType: number,
    sequenceNumber: number,
    timestamp: number,
  ): void {
    const { header } = rtp.packet;
    const csrcs = header.csrc;
    const fixed = 12 + 4 * csrcs.length;
    const hasExtension = headerLength > fixed;
    out[0] = 0x80 | (hasExtension ? 0x10 : 0) | csrcs.length;
    out[1] = (header.marker ? 0x80 : 0) | (payloadType & 0x7f);
    out.writeUInt16BE(sequenceNumber, 2);
    out.writeUInt32BE(timestamp, 4);
    out.writeUInt32BE(this.state.ssrc >>> 0, 8);
    csrcs.forEach((csrc, i) => {
      out.writeUInt32BE(csrc >>> 0, 12 + 4 * i);
    });
    if (!hasExtension) return;
    out.writeUInt16BE(0xbede, fixed);
    out.writeUInt16BE((headerLength - fixed - 4) / 4, fixed + 2);
    let at = fixed + 4;
    if (this.midId) {
      out[at++] = (this.midId << 4) | (this.mid.length - 1);
      this.mid.copy(out, at);
      at += this.mid.length;
    }
    const level = rtp.audioLevel;
    if (this.levelId && level?.length) {
      out[at++] = (this.levelId << 4) | (level.length - 1);
      level.copy(out, at);
      at += level.length;
    }
    out.fill(0, at, headerLength);
  }
}
