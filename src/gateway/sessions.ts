import type { BusMark } from '../platform/state/event-bus.ts';
import { GuildSubscriptions, type SubscriptionsState } from './guild-subscriptions.ts';
import { dispatchFrame, LARGE_THRESHOLD } from './protocol.ts';

declare module '../platform/state/event-bus.ts' {
  interface BusTopics {
    'gateway.session.evict': { sessionId: string };
  }
}

/** Where a session's frames go while a socket is attached to it. */
export interface SessionSocket {
  send(frame: string): void;
  /** Op 9 then close 4004, or the drain/supersede closes. */
  closeWith(code: number, reason: string, before?: string): void;
}

export type SessionCredential = { kind: 'session'; sessionIdHash: string } | { kind: 'bot'; applicationId: string };

/**
 * Slots counted across processes (docs/gateway.md#across-nodes): sockets per address key and resumable
 * sessions per account. Each process renews the leases of what it holds; a dead process's lapse.
 */
export const SLOT_LEASE_MS = 60_000;
export const SLOT_RENEW_MS = 20_000;
export const socketSlotKey = (ipKey: string): string => `gw-ip:${ipKey}`;
export const sessionSlotKey = (userId: string): string => `gw-user:${userId}`;
/** `{sessionId}`: an identify elsewhere evicted this detached session to stay under the account's cap. */
export const SESSION_EVICT_TOPIC = 'gateway.session.evict';

/** Oldest events are dropped beyond this; a resume that needs them gets op 9 and identifies afresh. */
export const REPLAY_BUFFER_LIMIT = 1000;

/** Where a fanned-out frame came from on the bus, and the guild it concerns: what a hand-off filters on. */
export interface FrameTag {
  mark: BusMark;
  guildId: string | undefined;
}

interface PendingFrame {
  prefix: string;
  tag: FrameTag | undefined;
}

/** Everything another process needs to carry a session on (docs/gateway.md#resume). */
export interface SessionState {
  id: string;
  userId: string;
  isBot: boolean;
  credential: SessionCredential;
  restricted: boolean;
  shard: [number, number] | undefined;
  intents?: number | undefined;
  largeThreshold?: number;
  subscriptions?: SubscriptionsState;
  seq: number;
  acknowledged: number;
  replayFloor: number;
  bufferStart: number;
  buffer: string[];
}

