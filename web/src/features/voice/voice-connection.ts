import type { GatewayHub } from '../../gateway/hub.ts';

type Kind = 'audio' | 'camera' | 'screen';

interface OfferPayload {
  sdp: string;
  upstream: { mid: string; kind: Kind }[];
  tracks: { mid: string | null; user_id: string; kind: Kind }[];
}

/** How long a call whose signalling socket closed waits for a new room before it ends: after a move, and otherwise. */
const MOVE_WAIT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;

/** The part of a VOICE_STATE_UPDATE that tells this call it was moved. */
interface MovedState {
  session_id?: string;
  guild_id?: string | null;
  channel_id: string | null;
}

export interface RemoteMedia {
  userId: string;
  kind: Kind;
  stream: MediaStream;
}

export interface VoiceSettings {
  inputDeviceId: string;
  outputDeviceId: string;
  echoCancellation: boolean;
  noiseSuppression: boolean;
  /** Voice activity (the microphone is always open) or push-to-talk (open only while the key is held). */
  inputMode: 'voiceActivity' | 'pushToTalk';
  /** The push-to-talk key, a `KeyboardEvent.code` (layout-independent). */
  pushToTalkKey: string;
  /**
   * Input sensitivity (voice activity only): with `sensitivityAuto` off, the microphone track is disabled (silence)
   * while its level stays below `sensitivityDb` (dBFS, -100 to 0).
   */
  sensitivityAuto: boolean;
  sensitivityDb: number;
  /** The codec camera and screen are sent with, when the browser has it (docs/voice.md#codecs). */
  videoCodec: VideoCodec;
}

/** Video codecs the SFU offers (docs/voice.md#codecs); VP8 is the default. */
export const VIDEO_CODECS = ['VP8', 'H264'] as const;
export type VideoCodec = (typeof VIDEO_CODECS)[number];

/** The video codecs this browser can send, among those the SFU offers. */
export function sendableVideoCodecs(): VideoCodec[] {
  const mimeTypes = new Set(
    (RTCRtpSender.getCapabilities?.('video')?.codecs ?? []).map((c) => c.mimeType.toLowerCase()),
  );
  return VIDEO_CODECS.filter((codec) => mimeTypes.has(`video/${codec.toLowerCase()}`));
}

/**
 * The browser's video codecs with `preferred` first, for `setCodecPreferences` on the camera and screen slots:
 * the answer then lists it first and the browser sends it. The others stay after it, so a codec the browser
 * lacks leaves the slot usable (undefined: the browser cannot set preferences at all).
 */
function videoPreferences(preferred: VideoCodec): RTCRtpCodec[] | undefined {
  const codecs = RTCRtpReceiver.getCapabilities?.('video')?.codecs;
  if (!codecs) return undefined;
  const wanted = `video/${preferred.toLowerCase()}`;
  return [
    ...codecs.filter((c) => c.mimeType.toLowerCase() === wanted),
    ...codecs.filter((c) => c.mimeType.toLowerCase() !== wanted),
  ];
}

/** The local connection's quality, from `RTCPeerConnection.getStats` (docs/web.md#voice). */
export interface ConnectionQuality {
  level: 'good' | 'fair' | 'poor';
  /** Round-trip time of the selected candidate pair, in milliseconds. */
  rttMs: number;
  /** Packets lost out of those expected, in percent (inbound and, as the SFU reports it, outbound). */
  lossPercent: number;
}

/** Good under 150 ms and 2 % loss, fair under 400 ms and 10 %, poor beyond. */
export function rateQuality(rttMs: number, lossPercent: number): ConnectionQuality['level'] {
  if (rttMs < 150 && lossPercent < 2) return 'good';
  if (rttMs < 400 && lossPercent < 10) return 'fair';
  return 'poor';
}

/** The gate stays open this long after the level last crossed the threshold (no clipped word endings). */
const GATE_HOLD_MS = 300;

/** A key's name as people read it on the keyboard (`KeyT` → `T`, `Backquote` → `` ` ``). */
export function keyName(code: string): string {
  if (/^Key[A-Z]$/.test(code)) return code.slice(3);
  if (/^Digit\d$/.test(code)) return code.slice(5);
  const names: Record<string, string> = {
    Backquote: '`',
    Minus: '-',
    Equal: '=',
    BracketLeft: '[',
    BracketRight: ']',
    Backslash: '\\',
    Semicolon: ';',
    Quote: "'",
    Comma: ',',
    Period: '.',
    Slash: '/',
  };
  return names[code] ?? code;
}

/** Keys typed into a text field are text, not push-to-talk. */
function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  return target instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit'].includes(target.type);
}

