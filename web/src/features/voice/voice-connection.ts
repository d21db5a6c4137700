import type { GatewayHub } from '../../gateway/hub.ts';

type Kind = 'audio' | 'camera' | 'screen';

interface OfferPayload {
  sdp: string;
  upstream: { mid: string; kind: Kind }[];
  tracks: { mid: string | null; user_id: string; kind: Kind }[];
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
  selfMute = false;
  selfDeaf = false;
  camera: MediaStreamTrack | null = null;
  screen: MediaStreamTrack | null = null;
  onChange: () => void = () => {};
  private pc: RTCPeerConnection | undefined;
  private ws: WebSocket | undefined;
  private mic: MediaStream | undefined;
  private readonly midOwners = new Map<string, { userId: string; kind: Kind }>();
  private readonly upstream = new Map<Kind, RTCRtpTransceiver>();
  private stopHub: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly hub: GatewayHub,
    readonly guildId: string,
    readonly channelId: string,
    private settings: VoiceSettings,
  ) {}

  async join(): Promise<void> {
    this.mic = await navigator.mediaDevices.getUserMedia({ audio: this.audioConstraints() });
    this.stopHub = this.hub.subscribe((type, data) => {
      if (type === 'VOICE_SERVER_UPDATE') {
        const update = data as { token: string; guild_id: string; endpoint: string };
        if (update.guild_id === this.guildId) this.connect(update.endpoint, update.token);
      }
    });
    this.sendState();
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

  /** Muted (or deafened) sends no packets at all, not silence: the microphone leaves the sender. */
  private applyMicrophone(): void {
    const silent = this.selfMute || this.selfDeaf;
    const track = this.mic?.getAudioTracks()[0] ?? null;
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
    const ws = new WebSocket(endpoint);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ op: 'identify', d: { token } }));
    ws.onclose = () => {
      if (this.ws !== ws || this.state === 'closed') return;
      this.state = 'closed';
      this.teardown();
      this.onChange();
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { op: string; d: Record<string, unknown> };
      if (message.op === 'ready') this.startPeer((message.d.ice_servers as RTCIceServer[] | undefined) ?? []);
      else if (message.op === 'offer')
        this.chain = this.chain.then(() => this.answer(message.d as unknown as OfferPayload)).catch(() => {});
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
      this.upstream.set(kind, transceiver);
      const track =
        kind === 'audio' ? (this.mic?.getAudioTracks()[0] ?? null) : kind === 'camera' ? this.camera : this.screen;
      await transceiver.sender.replaceTrack(track);
    }
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    this.ws?.send(JSON.stringify({ op: 'answer', d: { sdp: pc.localDescription?.sdp ?? answer.sdp } }));
    this.onChange();
  }

  private closeMedia(): void {
    if (this.ws) {
      const ws = this.ws;
      this.ws = undefined;
      ws.close();
    }
    this.pc?.close();
    this.pc = undefined;
    this.remote.clear();
    this.midOwners.clear();
    this.upstream.clear();
    this.speaking.clear();
  }

  private teardown(): void {
    this.stopHub?.();
    this.closeMedia();
    for (const track of this.mic?.getTracks() ?? []) track.stop();
    this.camera?.stop();
    this.screen?.stop();
    this.camera = null;
    this.screen = null;
  }
}
