import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { AppServices } from '../app-services.ts';
import { CREDENTIALS_REVOKED_TOPIC, type CredentialsRevoked } from '../domains/auth/sessions.ts';
import { DISPATCH_TOPIC, type Dispatch, type Dispatcher } from '../domains/events/dispatch.ts';
import {
  VOICE_SESSION_TOPIC,
  type VoiceSessionMessage,
  type VoiceStateRequest,
} from '../domains/voice/voice-service.ts';
import { AUTH_INVALIDATION_TOPIC, type AuthInvalidation } from '../http/auth/credential-resolver.ts';
import { clientIp } from '../http/client-ip.ts';
import { ApiError, bannedError } from '../http/errors.ts';
import { rawErrorResponse } from '../http/raw-response.ts';
import { effectiveSuspiciousFlags } from '../identity/flags.ts';
import { ipKey as toIpKey } from '../platform/net/cidr.ts';
import type { EventBus } from '../platform/state/event-bus.ts';
import { Connection, type ConnectionHandlers } from './connection.ts';
import { Fanout } from './fanout.ts';
import { type IdentifyDeps, SessionStarter } from './identify.ts';
import { CLOSE, dispatchPrefix, FRAMES, type PresencePayload, type RequestMembersPayload } from './protocol.ts';
import { SessionRegistry } from './sessions.ts';
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
}

export type GatewayDeps = IdentifyDeps &
  Pick<AppServices, 'banCheck' | 'users' | 'voice'> & {
    bus: EventBus;
    dispatcher: Dispatcher;
  };

const MEMBERS_PER_CHUNK = 1000;
/** How long a drain waits for clients to finish the close handshake before cutting the sockets. */
const DRAIN_GRACE_MS = 2_000;