/**
 * One voice call of this tab: op 4 on the gateway, then the SFU's signalling socket from VOICE_SERVER_UPDATE and an
 * RTCPeerConnection that answers the server's offers (docs/voice.md). The microphone goes out on the first upstream
 * slot, camera and screen on the second and third.
 */
export class VoiceConnection {
  readonly remote = new Map<string, RemoteMedia>();
  readonly speaking = new Set<string>();
  state: 'connecting' | 'connected' | 'closed' = 'connecting';
  /** Why the call ended, when the SFU ended it because the media never connected (`closed {reason: "failed"}`). */
  endReason: 'media-failed' | undefined;
  /** Our session was moved to another channel and the new room's VOICE_SERVER_UPDATE has not come yet. */
  private moving = false;
  selfMute = false;
  selfDeaf = false;
  /** Push-to-talk: the key is held (the microphone track is enabled only then). */
  talking = false;
  camera: MediaStreamTrack | null = null;
  screen: MediaStreamTrack | null = null;
  /** Input sensitivity: the level is above the threshold (or was, within GATE_HOLD_MS). */
  gateOpen = true;
  /** The microphone's current level in dBFS (voice activity with a manual threshold only). */
  inputLevelDb = -100;
  quality: ConnectionQuality | null = null;
  onChange: () => void = () => {};
  private pc: RTCPeerConnection | undefined;
  private ws: WebSocket | undefined;
  private mic: MediaStream | undefined;
  private readonly midOwners = new Map<string, { userId: string; kind: Kind }>();
  private readonly upstream = new Map<Kind, RTCRtpTransceiver>();
  private stopHub: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private meter: { context: AudioContext; probe: MediaStreamTrack; timer: number; lastLoud: number } | undefined;
  private qualityTimer: number | undefined;
  private lastLoss: { lost: number; expected: number } | undefined;

  constructor(
    private readonly hub: GatewayHub,
    /** null for a DM or group-DM call. */
    readonly guildId: string | null,
    /** Changes when a moderator (or the AFK timeout) moves this session to another channel. */
    public channelId: string,
    private settings: VoiceSettings,
    /** False without USE_VAD in the channel: push-to-talk whatever the setting says (Discord's rule). */
    private readonly vadAllowed = true,
  ) {}

  /** Push-to-talk is on: the setting, or a channel where voice activity is not allowed. */
  get pushToTalk(): boolean {
    return this.settings.inputMode === 'pushToTalk' || !this.vadAllowed;
  }

  get pushToTalkKey(): string {
    return this.settings.pushToTalkKey;
  }

  private readonly onKeyDown = (event: KeyboardEvent) => {
    if (!this.pushToTalk || event.code !== this.settings.pushToTalkKey || isTextEntry(event.target)) return;
    if (!this.talking) this.setTalking(true);
  };
  private readonly onKeyUp = (event: KeyboardEvent) => {
    if (event.code === this.settings.pushToTalkKey && this.talking) this.setTalking(false);
  };
  /** A key released while the window was not focused never reaches us: stop talking when focus goes. */
  private readonly onBlur = () => {
    if (this.talking) this.setTalking(false);
  };

  async join(): Promise<void> {
    this.mic = await navigator.mediaDevices.getUserMedia({ audio: this.audioConstraints() });
    this.startMeter();
    this.applyMicrophone();
    this.qualityTimer = window.setInterval(() => void this.measureQuality(), 2000);
    this.stopHub = this.hub.subscribe((type, data) => {
      if (type === 'VOICE_SERVER_UPDATE') {
        const update = data as { token: string; guild_id?: string; channel_id?: string; endpoint: string };
        const ours = this.guildId === null ? update.channel_id === this.channelId : update.guild_id === this.guildId;
        if (ours) this.connect(update.endpoint, update.token);
      } else if (type === 'VOICE_STATE_UPDATE') this.followMove(data as MovedState);
    });
    window.addEventListener('keydown', this.onKeyDown);
    window.addEventListener('keyup', this.onKeyUp);
    window.addEventListener('blur', this.onBlur);
    this.sendState();
  }

  /** Our own session moved to another channel of the guild (a moderator, the AFK timeout): follow it. */
  private followMove(state: MovedState): void {
    const session = (this.hub.ready as { session_id?: string } | null)?.session_id;
    if (!session || state.session_id !== session || (state.guild_id ?? null) !== this.guildId) return;
    if (state.channel_id && state.channel_id !== this.channelId) {
      this.channelId = state.channel_id;
      this.moving = true;
      this.onChange();
    }
  }

