import WebSocket from 'ws';
import { startDtlsAtOnce } from '../test/support/dtls-at-once.ts';
import { VoiceTestClient } from '../test/support/voice-client.ts';

/**
 * One member of the voice bench, as light as a client can be: a Gateway session that only identifies, heartbeats
 * (a session that never does is closed after 45 s, which ends its voice state and so its SFU connection) and waits
 * for its VOICE_SERVER_UPDATE, parsing no other dispatch; then a werift voice client (receive-only for listeners).
 * Every step of the join is timed from op 4 (docs/performance.md#voice).
 */

export const now = () => performance.timeOrigin + performance.now();

/** Milliseconds from op 4 to each step of a join (undefined: never reached). */
export interface JoinPhases {
  voiceServerUpdate?: number;
  signallingOpen?: number;
  offer?: number;
  answerSent?: number;
  iceConnected?: number;
  connected?: number;
  firstAudio?: number;
}

export const PHASES: (keyof JoinPhases)[] = [
  'voiceServerUpdate',
  'signallingOpen',
  'offer',
  'answerSent',
  'iceConnected',
  'connected',
  'firstAudio',
];

export interface Closure {
  socket: 'gateway' | 'voice';
  code: number;
  reason: string;
  /** Milliseconds after op 4. */
  afterMs: number;
}

export interface BenchTarget {
  url: string;
  port: number;
  guildId: string;
  channelId: string;
}

export class BenchMember {
  readonly phases: JoinPhases = {};
  voice: VoiceTestClient | undefined;
  onClose: ((closure: Closure) => void) | undefined;
  private gw: WebSocket | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private seq: number | null = null;
  private opAt = 0;
  private closing = false;

  constructor(
    private readonly target: BenchTarget,
    private readonly token: string,
    private readonly publish: boolean,
  ) {}

  private ready: Promise<void> | undefined;
  private serverUpdate: ((update: { token: string; endpoint: string }) => void) | undefined;
  private gatewayFailed: ((error: Error) => void) | undefined;

  /**
   * Gateway identify → READY: the member is online, as a person is before they choose a voice channel. The bench
   * brings members online before their join wave (docs/performance.md#voice), so a wave times op 4 onwards only.
   */
  online(timeoutMs = 20_000): Promise<void> {
    if (this.ready) return this.ready;
    const ws = new WebSocket(`ws://127.0.0.1:${this.target.port}/gateway?v=1&encoding=json`);
    this.gw = ws;
    ws.on('error', () => {});
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no READY')), timeoutMs);
      ws.on('close', (code, reason) => {
        clearTimeout(timer);
        const error = new Error(`gateway closed ${code}`);
        reject(error);
        this.gatewayFailed?.(error);
        if (!this.closing)
          this.onClose?.({ socket: 'gateway', code, reason: reason.toString(), afterMs: now() - this.opAt });
      });
      ws.on('message', (data) => {
        const text = data.toString();
        const s = /"s":(\d+)/.exec(text);
        if (s) this.seq = Number(s[1]);
        // Only the frames this client acts on are parsed; guild dispatches (hundreds in a join wave) are not.
        if (text.startsWith('{"op":10')) {
          const interval = (JSON.parse(text) as { d: { heartbeat_interval: number } }).d.heartbeat_interval;
          this.heartbeat = setInterval(() => this.send({ op: 1, d: this.seq }), interval * 0.8);
          this.heartbeat.unref();
          this.send({
            op: 2,
            d: { token: this.token, properties: { os: 'linux', browser: 'bench', device: 'bench' } },
          });
        } else if (text.startsWith('{"op":1,')) this.send({ op: 1, d: this.seq });
        else if (text.includes('"t":"READY"')) {
          clearTimeout(timer);
          resolve();
        } else if (text.includes('"t":"VOICE_SERVER_UPDATE"'))
          this.serverUpdate?.((JSON.parse(text) as { d: { token: string; endpoint: string } }).d);
      });
    });
    return this.ready;
  }

  /** (Online first if not yet) op 4 → VOICE_SERVER_UPDATE → signalling → first answer sent. */
  async join(timeoutMs = 20_000): Promise<void> {
    const { url, guildId, channelId } = this.target;
    await this.online(timeoutMs);
    const update = new Promise<{ token: string; endpoint: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no VOICE_SERVER_UPDATE')), timeoutMs);
      this.serverUpdate = (update) => {
        clearTimeout(timer);
        resolve(update);
      };
      this.gatewayFailed = (error) => {
        clearTimeout(timer);
        reject(error);
      };
    });
    this.opAt = now();
    this.send({ op: 4, d: { guild_id: guildId, channel_id: channelId, self_mute: false, self_deaf: false } });
    const server = await update;
    this.mark('voiceServerUpdate');
    // The bench server listens on a random port, so its announced public URL is not where it is: keep the path.
    const endpoint = `${url.replace(/^http/, 'ws')}${new URL(server.endpoint).pathname}`;
    const voice = new VoiceTestClient(endpoint, server.token, { publish: this.publish });
    this.voice = voice;
    startDtlsAtOnce(voice.pc);
    voice.ws.once('open', () => this.mark('signallingOpen'));
    voice.ws.on('message', (data) => {
      if (this.phases.offer === undefined && data.toString().startsWith('{"op":"offer"')) this.mark('offer');
    });
    voice.ws.on('close', (code, reason) => {
      if (!this.closing)
        this.onClose?.({ socket: 'voice', code, reason: reason.toString(), afterMs: now() - this.opAt });
    });
    voice.pc.iceConnectionStateChange.subscribe((state) => {
      if (state === 'connected') this.mark('iceConnected');
    });
    voice.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') this.mark('connected');
      // A publishing member's connection failing is what empties a step's window: say when it happened.
      else if (this.publish && !this.closing)
        console.error(`speaker connection ${state} at ${new Date().toISOString()}`);
    });
    voice.onFirstPacket = () => this.mark('firstAudio');
    await voice.negotiations(1);
    this.mark('answerSent');
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    await this.voice?.close().catch(() => {});
    if (this.gw?.readyState === WebSocket.OPEN) this.gw.close(1000);
  }

  private mark(phase: keyof JoinPhases): void {
    if (this.phases[phase] === undefined) this.phases[phase] = now() - this.opAt;
  }

  private send(frame: unknown): void {
    if (this.gw?.readyState === WebSocket.OPEN) this.gw.send(JSON.stringify(frame));
  }
}
