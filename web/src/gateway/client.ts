/**
 * The gateway connection (docs/gateway.md): Hello → Identify → heartbeats, Resume after a drop, and a callback
 * when the server ends the session (op 9, close 4004) so the client signs out at once. Heartbeats expect
 * their ACK (a dead socket is dropped and resumed), and the browser's `online` event probes at once. This
 * class only delivers events; `hub.ts` fans them out to the features.
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
  /** The socket went down or came back (`false` while reconnecting). */
  onConnectionChange?: (connected: boolean) => void;
}

/** How long a heartbeat may wait for its ACK before the socket is taken for dead (a "zombie" connection). */
const ACK_TIMEOUT_MS = 4000;

const FATAL_CLOSES = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

export class GatewayClient {
  private socket: WebSocket | undefined;
  private heartbeat: number | undefined;
  private seq: number | null = null;
  private sessionId: string | undefined;
  private resumeUrl: string | undefined;
  private backoffMs = 1000;
  private stopped = false;
  private awaitingAck: number | undefined;
  private retry: number | undefined;
  private readonly onOnline = () => this.probe();

  constructor(private readonly options: GatewayOptions) {}

  start(): void {
    this.stopped = false;
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOnline);
    this.connect(false);
  }

  stop(): void {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOnline);
    window.clearInterval(this.heartbeat);
    window.clearTimeout(this.awaitingAck);
    window.clearTimeout(this.retry);
    this.socket?.close(1000);
    this.socket = undefined;
  }

  /**
   * The browser says the network went away or came back: the socket may be dead without knowing it, so
   * heartbeat now and drop it if no ACK comes; a reconnect waiting out its backoff starts at once.
   */
  probe(): void {
    if (this.stopped) return;
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.beat();
      return;
    }
    if (this.retry !== undefined) {
      window.clearTimeout(this.retry);
      this.retry = undefined;
      this.backoffMs = 1000;
      this.connect(this.sessionId !== undefined);
    }
  }

  private beat(): void {
    this.send({ op: 1, d: this.seq });
    if (this.awaitingAck !== undefined) return;
    const socket = this.socket;
    this.awaitingAck = window.setTimeout(() => {
      this.awaitingAck = undefined;
      // No ACK: close it ourselves (4000 keeps the session resumable) and reconnect.
      if (socket && socket === this.socket) this.drop(socket);
    }, ACK_TIMEOUT_MS);
  }

  private drop(socket: WebSocket): void {
    socket.onclose = null;
    socket.onmessage = null;
    try {
      socket.close(4000);
    } catch {
      // already closing
    }
    this.closed(socket, 4000);
  }

  private closed(socket: WebSocket, code: number): void {
    window.clearInterval(this.heartbeat);
    window.clearTimeout(this.awaitingAck);
    this.awaitingAck = undefined;
    if (this.stopped || socket !== this.socket) return;
    this.options.onConnectionChange?.(false);
    if (FATAL_CLOSES.has(code)) {
      this.options.onInvalidSession?.();
      return;
    }
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
    this.retry = window.setTimeout(
      () => {
        this.retry = undefined;
        this.connect(this.sessionId !== undefined);
      },
      delay + Math.random() * 500,
    );
  }

  private connect(resume: boolean): void {
    const base = resume && this.resumeUrl ? this.resumeUrl : this.options.url;
    const socket = new WebSocket(`${base}?v=1&encoding=json`);
    this.socket = socket;
    socket.onmessage = (event) => this.receive(JSON.parse(String(event.data)) as Frame, resume);
    socket.onclose = (event) => this.closed(socket, event.code);
  }

  /** A frame from a feature (op 4 voice state); dropped while the socket is down, like a user action offline. */
  sendOp(op: number, d: unknown): void {
    this.send({ op, d });
  }

  private send(frame: Frame): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private identify(): void {
    const properties = { os: navigator.platform || 'web', browser: 'Hearth Web', device: '' };
    // 250, Discord's highest: guilds up to 250 members come with their presences and send them all; a larger
    // one's are followed with op 14 for the guild on screen (docs/gateway.md#large-guilds).
    this.send({ op: 2, d: { token: this.options.token, properties, large_threshold: 250 } });
  }

  private receive(frame: Frame, resuming: boolean): void {
    if (typeof frame.s === 'number') this.seq = frame.s;
    switch (frame.op) {
      case 10: {
        const interval = (frame.d as { heartbeat_interval: number }).heartbeat_interval;
        window.clearInterval(this.heartbeat);
        this.heartbeat = window.setInterval(() => this.beat(), interval);
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
      case 11:
        window.clearTimeout(this.awaitingAck);
        this.awaitingAck = undefined;
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
        if (frame.t === 'READY' || frame.t === 'RESUMED') this.options.onConnectionChange?.(true);
        if (frame.t) this.options.onDispatch?.(frame.t, frame.d);
        return;
      }
      default:
        return;
    }
  }
}