  /** Push-to-talk key held or released. */
  setTalking(talking: boolean): void {
    this.talking = talking;
    this.applyMicrophone();
    this.onChange();
  }

  /** Input mode and push-to-talk key (no new microphone needed). */
  setMode(settings: VoiceSettings): void {
    this.settings = settings;
    if (!this.pushToTalk) this.talking = false;
    this.startMeter();
    this.applyMicrophone();
    this.onChange();
  }

  leave(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.hub.send(4, { guild_id: this.guildId, channel_id: null, self_mute: false, self_deaf: false });
    this.teardown();
    this.onChange();
  }

  setMute(mute: boolean): void {
    this.selfMute = mute;
    this.applyMicrophone();
    this.sendState();
    this.onChange();
  }

  setDeaf(deaf: boolean): void {
    this.selfDeaf = deaf;
    this.applyMicrophone();
    this.sendState();
    this.onChange();
  }

  /**
   * Muted (or deafened) sends no packets at all, not silence: the microphone leaves the sender. With push-to-talk
   * the track stays on the sender but is disabled (silence) while the key is up.
   */
  private applyMicrophone(): void {
    const silent = this.selfMute || this.selfDeaf;
    const track = this.mic?.getAudioTracks()[0] ?? null;
    if (track) track.enabled = this.pushToTalk ? this.talking : this.gateOpen || this.settings.sensitivityAuto;
    void this.upstream
      .get('audio')
      ?.sender.replaceTrack(silent ? null : track)
      .catch(() => {});
  }

  async setInput(settings: VoiceSettings): Promise<void> {
    this.settings = settings;
    const next = await navigator.mediaDevices.getUserMedia({ audio: this.audioConstraints() });
    for (const old of this.mic?.getTracks() ?? []) old.stop();
    this.mic = next;
    this.startMeter(true);
    this.applyMicrophone();
    this.onChange();
  }

