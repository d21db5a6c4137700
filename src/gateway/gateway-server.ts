import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { AppServices } from '../app-services.ts';
import { CREDENTIALS_REVOKED_TOPIC } from '../domains/auth/sessions.ts';
import { DISPATCH_TOPIC, type Dispatcher, type GatewayEvents } from '../domains/events/dispatch.ts';
import { presenceView } from '../domains/users/presence-view.ts';
import { VOICE_SESSION_TOPIC, type VoiceStateRequest } from '../domains/voice/voice-service.ts';
import { AUTH_INVALIDATION_TOPIC } from '../http/auth/credential-resolver.ts';
import { clientIp } from '../http/client-ip.ts';
import { ApiError, bannedError } from '../http/errors.ts';
import { rawErrorResponse } from '../http/raw-response.ts';
import { effectiveSuspiciousFlags } from '../identity/flags.ts';
import { ipKey as toIpKey } from '../platform/net/cidr.ts';
import type { BusGap, EventBus } from '../platform/state/event-bus.ts';
import { Connection, type ConnectionHandlers } from './connection.ts';
import { Fanout } from './fanout.ts';
import { SessionHandoff } from './handoff.ts';
import { type IdentifyDeps, SessionStarter } from './identify.ts';
import { PresenceTracker } from './presence.ts';
import {
  CLOSE,
  type CloseReason,
  dispatchPrefix,
  FRAMES,
  type GuildSubscriptionPayload,
  type PresencePayload,
  type RequestMembersPayload,
} from './protocol.ts';
import {
  type GatewaySession,
  SESSION_EVICT_TOPIC,
  SessionRegistry,
  SLOT_LEASE_MS,
  SLOT_RENEW_MS,
  sessionSlotKey,
  socketSlotKey,
} from './sessions.ts';
import { VoiceGateway } from './voice-gateway.ts';

export interface GatewayTimings {
  /** Announced in Hello. */
  heartbeatIntervalMs: number;
  heartbeatRequestMs: number;
  zombieTimeoutMs: number;
  /** How often heartbeats and resume windows are checked. */
  sweepIntervalMs: number;
}

export const DEFAULT_TIMINGS: GatewayTimings = Object.freeze({
  heartbeatIntervalMs: 41_250,
  heartbeatRequestMs: 37_125,
  zombieTimeoutMs: 45_000,
  sweepIntervalMs: 1_000,
});

export interface GatewayOptions {
  timings?: Partial<GatewayTimings>;
  maxSocketsPerIp?: number;
  maxSessionsPerUser?: number;
  maxGuildsPerShard?: number;
  /**
   * Whether this process also runs the SFU (the `voice` role), whose own listener answers `/voice`; without it
   * the gateway refuses `/voice` upgrades with 404 (docs/deployment.md#roles). Default true.
   */
  voiceServedHere?: boolean;
}

export type GatewayDeps = IdentifyDeps &
  Pick<AppServices, 'banCheck' | 'users' | 'voice' | 'calls' | 'presences' | 'metrics' | 'chatCore' | 'slots'> & {
    bus: EventBus;
    dispatcher: Dispatcher;
  };

const MEMBERS_PER_CHUNK = 1000;
/** How long a drain waits for clients to finish the close handshake before cutting the sockets. */
const DRAIN_GRACE_MS = 2_000;

/**
 * The Gateway (docs/gateway.md): WebSocket upgrades on the HTTP server at `/gateway`, one `Connection` per socket,
 * sessions that survive sockets for the resume window, and fan-out of bus dispatches.
 */
/** Ours (`1`) and the versions stock discord.js and `@discordjs/ws` ask for (`10`, `9`): one protocol serves all three. */
const GATEWAY_VERSIONS = new Set(['1', '9', '10']);

