import {
  MediaStreamTrack,
  PictureLossIndication,
  ReceiverEstimatedMaxBitrate,
  type RTCIceServer,
  RTCPeerConnection,
  type RTCRtpTransceiver,
  RTP_EXTENSION_URI,
  RtcpPayloadSpecificFeedback,
  RtpHeader,
  RtpPacket,
} from 'werift';
import WebSocket from 'ws';
import { peerConfig } from '../../src/domains/voice/sfu/media-config.ts';
import { forgoUnconfiguredStun } from '../../src/domains/voice/sfu/stun-server.ts';

export type VideoCodec = 'VP8' | 'H264';

interface OfferTrack {
  mid: string | null;
  user_id: string;
  kind: string;
}

/**
 * A Node WebRTC voice client (werift) speaking Hearth's voice signalling: identify with the VOICE_SERVER_UPDATE
 * token, answer the server's offers, publish a synthetic Opus stream with the audio-level extension, and count
 * the RTP packets received from each other member.
 */
export class VoiceTestClient {
  readonly ws: WebSocket;
  readonly pc: RTCPeerConnection;
  /** Key-frame requests (PLI) the SFU sent for this client's camera and screen, by kind. */
  readonly keyFrameRequests = new Map<string, number>();
  readonly received = new Map<string, number>();
  /** Packets received by `<publisher id>:<kind>` (audio, camera, screen). */
  readonly receivedByKind = new Map<string, number>();
  /** The last packet received by `<publisher id>:<kind>`. */
  readonly lastPacket = new Map<string, RtpPacket>();
  /** Arrival times (performance.now()) of packets by publisher and sequence number, for delay measurements. */
  onPacket: ((from: string, packet: RtpPacket) => void) | undefined;
  readonly messages: { op: string; d: any }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly midOwners = new Map<string, string>();
  private readonly midKinds = new Map<string, string>();
  private readonly audio = new MediaStreamTrack({ kind: 'audio' });
  private audioTransceiver: RTCRtpTransceiver | undefined;
  /** Video kinds this client publishes, attached at the next answer (`publishVideo`). */
  private readonly videoTracks = new Map<
    string,
    { track: MediaStreamTrack; codec: VideoCodec; sequence: number; timestamp: number }
  >();
  private readonly videoTransceivers = new Map<string, RTCRtpTransceiver>();
  /** The mid of each upstream slot (`audio`, `camera`, `screen`), from the server's offers. */
  private readonly upstreamMids = new Map<string, string>();
  private sequence = Math.floor(Math.random() * 30000);
  private timestamp = Math.floor(Math.random() * 1e6);
  private negotiated = 0;
  private negotiatedWaiters: (() => void)[] = [];
  private chain: Promise<void> = Promise.resolve();

  /** Called once, on the first RTP packet received from anyone (join-time measurements). */
  onFirstPacket: (() => void) | undefined;
  private readonly publish: boolean;
  private readonly trackOwners = new Map<MediaStreamTrack, { owner: string; mid: string }>();