/** Whether `guildId` belongs to shard `shard[0]` of `shard[1]` (Discord's `(id >> 22) % count`). */
export function inShard(guildId: string, shard: [number, number]): boolean {
  return Number((BigInt(guildId) >> 22n) % BigInt(shard[1])) === shard[0];
}

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
  /** Guild joins (true) and leaves (false) seen while a hand-off is answered, last one per guild. */
  membershipChanges: Map<string, boolean> | undefined;
  /** A bot's shard, `[id, count]`, when it identified with one. */
  shard: [number, number] | undefined;
  /** The Identify `intents`, when sent (docs/gateway.md#intents); undefined = every event. */
  intents: number | undefined;
  /** The Identify `large_threshold` (docs/gateway.md#large-guilds): a guild with more members is large for it. */
  largeThreshold: number = LARGE_THRESHOLD.default;
  /** Op 14: whose presences it follows in its large guilds when it sent no `intents`. */
  readonly subscriptions = new GuildSubscriptions();
  /**
   * Dispatches meant for it may have been lost on the bus: no replay can be complete, so a resume gets op 9
   * and the client identifies, reading everything afresh (docs/gateway.md#across-nodes).
   */
  lost = false;
  /** Dispatches that arrive while READY is being built (or a hand-off is answered); they follow it in order. */
  private pending: PendingFrame[] | undefined = [];
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
  deliver(prefix: string, tag?: FrameTag): void {
    if (this.pending) {
      this.pending.push({ prefix, tag });
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
    for (const frame of queued) this.deliver(frame.prefix);
  }

  /** The state a hand-off carries to another process. */
  snapshot(): SessionState {
    return {
      id: this.id,
      userId: this.userId,
      isBot: this.isBot,
      credential: this.credential,
      restricted: this.restricted,
      shard: this.shard,
      intents: this.intents,
      largeThreshold: this.largeThreshold,
      subscriptions: this.subscriptions.snapshot(),
      seq: this.seq,
      acknowledged: this.acknowledged,
      replayFloor: this.replayFloor,
      bufferStart: this.bufferStart,
      buffer: [...this.buffer],
    };
  }

  /**
   * Takes over a session another process carried: its numbering and replay buffer become this session's,
   * and of the frames collected here meanwhile only those `keep` accepts follow them.
   */
  adopt(state: SessionState, keep: (tag: FrameTag) => boolean): void {
    this.seq = state.seq;
    this.acknowledged = state.acknowledged;
    this.replayFloor = state.replayFloor;
    this.buffer = [...state.buffer];
    this.bufferStart = state.bufferStart;
    this.shard = state.shard;
    this.intents = state.intents;
    this.largeThreshold = state.largeThreshold ?? LARGE_THRESHOLD.default;
    this.subscriptions.restore(state.subscriptions);

    if (this.pending) this.pending = this.pending.filter(({ tag }) => tag === undefined || keep(tag));
    this.started();
  }

  acknowledge(seq: number): void {
    if (seq <= this.acknowledged || seq > this.seq) return;
    this.acknowledged = seq;
    // Nothing at or below an acknowledged sequence can be asked for again (a lower resume seq is 4007).
    const drop = Math.min(this.buffer.length, seq - this.bufferStart + 1);
    if (drop > 0) this.dropOldest(drop);
  }

  /** False when the buffer no longer reaches back to `afterSeq` (or it is READY or before). */
  canReplayAfter(afterSeq: number): boolean {
    if (afterSeq < this.replayFloor) return false;
    return !(afterSeq + 1 < this.bufferStart && afterSeq < this.seq);
  }

  /** `undefined` when the buffer no longer reaches back to `afterSeq`. */
  replayAfter(afterSeq: number): string[] | undefined {
    if (!this.canReplayAfter(afterSeq)) return undefined;
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
  /**
   * Called once for every session that ends (closed on purpose, revoked, or past its resume window), with
   * the guilds it was in.
   */
  onRemoved: ((session: GatewaySession, guildIds: readonly string[]) => void) | undefined;

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

  all(): IterableIterator<GatewaySession> {
    return this.byId.values();
  }

  ofUser(userId: string): ReadonlySet<GatewaySession> | undefined {
    return this.byUser.get(userId);
  }

  ofGuild(guildId: string): ReadonlySet<GatewaySession> | undefined {
    return this.byGuild.get(guildId);
  }

  /** Sessions of the account here that could still be used: attached, or detached inside the resume window. */
  sessionCount(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  joinGuild(session: GatewaySession, guildId: string): void {
    if (session.restricted || !this.byId.has(session.id)) return;
    session.guildIds.add(guildId);
    addTo(this.byGuild, guildId, session);
    session.membershipChanges?.set(guildId, true);
  }

  leaveGuild(session: GatewaySession, guildId: string): void {
    session.membershipChanges?.set(guildId, false);
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

  /** Ends a session; `handedOff` = it lives on in another process, so nothing that follows an end runs. */
  remove(session: GatewaySession, handedOff = false): void {
    if (this.byId.get(session.id) !== session) return;
    this.byId.delete(session.id);
    removeFrom(this.byUser, session.userId, session);
    const guildIds = [...session.guildIds];
    for (const guildId of guildIds) removeFrom(this.byGuild, guildId, session);
    session.guildIds.clear();
    this.detached.delete(session);
    if (!handedOff) this.onRemoved?.(session, guildIds);
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
