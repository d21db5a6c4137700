/**
 * The gateway connection (api.md §6): Hello → Identify → heartbeats, Resume after a drop, and a callback
 * when the server ends the session (op 9, close 4004) so the client signs out at once. Part 2 adds the
 * dispatch consumers (chat state); this class only delivers events.
 */

export type DispatchHandler = (type: string, data: unknown) => void;

interface Frame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

export interface GatewayOptions {
  url: string;
  token: string;
  onDispatch?: DispatchHandler;
  /** The session is gone (revoked, disabled, signed out elsewhere): the client must sign out. */
  onInvalidSession?: () => void;
}

const FATAL_CLOSES = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

export class GatewayClient {
  private socket: WebSocket | undefined;
  private heartbeat: number | undefined;
  private seq: number | null = null;
  private sessionId: string | undefined;
  private resumeUrl: string | undefined;
  private backoffMs = 1000;
  private stopped = false;

  constructor(private readonly options: GatewayOptions) {}

  start(): void {
    this.stopped = false;
    this.connect(false);
  }

  stop(): void {
    this.stopped = true;
    window.clearInterval(this.heartbeat);
    this.socket?.close(1000);
    this.socket = undefined;
  }

  private connect(resume: boolean): void {
    const base = resume && this.resumeUrl ? this.resumeUrl : this.options.url;
    const socket = new WebSocket(`${base}?v=1&encoding=json`);
    this.socket = socket;
    socket.onmessage = (event) => this.receive(JSON.parse(String(event.data)) as Frame, resume);
    socket.onclose = (event) => {
      window.clearInterval(this.heartbeat);
      if (this.stopped || socket !== this.socket) return;
      if (FATAL_CLOSES.has(event.code)) {
        this.options.onInvalidSession?.();
        return;
      }
      const delay = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
      window.setTimeout(() => this.connect(this.sessionId !== undefined), delay + Math.random() * 500);
    };
  }

  private send(frame: Frame): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private identify(): void {
    const properties = { os: navigator.platform || 'web', browser: 'Hearth Web', device: '' };
    this.send({ op: 2, d: { token: this.options.token, properties } });
  }

  private receive(frame: Frame, resuming: boolean): void {
    if (typeof frame.s === 'number') this.seq = frame.s;
    switch (frame.op) {
      case 10: {
        const interval = (frame.d as { heartbeat_interval: number }).heartbeat_interval;
        window.clearInterval(this.heartbeat);
        this.heartbeat = window.setInterval(() => this.send({ op: 1, d: this.seq }), interval);
        if (resuming && this.sessionId) {
          this.send({ op: 6, d: { token: this.options.token, session_id: this.sessionId, seq: this.seq ?? 0 } });
        } else {
          this.identify();
        }
        return;
      }
      case 1:
        this.send({ op: 1, d: this.seq });
        return;
      case 7:
        this.socket?.close(4000);
        return;
      case 9:
        // The session cannot be resumed; with a revoked token the close that follows is 4004.
        this.sessionId = undefined;
        this.seq = null;
        window.setTimeout(() => {
          if (this.socket?.readyState === WebSocket.OPEN) this.identify();
        }, 1500);
        return;
      case 0: {
        this.backoffMs = 1000;
        if (frame.t === 'READY') {
          const ready = frame.d as { session_id: string; resume_gateway_url?: string };
          this.sessionId = ready.session_id;
          this.resumeUrl = ready.resume_gateway_url;
        }
        if (frame.t) this.options.onDispatch?.(frame.t, frame.d);
        return;
      }
      default:
        return;
    }
  }
}
