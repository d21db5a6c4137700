import WebSocket from 'ws';
import type { VoiceStateRequest } from '../domains/voice/voice-service.ts';
import {
  CLOSE,
  type CloseReason,
  FRAMES,
  type GuildSubscriptionPayload,
  type IdentifyPayload,
  MAX_INBOUND_BYTES,
  OP,
  type PresencePayload,
  parseFrame,
  parseGuildSubscription,
  parseIdentify,
  parsePresence,
  parseRequestMembers,
  parseResume,
  type RequestMembersPayload,
  type ResumePayload,
} from './protocol.ts';
import type { GatewaySession, SessionSocket } from './sessions.ts';
import { parseVoiceStateUpdate } from './voice-protocol.ts';

/** What a connection asks of the gateway once a frame is valid; the connection itself only does I/O and state. */
export interface ConnectionHandlers {
  identify(connection: Connection, payload: IdentifyPayload): Promise<void>;
  resume(connection: Connection, payload: ResumePayload): Promise<void>;
  presence(connection: Connection, payload: PresencePayload): void;
  requestMembers(connection: Connection, payload: RequestMembersPayload): Promise<void>;
  voiceState(connection: Connection, payload: VoiceStateRequest): void;
  guildSubscription(connection: Connection, payload: GuildSubscriptionPayload): void;
  /** `code` is the peer's close code (1005/1006 when none). */
  closed(connection: Connection, code: number): void;
}

export interface HeartbeatTimings {
  /** Silence after which the server asks for a heartbeat (op 1). */
  heartbeatRequestMs: number;
  /** Silence after which the connection is a zombie (close 4009). */
  zombieTimeoutMs: number;
}

type State = 'open' | 'authenticating' | 'ready' | 'closed';

/** Discord's allowance: 120 inbound frames per minute; beyond it the socket closes 4008. */
const FRAME_BUDGET = 120;
const FRAME_WINDOW_MS = 60_000;
/** A reader this far behind is not going to catch up; dropping it protects the process. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/**
 * One socket's state machine: Hello → Identify/Resume → Ready → closed. It validates frames, enforces the
 * inbound limits and the heartbeat, and hands authenticated work to the handlers.
 */
export class Connection implements SessionSocket {
  private state: State = 'open';
  session: GatewaySession | undefined;
  private lastFrameAt: number;
  private heartbeatRequested = false;
  private windowStart: number;
  private framesInWindow = 0;

  constructor(
    private readonly ws: WebSocket,
    readonly ip: string,
    readonly ipKey: string,
    /** The upgrade's strictness: in test mode a 4004 counts towards an IP ban only with `X-Test-Strict: true`. */
    readonly strict: boolean,
    private readonly handlers: ConnectionHandlers,
    private readonly monotonicNow: () => number,
  ) {
    this.lastFrameAt = monotonicNow();
    this.windowStart = this.lastFrameAt;
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', (code) => this.onClose(code));
    ws.on('error', () => {
      // A broken socket also emits 'close', which does the clean-up.
    });
  }

  get isOpen(): boolean {
    return this.state !== 'closed';
  }

  hello(heartbeatIntervalMs: number): void {
    this.send(FRAMES.hello(heartbeatIntervalMs));
  }

