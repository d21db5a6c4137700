import { dispatchFrame } from './protocol.ts';

/** Where a session's frames go while a socket is attached to it. */
export interface SessionSocket {
  send(frame: string): void;
  /** Op 9 then close 4004, or the drain/supersede closes. */
  closeWith(code: number, reason: string, before?: string): void;
}

export type SessionCredential = { kind: 'session'; sessionIdHash: string } | { kind: 'bot'; applicationId: string };

/** Oldest events are dropped beyond this; a resume that needs them gets op 9 and identifies afresh. */
export const REPLAY_BUFFER_LIMIT = 1000;

/**
 * One gateway session: it outlives its socket for the resume window, numbering every dispatch it is given
 * and keeping the ones the client has not acknowledged. Buffered entries are the shared per-audience frame
 * prefixes, so a replay buffer costs one pointer per event, not a copy of the payload.
 */
export class GatewaySession {
  seq = 0;
  /** Highest sequence the client reported (heartbeat `d` or resume `seq`). */
  acknowledged = 0;
  /** Resumes asking for anything at or below this cannot be served from the buffer (READY, the bot burst). */
  replayFloor = 0;
  socket: SessionSocket | undefined;
  detachedAt: number | undefined;
  readonly guildIds = new Set<string>();
  /** Dispatches that arrive while READY is being built; they follow READY in order. */
  private pending: string[] | undefined = [];
  private buffer: string[] = [];
  /** Sequence number of `buffer[0]`. */
  private bufferStart = 1;

  constructor(
    readonly id: string,
    readonly userId: string,
    readonly isBot: boolean,
    readonly credential: SessionCredential,
    /** Suspicious-flagged accounts see only events addressed to them (docs/gateway.md). */
    readonly restricted: boolean,
  ) {}

  get starting(): boolean {
    return this.pending !== undefined;
  }

  /** Start-up frames (READY, the bot GUILD_CREATE burst): numbered but never replayed. */
  sendUnbuffered(prefix: string): void {
    this.seq += 1;
    this.buffer = [];
    this.replayFloor = this.seq;
    this.bufferStart = this.seq + 1;
    this.socket?.send(dispatchFrame(prefix, this.seq));
  }

  /** A live dispatch: numbered, kept for replay, and written to the socket if one is attached. */
  deliver(prefix: string): void {
    if (this.pending) {
      this.pending.push(prefix);
      return;
    }
    this.seq += 1;
    if (this.buffer.length === 0) this.bufferStart = this.seq;
    this.buffer.push(prefix);
    if (this.buffer.length > REPLAY_BUFFER_LIMIT) this.dropOldest(this.buffer.length - REPLAY_BUFFER_LIMIT);
    this.socket?.send(dispatchFrame(prefix, this.seq));
  }

  /** Ends the start-up phase: what queued up behind READY is now numbered and sent. */
  started(): void {
    const queued = this.pending ?? [];
    this.pending = undefined;
    for (const prefix of queued) this.deliver(prefix);
  }

  acknowledge(seq: number): void {
    if (seq <= this.acknowledged || seq > this.seq) return;
    this.acknowledged = seq;
    // Nothing at or below an acknowledged sequence can be asked for again (a lower resume seq is 4007).
    const drop = Math.min(this.buffer.length, seq - this.bufferStart + 1);
    if (drop > 0) this.dropOldest(drop);
  }

  /** `undefined` when the buffer no longer reaches back to `afterSeq`. */
  replayAfter(afterSeq: number): string[] | undefined {
    if (afterSeq < this.replayFloor) return undefined;
    if (afterSeq + 1 < this.bufferStart && afterSeq < this.seq) return undefined;
    const frames: string[] = [];
    for (let seq = Math.max(afterSeq + 1, this.bufferStart); seq <= this.seq; seq++)
      frames.push(dispatchFrame(this.buffer[seq - this.bufferStart] as string, seq));
    return frames;
  }

  private dropOldest(count: number): void {
    this.buffer.splice(0, count);
    this.bufferStart += count;
    if (this.buffer.length === 0) this.bufferStart = this.seq + 1;
  }
}

/** Every session of this process, indexed the ways fan-out and revocation look them up. */
export class SessionRegistry {
  private readonly byId = new Map<string, GatewaySession>();
  private readonly byUser = new Map<string, Set<GatewaySession>>();
  private readonly byGuild = new Map<string, Set<GatewaySession>>();
  private readonly detached = new Set<GatewaySession>();
  /** Called once for every session that ends (closed on purpose, revoked, or past its resume window). */
  onRemoved: ((session: GatewaySession) => void) | undefined;

  get size(): number {
    return this.byId.size;
  }

  add(session: GatewaySession): void {
    this.byId.set(session.id, session);
    addTo(this.byUser, session.userId, session);
  }

  get(id: string): GatewaySession | undefined {
    return this.byId.get(id);
  }

  ofUser(userId: string): ReadonlySet<GatewaySession> | undefined {
    return this.byUser.get(userId);
  }

  ofGuild(guildId: string): ReadonlySet<GatewaySession> | undefined {
    return this.byGuild.get(guildId);
  }

  /** Sessions of the account that could still be used: attached, or detached inside the resume window. */
  sessionCount(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  oldestDetached(userId: string): GatewaySession | undefined {
    let oldest: GatewaySession | undefined;
    for (const session of this.byUser.get(userId) ?? [])
      if (session.detachedAt !== undefined && (!oldest || session.detachedAt < (oldest.detachedAt as number)))
        oldest = session;
    return oldest;
  }

  joinGuild(session: GatewaySession, guildId: string): void {
    if (session.restricted || !this.byId.has(session.id)) return;
    session.guildIds.add(guildId);
    addTo(this.byGuild, guildId, session);
  }

  leaveGuild(session: GatewaySession, guildId: string): void {
    session.guildIds.delete(guildId);
    removeFrom(this.byGuild, guildId, session);
  }

  attach(session: GatewaySession, socket: SessionSocket): void {
    session.socket = socket;
    session.detachedAt = undefined;
    this.detached.delete(session);
  }

  detach(session: GatewaySession, now: number): void {
    session.socket = undefined;
    session.detachedAt = now;
    if (this.byId.has(session.id)) this.detached.add(session);
  }

  remove(session: GatewaySession): void {
    if (this.byId.get(session.id) !== session) return;
    this.byId.delete(session.id);
    removeFrom(this.byUser, session.userId, session);
    for (const guildId of session.guildIds) removeFrom(this.byGuild, guildId, session);
    session.guildIds.clear();
    this.detached.delete(session);
    this.onRemoved?.(session);
  }

  /** Drops sessions whose socket ended more than `windowMs` ago. */
  expire(now: number, windowMs: number): void {
    for (const session of this.detached) if (this.isExpired(session, now, windowMs)) this.remove(session);
  }

  isExpired(session: GatewaySession, now: number, windowMs: number): boolean {
    return session.detachedAt !== undefined && now - session.detachedAt > windowMs;
  }
}

function addTo<K>(index: Map<K, Set<GatewaySession>>, key: K, session: GatewaySession): void {
  let set = index.get(key);
  if (!set) {
    set = new Set();
    index.set(key, set);
  }
  set.add(session);
}

function removeFrom<K>(index: Map<K, Set<GatewaySession>>, key: K, session: GatewaySession): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(session);
  if (set.size === 0) index.delete(key);
}
