import {
  PictureLossIndication,
  ReceiverEstimatedMaxBitrate,
  RTCPeerConnection,
  type RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RTP_EXTENSION_URI,
  type RtcpPacket,
  RtcpPayloadSpecificFeedback,
  RtpPacket,
} from 'werift';
import type WebSocket from 'ws';
import { checkPeerSignatureHooks } from './dtls-peer-signature.ts';
import { keepEarlyDtls } from './early-dtls.ts';
import { AudioFastPath, type OutgoingRtp } from './fast-forward.ts';
import { type HandshakeGate, MEDIA_CONNECT_LIMIT_MS } from './handshake-gate.ts';
import { announceAddresses, audioLevel, peerConfig, type SfuNetworkSettings } from './media-config.ts';
import { type MediaKind, UPSTREAM_KINDS } from './media-kinds.ts';
import { forgoUnconfiguredStun } from './stun-server.ts';
import { LayerFilter, type LayerMeter, type Vp8Descriptor } from './temporal-layers.ts';
import { installNativeDtlsCrypto } from './werift-native-crypto.ts';

export { type MediaKind, UPSTREAM_KINDS };

// This module is where the SFU first loads werift (at the first participant): the DTLS handshake's public-key work
// goes to node:crypto before any handshake starts (docs/voice.md#join-admission), and a werift that no longer has
// what that replaces fails here, loudly, rather than joining at the old cost. Likewise for the check of the DTLS
// peer's handshake signature, which werift does not make.
installNativeDtlsCrypto();
checkPeerSignatureHooks();

/** The forwarding switches that come from the voice state (server mute/deafen, SPEAK). */
export interface ForwardingFlags {
  /** Audio from this member reaches nobody (server mute or no SPEAK). */
  silenced: boolean;
  /** This member receives no audio (server deafen). */
  deafened: boolean;
}

interface Downstream {
  publisherId: string;
  kind: MediaKind;
  transceiver: RTCRtpTransceiver;
  /** Which temporal layers of a layered VP8 stream this member gets (docs/voice.md#layer-selection). */
  layers: LayerFilter;
  /** The audio forwarding fast path of this m-line (docs/voice.md#the-audio-fast-path); null where werift sends. */
  fast?: AudioFastPath | null;
}

/** A layered VP8 packet's descriptor and its stream's layer weights (docs/voice.md#layer-selection). */
export interface LayeredPacket {
  descriptor: Vp8Descriptor;
  meter: LayerMeter;
}

/** Why a member's media never connected (docs/voice.md#join-admission). */
export type MediaFailure = 'refused' | 'failed' | 'timeout';

/** Speaking indicator: louder than this (dBov, 0 = loudest) counts as speech; a short hangover avoids flicker. */
const SPEECH_LEVEL = 60;
const SPEAKING_HANGOVER_MS = 400;

/**
 * One member in a room: the server side of their peer connection. Negotiation is server-driven (the server
 * always offers, the client only answers), so there is never glare; offers are made one at a time.
 */
export class Participant {
  readonly pc: RTCPeerConnection;
  flags: ForwardingFlags = { silenced: false, deafened: false };
  /** Forwards this member's upstream RTP (with its codec's MIME type, e.g. `video/H264`); set by the room. */
  onRtp: ((kind: MediaKind, packet: RtpPacket, mimeType: string | undefined) => void) | undefined;
  onSpeaking: ((speaking: boolean) => void) | undefined;
  onPictureLoss: ((publisherId: string, kind: MediaKind) => void) | undefined;
  /**
   * This member's media never connected (docs/voice.md#join-admission): its DTLS handshake was refused, its peer
   * connection failed before it was ever connected, or it was not connected `connectLimitMs` after the first offer.
   * Called at most once, never after `close()`; the signalling server then removes the member.
   */
  onMediaFailed: ((reason: MediaFailure) => void) | undefined;
  /** The bandwidth this member's client estimates it can receive (REMB, bits/s); undefined until it says. */
  receiveBandwidth: number | undefined;
  private readonly upstream = new Map<MediaKind, { transceiver: RTCRtpTransceiver; ssrc: number | undefined }>();
  private readonly downstream: Downstream[] = [];
  private negotiating: Promise<void> = Promise.resolve();
  private pendingAnswer: ((sdp: string) => void) | undefined;
  private speaking = false;