/**
 * The Gateway (api.md §6): WebSocket upgrades on the HTTP server at `/gateway`, one `Connection` per socket,
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
  private readonly socketsPerIp = new Map<string, number>();
  private readonly starter: SessionStarter;
  private readonly fanout: Fanout;
  private readonly voice: VoiceGateway;
  private readonly unsubscribe: (() => void)[] = [];
  private timings: GatewayTimings;
  private sweepTimer: NodeJS.Timeout | undefined;
  private draining = false;
  private readonly maxSocketsPerIp: number;

  constructor(
    private readonly deps: GatewayDeps,
    options: GatewayOptions = {},
  ) {
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.maxSocketsPerIp = options.maxSocketsPerIp ?? 256;
    this.voice = new VoiceGateway(deps.voice, this.registry, deps.log);
    this.registry.onRemoved = (session) => this.voice.sessionEnded(session);
    this.starter = new SessionStarter(deps, this.registry, {
      maxSessionsPerUser: options.maxSessionsPerUser ?? 100,
      maxGuildsPerShard: options.maxGuildsPerShard ?? 2500,
    });
    this.fanout = new Fanout(this.registry, deps.chat, deps.log);
    this.unsubscribe.push(
      deps.bus.subscribe<Dispatch>(DISPATCH_TOPIC, (dispatch) => this.fanout.onDispatch(dispatch)),
      deps.bus.subscribe<CredentialsRevoked>(CREDENTIALS_REVOKED_TOPIC, (message) => this.fanout.onRevoked(message)),
      deps.bus.subscribe<AuthInvalidation>(AUTH_INVALIDATION_TOPIC, (message) => {
        if (message.userId) this.recheckRestriction(message.userId).catch(() => {});
      }),
      deps.bus.subscribe<VoiceSessionMessage>(VOICE_SESSION_TOPIC, (message) => this.voice.onSessionMessage(message)),
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
    for (const connection of this.connections)
      connection.closeWith(CLOSE.DRAIN.code, CLOSE.DRAIN.reason, FRAMES.reconnect);
    const deadline = Date.now() + DRAIN_GRACE_MS;
    while (this.connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const connection of this.connections) connection.terminate();
    this.wss.close();
  }

  private async onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    const url = new URL(request.url ?? '/', 'http://gateway.invalid');
    // The voice signalling endpoint has its own upgrade listener (src/domains/voice/sfu).
    if (url.pathname === '/voice' || url.pathname === '/voice/') return;
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
      const open = this.socketsPerIp.get(ipKey) ?? 0;
      if (open >= this.maxSocketsPerIp) return connection.fail(CLOSE.TOO_MANY_CONNECTIONS);
      if (!GATEWAY_VERSIONS.has(url.searchParams.get('v') ?? '')) return connection.fail(CLOSE.INVALID_VERSION);
      const encoding = url.searchParams.get('encoding');
      if (encoding !== null && encoding !== 'json') return connection.fail(CLOSE.DECODE_FAILED);
      // `compress` is ignored: Node 20 has no zstd, and plain text frames are what every client parses anyway.
      this.socketsPerIp.set(ipKey, open + 1);
      this.connections.add(connection);
      connection.hello(this.timings.heartbeatIntervalMs);
    });
  }

  identify(connection: Connection, payload: Parameters<SessionStarter['identify']>[1]): Promise<void> {
    return this.starter.identify(connection, payload);
  }

  resume(connection: Connection, payload: Parameters<SessionStarter['resume']>[1]): Promise<void> {
    return this.starter.resume(connection, payload);
  }

  /** Op 3: broadcast to the members of each of the user's guilds. */
  presence(connection: Connection, presence: PresencePayload): void {
    const session = connection.session;
    if (!session) return;
    // Invisible shows as offline, with nothing of what the user is doing.
    const invisible = presence.status === 'invisible' || presence.status === 'offline';
    const status = invisible ? 'offline' : presence.status;
    const activities = invisible ? [] : presence.activities;
    const platform = presence.mobile ? 'mobile' : 'web';
    for (const guildId of session.guildIds) {
      const payload = {
        user: { id: session.userId },
        status,
        activities,
        client_status: invisible ? {} : { [platform]: status },
        afk: presence.afk,
        mobile: presence.mobile,
        custom_status: invisible ? null : presence.customStatus,
        guild_id: guildId,
      };
      this.deps.dispatcher.dispatch('PRESENCE_UPDATE', payload, { kind: 'guild', guildId }).catch(() => {});
    }
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
    const found = new Set(members.map((m) => (m.user as { id?: string } | undefined)?.id));
    const notFound = request.userIds?.filter((id) => !found.has(id));
    for (let index = 0; index < chunkCount; index++) {
      const payload: Record<string, unknown> = {
        guild_id: request.guildId,
        members: members.slice(index * MEMBERS_PER_CHUNK, (index + 1) * MEMBERS_PER_CHUNK),
        chunk_index: index,
        chunk_count: chunkCount,
      };
      if (notFound && index === 0) payload.not_found = notFound;
      if (request.nonce !== undefined) payload.nonce = request.nonce;
      session.deliver(dispatchPrefix('GUILD_MEMBERS_CHUNK', payload));
    }
  }

  /** Op 4: join, move, leave or change one's own flags. */
  voiceState(connection: Connection, request: VoiceStateRequest): void {
    if (connection.session) this.voice.request(connection.session, request);
  }

  closed(connection: Connection, code: number): void {
    if (!this.connections.delete(connection)) return;
    const left = (this.socketsPerIp.get(connection.ipKey) ?? 1) - 1;
    if (left > 0) this.socketsPerIp.set(connection.ipKey, left);
    else this.socketsPerIp.delete(connection.ipKey);
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
    this.registry.detach(session, this.deps.clock.now());
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

  private restartSweep(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.draining) return;
    this.sweepTimer = setInterval(() => this.sweep(), this.timings.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    const now = monotonicNow();
    for (const connection of this.connections) connection.checkHeartbeat(now, this.timings);
    this.registry.expire(this.deps.clock.now(), this.deps.config.gatewayResumeWindowMs);
  }
}

function monotonicNow(): number {
  return performance.now();
}

/** Answers an upgrade with a plain HTTP error before any WebSocket handshake (banned IPs get 403 here). */
function rejectUpgrade(socket: Duplex, error: ApiError): void {
  if (socket.writable) socket.end(rawErrorResponse(error));
}