  send(frame: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.state = 'closed';
      this.ws.terminate();
      return;
    }
    this.ws.send(frame);
  }

  /** Closes with a gateway close code; `before` (op 9, op 7) is written first. */
  closeWith(code: number, reason: string, before?: string): void {
    if (this.state === 'closed') return;
    if (before) this.send(before);
    this.state = 'closed';
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)
      this.ws.close(code, reason);
  }

  fail(reason: CloseReason, before?: string): void {
    this.closeWith(reason.code, reason.reason, before);
  }

  terminate(): void {
    this.state = 'closed';
    this.ws.terminate();
  }

  /** Identify or resume succeeded: the session now owns this socket. */
  becameReady(session: GatewaySession): void {
    this.session = session;
    if (this.state === 'authenticating') this.state = 'ready';
  }

  /** A resume ended in op 9: the client may identify on the same socket. */
  backToUnauthenticated(): void {
    if (this.state === 'authenticating') this.state = 'open';
  }

  /** Called by the gateway's sweep; cheaper than one timer per socket. */
  checkHeartbeat(now: number, timings: HeartbeatTimings): void {
    if (this.state === 'closed') return;
    const silence = now - this.lastFrameAt;
    if (silence >= timings.zombieTimeoutMs) {
      this.fail(CLOSE.HEARTBEAT_TIMEOUT);
      return;
    }
    if (silence >= timings.heartbeatRequestMs && !this.heartbeatRequested) {
      this.heartbeatRequested = true;
      this.send(FRAMES.heartbeatRequest);
    }
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.state === 'closed') return;
    const refusal = this.accept(data, isBinary);
    if (refusal) this.fail(refusal);
  }

  /** Returns the close a frame earns, or nothing when it was handled. */
  private accept(data: Buffer, isBinary: boolean): CloseReason | undefined {
    const now = this.monotonicNow();
    this.lastFrameAt = now;
    this.heartbeatRequested = false;
    if (now - this.windowStart >= FRAME_WINDOW_MS) {
      this.windowStart = now;
      this.framesInWindow = 0;
    }
    if (++this.framesInWindow > FRAME_BUDGET) return CLOSE.RATE_LIMITED;
    if (data.length > MAX_INBOUND_BYTES) return CLOSE.PAYLOAD_TOO_LARGE;
    // No compression is negotiated, so a binary frame cannot be decoded.
    if (isBinary) return CLOSE.DECODE_FAILED;
    const frame = parseFrame(data.toString('utf8'));
    if (!frame) return CLOSE.DECODE_FAILED;
    return this.handle(frame.op, frame.d);
  }

  private handle(op: number, d: unknown): CloseReason | undefined {
    switch (op) {
      case OP.HEARTBEAT:
        if (typeof d === 'number' && Number.isInteger(d)) this.session?.acknowledge(d);
        this.send(FRAMES.heartbeatAck);
        return undefined;
      case OP.IDENTIFY: {
        if (this.state !== 'open') return CLOSE.ALREADY_AUTHENTICATED;
        const parsed = parseIdentify(d);
        if (!parsed.ok) return parsed.close;
        this.state = 'authenticating';
        this.run(this.handlers.identify(this, parsed.value));
        return undefined;
      }
      case OP.RESUME: {
        if (this.state !== 'open') return CLOSE.ALREADY_AUTHENTICATED;
        const parsed = parseResume(d);
        if (!parsed) return CLOSE.INVALID_RESUME;
        this.state = 'authenticating';
        this.run(this.handlers.resume(this, parsed));
        return undefined;
      }
      case OP.PRESENCE_UPDATE:
      case OP.VOICE_STATE_UPDATE:
      case OP.REQUEST_GUILD_MEMBERS:
      case OP.GUILD_SUBSCRIPTIONS:
        if (this.state === 'open') return CLOSE.NOT_AUTHENTICATED;
        // Frames that race the READY being built are dropped rather than failing the socket.
        if (this.state !== 'ready') return undefined;
        return this.handleAuthenticated(op, d);
      default:
        return this.state === 'open' ? CLOSE.NOT_AUTHENTICATED : CLOSE.UNKNOWN_OPCODE;
    }
  }

  private handleAuthenticated(op: number, d: unknown): CloseReason | undefined {
    if (op === OP.PRESENCE_UPDATE) {
      const presence = parsePresence(d);
      if (!presence) return CLOSE.INVALID_PRESENCE;
      this.handlers.presence(this, presence);
    } else if (op === OP.REQUEST_GUILD_MEMBERS) {
      const request = parseRequestMembers(d);
      if (!request) return CLOSE.INVALID_PAYLOAD;
      this.run(this.handlers.requestMembers(this, request));
    } else if (op === OP.GUILD_SUBSCRIPTIONS) {
      const request = parseGuildSubscription(d);
      if (!request) return CLOSE.INVALID_SUBSCRIPTIONS;
      this.handlers.guildSubscription(this, request);
    } else if (op === OP.VOICE_STATE_UPDATE) {
      const request = parseVoiceStateUpdate(d);
      if (request === undefined) return CLOSE.INVALID_PAYLOAD;
      this.handlers.voiceState(this, request);
    }
    return undefined;
  }

  private run(work: Promise<void>): void {
    work.catch(() => this.fail(CLOSE.FAILED_TO_START));
  }

  private onClose(code: number): void {
    this.state = 'closed';
    this.handlers.closed(this, code);
  }
}