export class GatewayServer implements ConnectionHandlers {
  readonly registry = new SessionRegistry();
  private readonly wss = new WebSocketServer({
    noServer: true,
    // Frames above the 4096-byte protocol limit are refused by the connection with 4002; this cap only
    // stops absurd frames from being buffered at all.
    maxPayload: 1024 * 1024,
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly connections = new Set<Connection>();
  /** Each admitted socket's slot in its address's count (docs/gateway.md#across-nodes). */
  private readonly socketSlots = new Map<Connection, string>();
  private renewedAt = Date.now();
  private readonly starter: SessionStarter;
  private readonly fanout: Fanout;
  private readonly handoff: SessionHandoff;
  private readonly voice: VoiceGateway;
  readonly presences: PresenceTracker;
  private readonly unsubscribe: (() => void)[] = [];
  private timings: GatewayTimings;
  private sweepTimer: NodeJS.Timeout | undefined;
  private draining = false;
  private readonly maxSocketsPerIp: number;
  private readonly voiceServedHere: boolean;

  constructor(
    private readonly deps: GatewayDeps,
    options: GatewayOptions = {},
  ) {
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.maxSocketsPerIp = options.maxSocketsPerIp ?? 256;
    this.voiceServedHere = options.voiceServedHere ?? true;
    this.voice = new VoiceGateway(deps.voice, deps.calls, this.registry, deps.log);
    this.presences = new PresenceTracker(deps, this.registry);
    this.registry.onRemoved = (session, guildIds) => {
      this.voice.sessionEnded(session);
      this.presences.ended(session, guildIds);
      this.releaseSessionSlot(session);
    };
    this.fanout = new Fanout(this.registry, deps.chat, deps.log, (seconds) => deps.metrics.observeFanout(seconds));
    this.handoff = new SessionHandoff(
      { ...deps, resumeWindowMs: () => deps.config.gatewayResumeWindowMs },
      this.registry,
      this.fanout,
      this.presences,
    );
    this.starter = new SessionStarter(
      deps,
      this.registry,
      {
        maxSessionsPerUser: options.maxSessionsPerUser ?? 100,
        maxGuildsPerShard: options.maxGuildsPerShard ?? 2500,
      },
      this.presences,
      this.handoff,
    );
    deps.metrics.gauge(
      'hearth_gateway_connections',
      'Open gateway WebSockets on this process',
      () => this.connections.size,
    );
    deps.metrics.gauge(
      'hearth_gateway_sessions',
      'Gateway sessions on this process (attached or inside their resume window)',
      () => this.registry.size,
    );
    this.unsubscribe.push(
      deps.bus.subscribe(DISPATCH_TOPIC, (dispatch, mark) => {
        this.fanout.onDispatch(dispatch, mark);
        this.presences.onDispatch(dispatch);
      }),
      deps.bus.subscribe(CREDENTIALS_REVOKED_TOPIC, (message) => this.fanout.onRevoked(message)),
      deps.bus.subscribe(AUTH_INVALIDATION_TOPIC, (message) => {
        if (message.userId) this.recheckRestriction(message.userId).catch(() => {});
      }),
      deps.bus.subscribe(VOICE_SESSION_TOPIC, (message) => this.voice.onSessionMessage(message)),
      deps.bus.subscribe(SESSION_EVICT_TOPIC, (message) => this.evicted(message.sessionId)),
      // Lost bus messages (docs/gateway.md#across-nodes): dispatches lost = no session here can be replayed
      // completely; a revocation or invalidation lost = every session's credential must be checked again.
      deps.bus.onGap(DISPATCH_TOPIC, (gap) => this.resync(gap, true)),
      deps.bus.onGap(CREDENTIALS_REVOKED_TOPIC, (gap) => this.resync(gap, false)),
      deps.bus.onGap(AUTH_INVALIDATION_TOPIC, (gap) => this.resync(gap, false)),
    );
    this.restartSweep();
  }

  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.onUpgrade(request, socket, head).catch((error) => {
        this.deps.log.error('gateway upgrade failed', { error: (error as Error).message });
        rejectUpgrade(socket, new ApiError('INTERNAL_SERVER_ERROR'));
      });
    });
  }

  /** Tests shorten the heartbeat timers; production never calls this. */
  setTimings(timings: Partial<GatewayTimings>): void {
    this.timings = { ...this.timings, ...timings };
    this.restartSweep();
  }

  stats(): { connections: number; sessions: number } {
    return { connections: this.connections.size, sessions: this.registry.size };
  }

  /** Shutdown: op 7 then 4000 to every socket, so clients reconnect elsewhere (or here, after a restart). */
  async drain(): Promise<void> {
    this.draining = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const off of this.unsubscribe) off();
    this.handoff.close();
    for (const connection of this.connections)
      connection.closeWith(CLOSE.DRAIN.code, CLOSE.DRAIN.reason, FRAMES.reconnect);
    const deadline = Date.now() + DRAIN_GRACE_MS;
    while (this.connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const connection of this.connections) connection.terminate();
    this.wss.close();
    // Nothing here can be resumed once the process is gone: its slots are freed for the other processes.
    const releases: Promise<void>[] = [];
    for (const [connection, member] of this.socketSlots)
      releases.push(this.deps.slots.release(socketSlotKey(connection.ipKey), member));
    this.socketSlots.clear();
    for (const session of this.registry.all())
      if (!session.isBot) releases.push(this.deps.slots.release(sessionSlotKey(session.userId), session.id));
    await Promise.allSettled(releases);
  }

  private async onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    const url = new URL(request.url ?? '/', 'http://gateway.invalid');
    // The voice signalling endpoint has its own upgrade listener (src/domains/voice/sfu).
    if (url.pathname === '/voice' || url.pathname === '/voice/')
      return this.voiceServedHere ? undefined : rejectUpgrade(socket, new ApiError('NOT_FOUND'));
    if (url.pathname !== '/gateway' && url.pathname !== '/gateway/')
      return rejectUpgrade(socket, new ApiError('NOT_FOUND'));
    if (this.draining) return rejectUpgrade(socket, new ApiError('SERVICE_UNAVAILABLE', { message: 'Draining' }));
    const { config, clock } = this.deps;
    const ip = clientIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], config.trustedProxies);
    const ipKey = toIpKey(ip);
    const ban = await this.deps.banCheck(ip, ipKey, clock.now());
    if (ban) return rejectUpgrade(socket, bannedError(ban, ip, clock.now()));
    const strict = !config.testMode || request.headers['x-test-strict'] === 'true';
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const connection = new Connection(ws, ip, ipKey, strict, this, monotonicNow);
      this.admit(connection, url).catch((error) => {
        this.deps.log.error('gateway admission failed', { error: (error as Error).message });
        connection.fail(CLOSE.FAILED_TO_START);
      });
    });
  }

  /** The address's socket cap, counted across every process, then the version and encoding checks. */
  private async admit(connection: Connection, url: URL): Promise<void> {
    const key = socketSlotKey(connection.ipKey);
    const member = randomBytes(12).toString('base64url');
    const decision = await this.deps.slots.acquire(key, member, this.maxSocketsPerIp, {
      now: Date.now(),
      leaseMs: SLOT_LEASE_MS,
    });
    if (!decision.admitted) return connection.fail(CLOSE.TOO_MANY_CONNECTIONS);
    let refusal: CloseReason | undefined;
    if (!GATEWAY_VERSIONS.has(url.searchParams.get('v') ?? '')) refusal = CLOSE.INVALID_VERSION;
    const encoding = url.searchParams.get('encoding');
    if (encoding !== null && encoding !== 'json') refusal ??= CLOSE.DECODE_FAILED;
    // `compress` is ignored: Node 20 has no zstd, and plain text frames are what every client parses anyway.
    if (refusal || !connection.isOpen || this.draining) {
      await this.deps.slots.release(key, member);
      if (refusal) connection.fail(refusal);
      else if (this.draining) connection.fail(CLOSE.DRAIN);
      return;
    }
    this.socketSlots.set(connection, member);
    this.connections.add(connection);
    connection.hello(this.timings.heartbeatIntervalMs);
  }

  private releaseSessionSlot(session: GatewaySession): void {
    if (session.isBot) return;
    this.deps.slots.release(sessionSlotKey(session.userId), session.id).catch((error) => {
      this.deps.log.error('gateway session slot release failed', { error: (error as Error).message });
    });
  }

  /** An identify evicted this detached session to keep its account under the cap (on any process). */
  private evicted(sessionId: string): void {
    const session = this.registry.get(sessionId);
    if (!session) return;
    const socket = session.socket;
    this.registry.remove(session);
    socket?.closeWith(CLOSE.SESSION_UNAVAILABLE.code, CLOSE.SESSION_UNAVAILABLE.reason, FRAMES.invalidSession);
  }

  identify(connection: Connection, payload: Parameters<SessionStarter['identify']>[1]): Promise<void> {
    return this.starter.identify(connection, payload);
  }

  resume(connection: Connection, payload: Parameters<SessionStarter['resume']>[1]): Promise<void> {
    return this.starter.resume(connection, payload);
  }

  /** Op 3: the session's new presence; members of the user's guilds and friends see the user's aggregate. */
  presence(connection: Connection, presence: PresencePayload): void {
    if (connection.session) this.presences.changed(connection.session, presence);
  }

  /** Op 8: answered on this session only, in chunks of up to 1000 members. */
  async requestMembers(connection: Connection, request: RequestMembersPayload): Promise<void> {
    const session = connection.session;
    if (!session?.guildIds.has(request.guildId)) return;
    const members = await this.deps.chat.searchMembers(request.guildId, {
      limit: request.userIds ? request.userIds.length : request.limit,
      ...(request.query !== undefined ? { query: request.query } : {}),
      ...(request.userIds ? { userIds: request.userIds } : {}),
    });
    const chunkCount = Math.max(1, Math.ceil(members.length / MEMBERS_PER_CHUNK));
    const found = new Set(members.map((m) => m.user?.id));
    const notFound = request.userIds?.filter((id) => !found.has(id));
    const online = request.presences
      ? await this.deps.presences.getMany(
          [...found].filter((id): id is string => id !== undefined),
          Date.now(),
        )
      : undefined;
    for (let index = 0; index < chunkCount; index++) {
      const chunk = members.slice(index * MEMBERS_PER_CHUNK, (index + 1) * MEMBERS_PER_CHUNK);
      const payload: GatewayEvents['GUILD_MEMBERS_CHUNK'] = {
        guild_id: request.guildId,
        members: chunk,
        chunk_index: index,
        chunk_count: chunkCount,
      };
      if (online)
        payload.presences = chunk.flatMap((member) => {
          const id = member.user?.id;
          const presence = id === undefined ? undefined : online.get(id);
          return id !== undefined && presence ? [presenceView(id, presence)] : [];
        });
      if (notFound && index === 0) payload.not_found = notFound;
      if (request.nonce !== undefined) payload.nonce = request.nonce;
      session.deliver(dispatchPrefix('GUILD_MEMBERS_CHUNK', payload));
    }
  }

  /** Op 14: the presences the session follows in its large guilds (docs/gateway.md#large-guilds). */
  guildSubscription(connection: Connection, request: GuildSubscriptionPayload): void {
    connection.session?.subscriptions.apply(request);
  }

  /** Op 4: join, move, leave or change one's own flags. */
  voiceState(connection: Connection, request: VoiceStateRequest): void {
    if (connection.session) this.voice.request(connection.session, request);
  }

  closed(connection: Connection, code: number): void {
    if (!this.connections.delete(connection)) return;
    const member = this.socketSlots.get(connection);
    this.socketSlots.delete(connection);
    if (member !== undefined)
      this.deps.slots.release(socketSlotKey(connection.ipKey), member).catch((error) => {
        this.deps.log.error('gateway socket slot release failed', { error: (error as Error).message });
      });
    const session = connection.session;
    if (!session || session.socket !== connection) return;
    // A session that never finished READY cannot be resumed; any other stays for the resume window, whatever
    // the close code: the platform's own clients close with 1000 and then resume. A client that meant to end
    // it simply never resumes, and the window (and the per-account cap) bounds what it leaves behind. A clean
    // close (1000/1001) still leaves voice at once: the person closed the app; a dropped socket keeps it.
    if (session.starting) {
      this.registry.remove(session);
      return;
    }
    if (code === 1000 || code === 1001) this.voice.sessionEnded(session);
    const detachedAt = this.deps.clock.now();
    this.registry.detach(session, detachedAt);
    // Idle now: an identify at the account's cap, on any process, may evict it.
    if (!session.isBot)
      this.deps.slots
        .idle(sessionSlotKey(session.userId), session.id, detachedAt, { now: Date.now(), leaseMs: SLOT_LEASE_MS })
        .catch((error) => this.deps.log.error('gateway session slot failed', { error: (error as Error).message }));
    // A person whose app is closed is offline now, not when the resume window ends; a resume brings them back.
    this.presences.detached(session);
  }

  /**
   * A user changed (flags, verification, …): when suspicious-activity flags now apply, the account's full
   * sessions end with op 9 and close 4000; the client identifies again and gets a restricted session.
   */
  private async recheckRestriction(userId: string): Promise<void> {
    const sessions = [...(this.registry.ofUser(userId) ?? [])].filter((s) => !s.isBot && !s.restricted);
    if (sessions.length === 0) return;
    const user = await this.deps.users.findById(userId, { fresh: true });
    if (!user || effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) === 0) return;
    for (const session of sessions) {
      if (this.registry.get(session.id) !== session) continue;
      const socket = session.socket;
      this.registry.remove(session);
      socket?.closeWith(CLOSE.RESTRICTED.code, CLOSE.RESTRICTED.reason, FRAMES.invalidSession);
    }
  }

  /**
   * Bus messages meant for this process were lost: every socket gets op 7 then close 4000, so its client
   * resumes. The resume resolves the token afresh (a lost revocation ends there with 4004); when dispatches
   * were lost (`lost`), it gets op 9 instead, here or on any node, and the client identifies: READY is read
   * from the database, which the lost messages only announced.
   */
  private resync(gap: BusGap, lost: boolean): void {
    if (this.draining) return;
    this.deps.metrics.countBusGap(gap.topic, gap.reason);
    this.deps.log.warn('gateway bus messages lost; sessions told to reconnect', {
      topic: gap.topic,
      reason: gap.reason,
      ...(gap.reason === 'sequence' ? { origin: gap.origin, from: gap.from, to: gap.to } : {}),
      sessions: this.registry.size,
    });
    this.deps.credentials.forgetAll();
    if (lost) this.presences.forgetDerived();
    for (const session of [...this.registry.all()]) {
      if (lost) session.lost = true;
      session.socket?.closeWith(CLOSE.RESYNC.code, CLOSE.RESYNC.reason, FRAMES.reconnect);
    }
  }

  /** Renews the leases of every slot this process holds, so only a dead process's slots lapse. */
  private renewSlots(): void {
    this.renewedAt = Date.now();
    const slots = [...this.socketSlots].map(([connection, member]) => ({
      key: socketSlotKey(connection.ipKey),
      member,
    }));
    for (const session of this.registry.all())
      if (!session.isBot) slots.push({ key: sessionSlotKey(session.userId), member: session.id });
    this.deps.slots
      .renew(slots, { now: this.renewedAt, leaseMs: SLOT_LEASE_MS })
      .catch((error) => this.deps.log.error('gateway slot renewal failed', { error: (error as Error).message }));
  }

  private restartSweep(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.draining) return;
    this.sweepTimer = setInterval(() => this.sweep(), this.timings.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    const now = monotonicNow();
    for (const connection of this.connections) connection.checkHeartbeat(now, this.timings);
    if (Date.now() - this.renewedAt >= SLOT_RENEW_MS) this.renewSlots();
    this.registry.expire(this.deps.clock.now(), this.deps.config.gatewayResumeWindowMs);
    this.presences.sweep();
  }
}

function monotonicNow(): number {
  return performance.now();
}

/** Answers an upgrade with a plain HTTP error before any WebSocket handshake (banned IPs get 403 here). */
function rejectUpgrade(socket: Duplex, error: ApiError): void {
  if (socket.writable) socket.end(rawErrorResponse(error));
}