  async toggleCamera(): Promise<void> {
    if (this.camera) {
      this.camera.stop();
      this.camera = null;
    } else {
      const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 360 } });
      this.camera = stream.getVideoTracks()[0] ?? null;
    }
    await this.upstream.get('camera')?.sender.replaceTrack(this.camera);
    this.sendState();
    this.onChange();
  }

  async toggleScreen(): Promise<void> {
    if (this.screen) {
      this.screen.stop();
      this.screen = null;
    } else {
      const stream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
      this.screen = stream.getVideoTracks()[0] ?? null;
      this.screen?.addEventListener('ended', () => {
        if (this.screen) void this.toggleScreen();
      });
    }
    await this.upstream.get('screen')?.sender.replaceTrack(this.screen);
    this.sendState();
    this.onChange();
  }

  /** For tests and the connection-quality hint. */
  stats(): Promise<RTCStatsReport> | undefined {
    return this.pc?.getStats();
  }

  /**
   * Input sensitivity: with a manual threshold in voice activity, an analyser on the microphone reads its level
   * every 50 ms and the track is enabled only while the level is above the threshold (plus GATE_HOLD_MS).
   */
  private startMeter(newTrack = false): void {
    const track = this.mic?.getAudioTracks()[0];
    if (!track || this.pushToTalk || this.settings.sensitivityAuto || typeof AudioContext === 'undefined') {
      this.stopMeter();
      this.gateOpen = true;
      return;
    }
    // Already metering this microphone: the threshold is read on each tick.
    if (this.meter && !newTrack) return;
    this.stopMeter();
    const context = new AudioContext();
    void context.resume().catch(() => {});
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    // The analyser measures the microphone before `enabled` silences it: a clone keeps reading while the gate is shut.
    const probe = track.clone();
    probe.enabled = true;
    context.createMediaStreamSource(new MediaStream([probe])).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    this.gateOpen = false;
    const meter = { context, probe, timer: 0, lastLoud: 0 };
    meter.timer = window.setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      const rms = Math.sqrt(sum / samples.length);
      this.inputLevelDb = Math.max(-100, rms > 0 ? 20 * Math.log10(rms) : -100);
      const now = performance.now();
      if (this.inputLevelDb > this.settings.sensitivityDb) meter.lastLoud = now;
      const open = meter.lastLoud > 0 && now - meter.lastLoud < GATE_HOLD_MS;
      if (open !== this.gateOpen) {
        this.gateOpen = open;
        this.applyMicrophone();
        this.onChange();
      }
    }, 50);
    this.meter = meter;
  }

  private stopMeter(): void {
    if (!this.meter) return;
    window.clearInterval(this.meter.timer);
    this.meter.probe.stop();
    void this.meter.context.close().catch(() => {});
    this.meter = undefined;
  }

  /**
   * Connection quality every 2 s: the selected candidate pair's `currentRoundTripTime`, and the packets lost since
   * the last reading over inbound audio (`packetsLost`/`packetsReceived`) and outbound audio as the SFU reports it
   * (`remote-inbound-rtp`).
   */
  private async measureQuality(): Promise<void> {
    const report = await this.pc?.getStats().catch(() => undefined);
    if (!report) return;
    let rtt: number | undefined;
    let lost = 0;
    let expected = 0;
    report.forEach((s: Record<string, unknown>) => {
      if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') {
        if (typeof s.currentRoundTripTime === 'number') rtt = s.currentRoundTripTime * 1000;
      } else if (s.kind !== 'audio') return;
      const packetsLost = Math.max(0, Number(s.packetsLost ?? 0));
      if (s.type === 'inbound-rtp') {
        lost += packetsLost;
        expected += packetsLost + Number(s.packetsReceived ?? 0);
      } else if (s.type === 'remote-inbound-rtp') lost += packetsLost;
      else if (s.type === 'outbound-rtp') expected += Number(s.packetsSent ?? 0);
    });
    if (rtt === undefined) return;
    const previous = this.lastLoss ?? { lost: 0, expected: 0 };
    this.lastLoss = { lost, expected };
    const span = expected - previous.expected;
    const lossPercent = span > 0 ? (Math.max(0, lost - previous.lost) / span) * 100 : 0;
    const rttMs = Math.round(rtt);
    this.quality = { level: rateQuality(rttMs, lossPercent), rttMs, lossPercent: Math.round(lossPercent * 10) / 10 };
    this.onChange();
  }

  private audioConstraints(): MediaTrackConstraints {
    return {
      ...(this.settings.inputDeviceId ? { deviceId: { exact: this.settings.inputDeviceId } } : {}),
      echoCancellation: this.settings.echoCancellation,
      noiseSuppression: this.settings.noiseSuppression,
      autoGainControl: true,
    };
  }

  private sendState(): void {
    if (this.state === 'closed') return;
    this.hub.send(4, {
      guild_id: this.guildId,
      channel_id: this.channelId,
      self_mute: this.selfMute || this.selfDeaf,
      self_deaf: this.selfDeaf,
      self_video: this.camera !== null,
      self_stream: this.screen !== null,
    });
  }

  private connect(endpoint: string, token: string): void {
    this.closeMedia();
    this.moving = false;
    const ws = new WebSocket(endpoint);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ op: 'identify', d: { token } }));
    ws.onclose = () => {
      if (this.ws !== ws || this.state === 'closed') return;
      // A move closes the old room's socket, and the new room's VOICE_SERVER_UPDATE (on the gateway) may arrive
      // just before or just after that close: the call ends only if no new room came within a moment
      // (docs/web.md#voice).
      window.setTimeout(
        () => {
          if (this.ws !== ws || this.state === 'closed') return;
          this.state = 'closed';
          this.teardown();
          this.onChange();
        },
        this.moving ? MOVE_WAIT_MS : CLOSE_GRACE_MS,
      );
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { op: string; d: Record<string, unknown> };
      if (message.op === 'ready') {
        // In a room now: a move announced before or after this connection is complete.
        this.moving = false;
        this.startPeer((message.d.ice_servers as RTCIceServer[] | undefined) ?? []);
      } else if (message.op === 'offer')
        this.chain = this.chain.then(() => this.answer(message.d as unknown as OfferPayload)).catch(() => {});
      // The SFU gave up on this member's media and took them out of the channel (docs/voice.md#join-admission):
      // the person is told why (VoiceView) when the socket closes next.
      else if (message.op === 'closed' && message.d.reason === 'failed') this.endReason = 'media-failed';
      else if (message.op === 'speaking') {
        const userId = String(message.d.user_id);
        if (message.d.speaking) this.speaking.add(userId);
        else this.speaking.delete(userId);
        this.onChange();
      }
    };
  }

  private startPeer(iceServers: RTCIceServer[]): void {
    const pc = new RTCPeerConnection({ iceServers, bundlePolicy: 'max-bundle' });
    this.pc = pc;
    pc.onicecandidate = (event) => {
      if (event.candidate && this.ws?.readyState === WebSocket.OPEN)
        this.ws.send(JSON.stringify({ op: 'candidate', d: event.candidate.toJSON() }));
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'connected') this.state = 'connected';
      this.onChange();
    };
    pc.ontrack = (event) => {
      const mid = event.transceiver.mid;
      const owner = mid ? this.midOwners.get(mid) : undefined;
      if (!mid || !owner) return;
      this.remote.set(mid, { userId: owner.userId, kind: owner.kind, stream: new MediaStream([event.track]) });
      this.onChange();
    };
  }

  private async answer(offer: OfferPayload): Promise<void> {
    const pc = this.pc;
    if (!pc) return;
    for (const track of offer.tracks)
      if (track.mid) {
        const previous = this.midOwners.get(track.mid);
        this.midOwners.set(track.mid, { userId: track.user_id, kind: track.kind });
        const media = this.remote.get(track.mid);
        if (media && previous?.userId !== track.user_id) media.userId = track.user_id;
      }
    await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    for (const { mid, kind } of offer.upstream) {
      if (this.upstream.has(kind)) continue;
      const transceiver = pc.getTransceivers().find((t) => t.mid === mid);
      if (!transceiver) continue;
      transceiver.direction = 'sendonly';
      if (kind !== 'audio') this.preferVideoCodec(transceiver);
      this.upstream.set(kind, transceiver);
      const track =
        kind === 'audio' ? (this.mic?.getAudioTracks()[0] ?? null) : kind === 'camera' ? this.camera : this.screen;
      await transceiver.sender.replaceTrack(track);
    }
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    this.ws?.send(JSON.stringify({ op: 'answer', d: { sdp: pc.localDescription?.sdp ?? answer.sdp } }));
    await this.layerCamera();
    this.onChange();
  }

  /**
   * A new video codec, applied at once: the camera and screen senders switch to it among the codecs their slots
   * negotiated (`encodings[].codec`), and the next answers list it first.
   */
  async setVideoCodec(settings: VoiceSettings): Promise<void> {
    this.settings = settings;
    const wanted = `video/${settings.videoCodec.toLowerCase()}`;
    for (const kind of ['camera', 'screen'] as const) {
      const transceiver = this.upstream.get(kind);
      if (!transceiver) continue;
      this.preferVideoCodec(transceiver);
      const parameters = transceiver.sender.getParameters();
      const codec = parameters.codecs.find((c) => c.mimeType.toLowerCase() === wanted);
      if (!codec) continue;
      for (const encoding of parameters.encodings as (RTCRtpEncodingParameters & { codec?: RTCRtpCodec })[])
        encoding.codec = codec;
      await transceiver.sender.setParameters(parameters).catch(() => {});
    }
    await this.layerCamera();
    this.onChange();
  }

  /**
   * A VP8 camera goes out in three temporal layers (`L1T3`), so the SFU can send a subscriber with little bandwidth
   * fewer frames rather than more than it can take (docs/voice.md#layer-selection). Its own setParameters call:
   * a browser that refuses the mode keeps sending one layer, and the codec set before stays.
   */
  private async layerCamera(): Promise<void> {
    const sender = this.upstream.get('camera')?.sender;
    if (!sender) return;
    const parameters = sender.getParameters();
    const mode = this.settings.videoCodec === 'VP8' ? 'L1T3' : 'L1T1';
    const encodings = parameters.encodings as (RTCRtpEncodingParameters & { scalabilityMode?: string })[];
    if (encodings.length === 0 || encodings.every((e) => e.scalabilityMode === mode)) return;
    for (const encoding of encodings) encoding.scalabilityMode = mode;
    await sender.setParameters(parameters).catch(() => {});
  }

  /** Camera and screen are answered with the chosen codec first (docs/voice.md#codecs). */
  private preferVideoCodec(transceiver: RTCRtpTransceiver): void {
    const preferences = videoPreferences(this.settings.videoCodec);
    if (!preferences || typeof transceiver.setCodecPreferences !== 'function') return;
    try {
      transceiver.setCodecPreferences(preferences);
    } catch {
      // A browser that refuses the list keeps its default order (VP8 first, as offered).
    }
  }

  private closeMedia(): void {
    if (this.ws) {
      const ws = this.ws;
      this.ws = undefined;
      ws.close();
    }
    this.pc?.close();
    this.pc = undefined;
    this.quality = null;
    this.lastLoss = undefined;
    this.remote.clear();
    this.midOwners.clear();
    this.upstream.clear();
    this.speaking.clear();
  }

  private teardown(): void {
    this.stopHub?.();
    window.removeEventListener('keydown', this.onKeyDown);
    window.removeEventListener('keyup', this.onKeyUp);
    window.removeEventListener('blur', this.onBlur);
    window.clearInterval(this.qualityTimer);
    this.stopMeter();
    this.closeMedia();
    for (const track of this.mic?.getTracks() ?? []) track.stop();
    this.camera?.stop();
    this.screen?.stop();
    this.camera = null;
    this.screen = null;
  }
}