  /** Speaking now (the audio level, with hangover); a member who joins the room later is told. */
  get isSpeaking(): boolean {
    return this.speaking;
  }
  private lastSpeech = 0;
  private closed = false;
  /** Gives back this member's join-admission slot (docs/voice.md#join-admission); set while it holds one. */
  private releaseHandshake: (() => void) | undefined;
  private admitted = false;
  /** Connected once (ICE and DTLS): a later failure is not a failed join. */
  private connectedOnce = false;
  private failed = false;
  private connectTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly userId: string,
    readonly sessionId: string,
    private readonly ws: WebSocket,
    private readonly network: SfuNetworkSettings,
    private readonly handshakes?: HandshakeGate,
    /** How long after the first offer the media must be connected (docs/voice.md#join-admission). */
    private readonly connectLimitMs = MEDIA_CONNECT_LIMIT_MS,
  ) {
    this.pc = new RTCPeerConnection(peerConfig(network));
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected' || state === 'failed' || state === 'closed') this.endHandshake();
      if (state === 'connected') {
        this.connectedOnce = true;
        clearTimeout(this.connectTimer);
      } else if (state === 'failed') this.mediaFailed('failed');
    });
    for (const kind of UPSTREAM_KINDS) {
      const transceiver = this.pc.addTransceiver(kind === 'audio' ? 'audio' : 'video', { direction: 'recvonly' });
      // werift recycles a transceiver the client answered `inactive` (a client with no camera yet) for the next
      // addTransceiver: a downstream m-line would then take over this upstream slot's mid, and the client's
      // camera, when it comes, would have nowhere to go. Marked as used, it is never recycled.
      transceiver.usedForSender = true;
      this.upstream.set(kind, { transceiver, ssrc: undefined });
      transceiver.onTrack.subscribe((track) => {
        const entry = this.upstream.get(kind);
        if (entry) entry.ssrc = track.ssrc;
        track.onReceiveRtp.subscribe((packet) => this.received(kind, packet));
      });
    }
    // Every m-line shares one transport (max-bundle), created with the first transceiver above.
    const transport = this.upstream.get('audio')?.transceiver.dtlsTransport;
    transport?.onRtcp.subscribe((packet) => this.clientFeedback(packet));
    if (transport)
      keepEarlyDtls(transport, () => {
        this.handshakes?.countRefused();
        this.mediaFailed('refused');
      });
    // The one ICE transport exists now, before the first offer gathers.
    forgoUnconfiguredStun(this.pc, network.iceServers);
  }

  /** Wraps a downstream subscription to a publisher's media; takes effect at the next negotiation. */
  subscribe(publisherId: string, kind: MediaKind): RTCRtpTransceiver {
    // A transceiver left by a publisher who went away is reused before a new m-line is added.
    const free = this.downstream.find((d) => d.publisherId === '' && d.kind === kind);
    if (free) {
      free.publisherId = publisherId;
      free.layers = new LayerFilter();
      return free.transceiver;
    }
    const transceiver = this.pc.addTransceiver(kind === 'audio' ? 'audio' : 'video', { direction: 'sendonly' });
    this.downstream.push({ publisherId, kind, transceiver, layers: new LayerFilter() });
    return transceiver;
  }

  sendersFor(publisherId: string, kind: MediaKind): RTCRtpTransceiver | undefined {
    return this.downstream.find((d) => d.publisherId === publisherId && d.kind === kind)?.transceiver;
  }

  /**
   * Sends a publisher's packet (`rtp`) on this member's downstream m-line for it, with the payload
   * type this member negotiated for the packet's codec (`mimeType`): payload types are per peer connection, and a
   * video m-line carries VP8 or H.264 depending on the publisher (docs/voice.md#codecs). `not-ready`: no m-line,
   * no connected transport or no answer for it yet; `unsupported`: this member's answer did not accept that codec.
   */
  forward(
    publisherId: string,
    kind: MediaKind,
    mimeType: string | undefined,
    rtp: OutgoingRtp,
    layered?: LayeredPacket,
  ): 'sent' | 'not-ready' | 'unsupported' | 'thinned' {
    const entry = this.downstream.find((d) => d.publisherId === publisherId && d.kind === kind);
    const transceiver = entry?.transceiver;
    const sender = transceiver?.sender;
    // A member still waiting for admission or in its handshake has nothing to send on (docs/voice.md#join-admission).
    if (!transceiver || sender?.dtlsTransport?.state !== 'connected') return 'not-ready';
    // Nothing is sent on an m-line before this member's answer for it is applied: a browser that receives RTP
    // for an m-line it has not answered yet binds that SSRC elsewhere, and its answer then fails ("Failed to
    // apply demuxer criteria"), which left that subscriber without the new stream (docs/voice.md#codecs).
    if (transceiver.currentDirection !== 'sendonly') return 'not-ready';
    const codec = mimeType === undefined ? undefined : sameCodec(transceiver.codecs, mimeType);
    if (!codec) return 'unsupported';
    // werift labels every packet with the sender's `codec` (set to the first negotiated one at each negotiation);
    // it is read synchronously at the start of sendRtp, so each packet goes out with its own codec's number.
    sender.codec = codec;
    if (kind === 'audio' && entry) {
      // Audio (one speaker to hundreds of listeners) takes the fast path (docs/voice.md#the-audio-fast-path).
      if (entry.fast === undefined) entry.fast = AudioFastPath.for(transceiver) ?? null;
      if (entry.fast?.send(rtp, codec.payloadType)) return 'sent';
    }
    if (layered && entry) {
      const thinned = this.thin(entry, rtp.buffer, layered);
      if (!thinned) return 'thinned';
      sender.sendRtp(thinned).catch(() => {});
    } else sender.sendRtp(rtp.buffer).catch(() => {});
    return 'sent';
  }

  /**
   * Layer selection (docs/voice.md#layer-selection): this member's bandwidth estimate, shared evenly among the
   * video streams it receives, picks the highest temporal layer that fits; the packet is dropped when its frame
   * is above it, else returned with its sequence number and picture ID shifted past what was dropped.
   */
  private thin(entry: Downstream, buffer: Buffer, { descriptor, meter }: LayeredPacket): RtpPacket | undefined {
    const now = performance.now();
    const videoStreams = this.downstream.filter((d) => d.kind !== 'audio' && d.publisherId !== '').length;
    const maxLayer =
      this.receiveBandwidth === undefined
        ? Number.POSITIVE_INFINITY
        : meter.highestWithin(this.receiveBandwidth / Math.max(1, videoStreams), now);
    const packet = RtpPacket.deSerialize(buffer);
    // The payload is shared with the other subscribers' copies until copied here.
    const payload = Buffer.from(packet.payload);
    const sequenceNumber = entry.layers.admit(
      descriptor,
      packet.header.timestamp,
      packet.header.sequenceNumber,
      payload,
      maxLayer,
    );
    if (sequenceNumber === undefined) return undefined;
    packet.header.sequenceNumber = sequenceNumber;
    return new RtpPacket(packet.header, payload);
  }

  /** The codec of a payload type this member sends on its upstream slot (from its answer). */
  upstreamCodec(kind: MediaKind, payloadType: number): RTCRtpCodecParameters | undefined {
    return this.upstream.get(kind)?.transceiver.codecs.find((c) => c.payloadType === payloadType);
  }

  /** A publisher left: its downstream tracks go quiet (transceivers are kept, as renegotiating them away costs more). */
  unsubscribeAll(publisherId: string): void {
    for (const d of this.downstream) if (d.publisherId === publisherId) d.publisherId = '';
  }

  /** Asks the upstream sender for a key frame (a subscriber lost a picture). */
  requestKeyFrame(kind: MediaKind): void {
    const entry = this.upstream.get(kind);
    if (entry?.ssrc !== undefined) entry.transceiver.receiver.sendRtcpPLI(entry.ssrc).catch(() => {});
  }

  /** Queues a server offer; resolves once the client's answer is applied. */
  negotiate(): Promise<void> {
    this.negotiating = this.negotiating.then(() => this.offerOnce()).catch(() => {});
    return this.negotiating;
  }

  answer(sdp: string): void {
    const resolve = this.pendingAnswer;
    this.pendingAnswer = undefined;
    resolve?.(sdp);
  }

  async candidate(candidate: { candidate: string; sdpMid?: string; sdpMLineIndex?: number }): Promise<void> {
    await this.pc.addIceCandidate(candidate).catch(() => {});
  }

  send(op: string, d: unknown): void {
    if (this.ws.readyState === 1) this.ws.send(JSON.stringify({ op, d }));
  }

  /** A text frame serialised and encoded once by the caller for many participants (`Room.broadcast`). */
  sendSerialized(frame: Buffer): void {
    if (this.ws.readyState === 1) this.ws.send(frame, { binary: false });
  }

  closeSocket(close: { code: number; reason: string }): void {
    if (this.ws.readyState === 1) this.ws.close(close.code, close.reason);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pendingAnswer = undefined;
    clearTimeout(this.connectTimer);
    this.endHandshake();
    this.pc.close().catch(() => {});
  }

  /** The first failure of a member never connected, reported once (a refusal also makes the connection `failed`). */
  private mediaFailed(reason: MediaFailure): void {
    if (this.closed || this.connectedOnce || this.failed) return;
    this.failed = true;
    clearTimeout(this.connectTimer);
    this.onMediaFailed?.(reason);
  }

  /** Connected (ICE and DTLS done), failed or closed: the next joiner may start its handshake. */
  private endHandshake(): void {
    const release = this.releaseHandshake;
    this.releaseHandshake = undefined;
    release?.();
  }

  /** The first offer waits for a handshake slot; renegotiations of a connected member never do. */
  private async admit(): Promise<void> {
    if (this.admitted || !this.handshakes) return;
    this.admitted = true;
    const release = await this.handshakes.acquire();
    if (this.closed || this.pc.connectionState === 'connected') release();
    else this.releaseHandshake = release;
  }

  private async offerOnce(): Promise<void> {
    if (this.closed) return;
    await this.admit();
    if (this.closed) return;
    const offer = await this.pc.createOffer();
    await this.pc.setLocalDescription(offer);
    await this.gathered();
    const local = this.pc.localDescription;
    if (!local || this.closed) return;
    const tracks = this.downstream.map((d) => ({ mid: d.transceiver.mid, user_id: d.publisherId, kind: d.kind }));
    const upstream = UPSTREAM_KINDS.map((kind) => ({ mid: this.upstream.get(kind)?.transceiver.mid, kind }));
    const answer = new Promise<string>((resolve) => {
      this.pendingAnswer = resolve;
    });
    this.send('offer', { sdp: announceAddresses(local.sdp, this.network.announcedAddresses), upstream, tracks });
    // The bound on joining starts at the first offer: a member waiting for admission has nothing to connect yet.
    if (!this.connectTimer && !this.connectedOnce)
      this.connectTimer = setTimeout(() => this.mediaFailed('timeout'), this.connectLimitMs);
    const sdp = await Promise.race([answer, new Promise<string>((_, reject) => setTimeout(reject, 15_000))]);
    if (this.closed) return;
    await this.pc.setRemoteDescription({ type: 'answer', sdp });
  }

  private async gathered(): Promise<void> {
    if (this.pc.iceGatheringState === 'complete') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      const { unSubscribe } = this.pc.iceGatheringStateChange.subscribe((state) => {
        if (state !== 'complete') return;
        clearTimeout(timer);
        unSubscribe();
        resolve();
      });
    });
  }

  private received(kind: MediaKind, packet: RtpPacket): void {
    if (kind === 'audio') this.trackSpeech(packet);
    this.onRtp?.(kind, packet, this.upstreamCodec(kind, packet.header.payloadType)?.mimeType);
  }

  /**
   * Feedback from this member's client, read off the transport. A REMB is its receive estimate. A PLI or FIR
   * asks for a key frame of one of its downstream streams (named by the
   * SSRC of our sender): the room asks that stream's publisher. Read off the transport rather than the sender's
   * own events: werift routes payload-specific feedback by the packet's *sender* SSRC first, and Chromium sends
   * it from the SSRC of one of its own upstream streams, so our receiver for that slot took it and the request
   * never reached the publisher; a subscriber who missed the key frame at the start waited for the next one the
   * publisher happened to send (docs/voice.md#codecs).
   */
  private clientFeedback(packet: RtcpPacket): void {
    if (!(packet instanceof RtcpPayloadSpecificFeedback)) return;
    const feedback = packet.feedback;
    // REMB: the client's estimate of what it can receive, for all its streams (docs/voice.md#layer-selection).
    if (feedback instanceof ReceiverEstimatedMaxBitrate) {
      this.receiveBandwidth = Number(feedback.bitrate);
      return;
    }
    const ssrcs =
      feedback instanceof PictureLossIndication
        ? [feedback.mediaSsrc]
        : 'fir' in feedback
          ? feedback.fir.map((entry) => entry.ssrc)
          : [];
    for (const ssrc of ssrcs) {
      const entry = this.downstream.find((d) => d.transceiver.sender.ssrc === ssrc);
      if (entry?.publisherId && entry.kind !== 'audio') this.onPictureLoss?.(entry.publisherId, entry.kind);
    }
  }

  /** The audio-level header extension (RFC 6464) of a packet this member sent, as it came. */
  audioLevelOf(packet: RtpPacket): Buffer | undefined {
    const id = this.audioLevelId();
    if (id === undefined) return undefined;
    return packet.header.extensions.find((e) => e.id === id)?.payload;
  }

  private trackSpeech(packet: RtpPacket): void {
    const extension = this.audioLevelOf(packet);
    const level = extension ? audioLevel(extension) : undefined;
    if (level === undefined) return;
    const now = performance.now();
    if (level <= SPEECH_LEVEL && !this.flags.silenced) this.lastSpeech = now;
    const speaking = now - this.lastSpeech < SPEAKING_HANGOVER_MS;
    if (speaking !== this.speaking) {
      this.speaking = speaking;
      this.onSpeaking?.(speaking);
    }
  }

  private levelId: number | undefined;

  private audioLevelId(): number | undefined {
    if (this.levelId !== undefined) return this.levelId;
    const transceiver = this.upstream.get('audio')?.transceiver;
    const extension = transceiver?.headerExtensions.find((e) => e.uri === RTP_EXTENSION_URI.audioLevelIndication);
    // Known only once negotiated; not cached before.
    this.levelId = extension?.id;
    return this.levelId;
  }
}

/**
 * The negotiated codec with this MIME type (case-insensitive, as in SDP). It runs per packet and subscriber: both
 * sides' names come from the server's own offer, so the exact match answers without building lower-case copies.
 */
function sameCodec(codecs: RTCRtpCodecParameters[], mimeType: string): RTCRtpCodecParameters | undefined {
  for (const codec of codecs) if (codec.mimeType === mimeType) return codec;
  const wanted = mimeType.toLowerCase();
  return codecs.find((c) => c.mimeType.toLowerCase() === wanted);
}