  /**
   * `publish: false`: a receive-only member (no audio track on its upstream slot; the benchmark's listeners).
   * `videoCodecs`: the video codecs this client accepts in its answers (default: all the SFU offers), as a
   * browser without H.264 would.
   */
  constructor(
    endpoint: string,
    token: string,
    options: {
      publish?: boolean;
      videoCodecs?: VideoCodec[];
      /** TURN only: the client's ICE offers nothing but relayed candidates from these servers (a strict firewall). */
      relayThrough?: RTCIceServer[];
    } = {},
  ) {
    this.publish = options.publish ?? true;
    const config = peerConfig({
      announcedAddresses: [],
      portRange: undefined,
      iceServers: options.relayThrough ?? [],
      includeLoopback: !options.relayThrough,
    });
    if (options.relayThrough) config.iceTransportPolicy = 'relay';
    const accepted = options.videoCodecs?.map((codec) => `video/${codec}`.toLowerCase());
    if (accepted && config.codecs)
      config.codecs.video = config.codecs.video?.filter((c) => accepted.includes(c.mimeType.toLowerCase()));
    this.pc = new RTCPeerConnection(config);
    this.ws = new WebSocket(endpoint);
    this.closed = new Promise((resolve) =>
      this.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    this.ws.on('error', () => {});
    this.ws.on('open', () => this.ws.send(JSON.stringify({ op: 'identify', d: { token } })));
    this.ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { op: string; d: any };
      this.messages.push(message);
      if (message.op === 'offer') this.chain = this.chain.then(() => this.answer(message.d)).catch(() => {});
    });
    this.pc.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((packet) => {
        let cached = this.trackOwners.get(track);
        if (!cached) {
          const mid = this.pc
            .getTransceivers()
            .find((t) => t.receiver.track === track || t.receiver.tracks.includes(track))?.mid;
          const found = mid ? this.midOwners.get(mid) : undefined;
          if (!found || !mid) return;
          cached = { owner: found, mid };
          this.trackOwners.set(track, cached);
          const first = this.onFirstPacket;
          this.onFirstPacket = undefined;
          first?.();
        }
        const { owner, mid } = cached;
        this.received.set(owner, (this.received.get(owner) ?? 0) + 1);
        const key = `${owner}:${this.midKinds.get(mid) ?? track.kind}`;
        this.receivedByKind.set(key, (this.receivedByKind.get(key) ?? 0) + 1);
        this.lastPacket.set(key, packet);
        this.onPacket?.(owner, packet);
      });
    });
  }

  /** Resolves after the `count`-th answered offer; throws `timed out: …` when it has not come in `timeoutMs`. */
  async negotiations(count = 1, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.negotiated < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out: negotiation ${count} (${this.negotiated} answered)`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.negotiatedWaiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  /** Sends `count` Opus-shaped packets, one every `intervalMs`, with the audio-level extension (`level` dBov). */
  async speak(count: number, intervalMs = 20, level = 30): Promise<void> {
    for (let i = 0; i < count; i++) {
      this.sendAudioPacket(level);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  sendAudioPacket(level = 30, payload: Buffer = Buffer.alloc(60, 0xf8)): void {
    const id = this.audioTransceiver?.headerExtensions.find(
      (e) => e.uri === RTP_EXTENSION_URI.audioLevelIndication,
    )?.id;
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + 960) >>> 0;
    const header = new RtpHeader({
      payloadType: 111,
      sequenceNumber: this.sequence,
      timestamp: this.timestamp,
      ssrc: 1,
      marker: false,
      extensions: id ? [{ id, payload: Buffer.from([0x80 | level]) }] : [],
      extension: id !== undefined,
    });
    this.audio.writeRtp(new RtpPacket(header, payload));
  }

  /** Publishes synthetic VP8 (or H.264) on the `camera` or `screen` slot from the next answer on (call before joining). */
  publishVideo(kind: 'camera' | 'screen', codec: VideoCodec = 'VP8'): void {
    if (this.videoTracks.has(kind)) return;
    this.videoTracks.set(kind, {
      track: new MediaStreamTrack({ kind: 'video' }),
      codec,
      sequence: Math.floor(Math.random() * 30000),
      timestamp: Math.floor(Math.random() * 1e6),
    });
  }

  /**
   * Sends one frame as one packet (a key frame when `keyFrame`): for VP8 a payload descriptor and frame header, for
   * H.264 one NAL unit (IDR or non-IDR slice).
   */
  sendVideoPacket(
    kind: 'camera' | 'screen',
    keyFrame = false,
    size = 800,
    layer?: { temporalId: number; layerSync: boolean; pictureId: number },
  ): void {
    const video = this.videoTracks.get(kind);
    if (!video) throw new Error(`not publishing ${kind}`);
    video.sequence = (video.sequence + 1) & 0xffff;
    video.timestamp = (video.timestamp + 3000) >>> 0;
    const payload = Buffer.alloc(size, 0x55);
    if (layer) {
      // Extended descriptor (RFC 7741): 15-bit picture ID, TL0PICIDX, TID and Y; then the frame tag.
      payload[0] = 0x90;
      payload[1] = 0xe0;
      payload[2] = 0x80 | ((layer.pictureId >> 8) & 0x7f);
      payload[3] = layer.pictureId & 0xff;
      payload[4] = 0;
      payload[5] = (layer.temporalId << 6) | (layer.layerSync ? 0x20 : 0);
      payload[6] = keyFrame ? 0x00 : 0x01;
    } else if (video.codec === 'VP8') {
      payload[0] = 0x10; // VP8 payload descriptor: start of partition 0
      payload[1] = keyFrame ? 0x00 : 0x01; // frame tag: P bit clear = key frame
    } else payload[0] = keyFrame ? 0x65 : 0x41; // NAL header: IDR slice (type 5) or non-IDR slice (type 1)
    // werift's sender labels each packet with its `codec`, the first negotiated one unless told otherwise.
    const sender = this.videoTransceivers.get(kind);
    const codec = sender?.codecs.find((c) => c.mimeType.toLowerCase() === `video/${video.codec}`.toLowerCase());
    if (sender && codec) sender.sender.codec = codec;
    const header = new RtpHeader({
      payloadType: codec?.payloadType ?? 96,
      sequenceNumber: video.sequence,
      timestamp: video.timestamp,
      ssrc: 2,
      marker: true,
    });
    video.track.writeRtp(new RtpPacket(header, payload));
  }

  /**
   * Asks for a key frame of `userId`'s `kind` as Chromium does: a PLI naming the stream's SSRC as this client
   * receives it, sent from the SSRC of this client's own upstream slot of that kind.
   */
  async requestKeyFrame(userId: string, kind: 'camera' | 'screen'): Promise<void> {
    const mediaSsrc = this.lastPacket.get(`${userId}:${kind}`)?.header.ssrc;
    const slot = this.pc.getTransceivers().find((t) => t.mid === this.upstreamMids.get(kind));
    if (mediaSsrc === undefined || !slot) throw new Error(`nothing received from ${userId}'s ${kind}`);
    await slot.dtlsTransport.sendRtcp([
      new RtcpPayloadSpecificFeedback({
        feedback: new PictureLossIndication({ senderSsrc: slot.sender.ssrc, mediaSsrc }),
      }),
    ]);
  }

  /** Tells the SFU what this client can receive, as a browser's REMB does (bits per second). */
  async sendBandwidthEstimate(bitsPerSecond: number): Promise<void> {
    let exponent = 0;
    while (bitsPerSecond >> exponent >= 1 << 18) exponent++;
    const slot = this.pc.getTransceivers()[0];
    if (!slot) throw new Error('not negotiated');
    await slot.dtlsTransport.sendRtcp([
      new RtcpPayloadSpecificFeedback({
        feedback: new ReceiverEstimatedMaxBitrate({
          senderSsrc: slot.sender.ssrc,
          mediaSsrc: 0,
          ssrcNum: 1,
          brExp: exponent,
          brMantissa: bitsPerSecond >> exponent,
          ssrcFeedbacks: [slot.sender.ssrc],
        }),
      }),
    ]);
  }

  /** Packets received from `userId`'s `kind`. */
  count(userId: string, kind: string): number {
    return this.receivedByKind.get(`${userId}:${kind}`) ?? 0;
  }

  total(): number {
    let sum = 0;
    for (const n of this.received.values()) sum += n;
    return sum;
  }

  async close(): Promise<void> {
    this.ws.close();
    await this.pc.close();
  }

  private async answer(offer: { sdp: string; upstream: { mid: string; kind: string }[]; tracks: OfferTrack[] }) {
    for (const track of offer.tracks)
      if (track.mid) {
        this.midOwners.set(track.mid, track.user_id);
        this.midKinds.set(track.mid, track.kind);
      }
    // A reused m-line can change owner at a renegotiation: look the owners up again.
    this.trackOwners.clear();
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    // Like the web client, every upstream slot is answered `sendonly` (with no track until one is attached): a
    // werift answer of `inactive` rejects the m-line (port 0) and its next answer then fails ("mid not found").
    for (const slot of offer.upstream) {
      const transceiver = this.pc.getTransceivers().find((t) => t.mid === slot.mid);
      if (transceiver && transceiver.direction !== 'sendonly') transceiver.setDirection('sendonly');
    }
    for (const slot of offer.upstream) this.upstreamMids.set(slot.kind, slot.mid);
    for (const [kind, video] of this.videoTracks) {
      const mid = offer.upstream.find((u) => u.kind === kind)?.mid;
      const slot = this.pc.getTransceivers().find((t) => t.mid === mid);
      if (!slot || this.videoTransceivers.has(kind)) continue;
      this.videoTransceivers.set(kind, slot);
      // Read off the transport: werift routes a PLI by its sender SSRC first, and the SFU's carries one that
      // this client knows as a receiver's (docs/voice.md#codecs).
      slot.dtlsTransport.onRtcp.subscribe((packet) => {
        const feedback = packet instanceof RtcpPayloadSpecificFeedback ? packet.feedback : undefined;
        if (feedback instanceof PictureLossIndication && feedback.mediaSsrc === slot.sender.ssrc)
          this.keyFrameRequests.set(kind, (this.keyFrameRequests.get(kind) ?? 0) + 1);
      });
      slot.setDirection('sendonly');
      await slot.sender.replaceTrack(video.track);
    }
    const audioMid = offer.upstream.find((u) => u.kind === 'audio')?.mid;
    const transceiver = this.pc.getTransceivers().find((t) => t.mid === audioMid);
    if (this.publish && transceiver && !this.audioTransceiver) {
      this.audioTransceiver = transceiver;
      transceiver.setDirection('sendonly');
      await transceiver.sender.replaceTrack(this.audio);
    }
    const answer = await this.pc.createAnswer();
    forgoUnconfiguredStun(this.pc, []);
    await this.pc.setLocalDescription(answer);
    if (this.pc.iceGatheringState !== 'complete')
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 3000);
        this.pc.iceGatheringStateChange.subscribe((state) => {
          if (state === 'complete') {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    const local = this.pc.localDescription;
    if (!local) return;
    this.ws.send(JSON.stringify({ op: 'answer', d: { sdp: local.sdp } }));
    this.negotiated++;
    for (const resolve of this.negotiatedWaiters.splice(0)) resolve();
  }
}

/** Polls `check` every 25 ms until it holds; throws `timed out: <what>` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Keeps `voice` talking until `check` holds (as `until`). */
export async function speakUntil(
  voice: VoiceTestClient,
  check: () => boolean,
  what: string,
  timeoutMs = 8000,
): Promise<void> {
  let done = false;
  const talking = (async () => {
    while (!done) await voice.speak(1);
  })();
  try {
    await until(check, what, timeoutMs);
  } finally {
    done = true;
    await talking;
  }
}
