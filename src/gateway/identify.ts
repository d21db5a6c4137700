import type { AppServices } from '../app-services.ts';
import type { ChatReadModelPort, ReadyIndex } from '../domains/chat/read-model.ts';
import { gatewayUrl } from '../domains/discovery/routes.ts';
import { effectiveSuspiciousFlags } from '../domains/users/flags.ts';
import { privateUserView } from '../domains/users/views.ts';
import { parseAuthorization } from '../http/auth/authorization.ts';
import type { Principal } from '../http/auth/principal.ts';
import { randomBase62 } from '../platform/crypto/tokens.ts';
import type { Connection } from './connection.ts';
import { CLOSE, dispatchPrefix, FRAMES, type IdentifyPayload, type ResumePayload } from './protocol.ts';
import { GatewaySession, type SessionCredential, type SessionRegistry } from './sessions.ts';

export type IdentifyDeps = Pick<
  AppServices,
  'config' | 'clock' | 'credentials' | 'mfaView' | 'recordAuthFailure' | 'log'
> & {
  chat: ChatReadModelPort;
};

export interface SessionLimits {
  maxSessionsPerUser: number;
  /** Guilds a single bot shard may carry before 4011. */
  maxGuildsPerShard: number;
}

type GatewayPrincipal = Extract<Principal, { kind: 'session' | 'bot' }>;

const BOT_TOKEN_SHAPE = /^\d{1,20}\./;
const RESUMED_PREFIX = dispatchPrefix('RESUMED', {});

/**
 * Identify (op 2) and Resume (op 6) as pipelines of named steps: credential → limits → session → READY.
 * Each failing step closes the socket with its own code, so a trace names the step that refused.
 */
export class SessionStarter {
  constructor(
    private readonly deps: IdentifyDeps,
    private readonly registry: SessionRegistry,
    private readonly limits: SessionLimits,
  ) {}

  async identify(connection: Connection, payload: IdentifyPayload): Promise<void> {
    const principal = await this.resolveCredential(connection, payload.token);
    if (!principal || !connection.isOpen) return;
    const isBot = principal.kind === 'bot';
    if (!isBot && this.registry.attachedCount(principal.user.id) >= this.limits.maxSessionsPerUser)
      return connection.fail(CLOSE.TOO_MANY_SESSIONS);

    const session = this.openSession(connection, principal);
    try {
      const index = await this.indexFor(session, payload.shard);
      if (index === undefined) {
        this.registry.remove(session);
        return connection.fail(CLOSE.SHARDING_REQUIRED);
      }
      for (const guildId of index.guildIds) this.registry.joinGuild(session, guildId);
      const ready = await this.buildReady(session, principal, index, payload.shard);
      // The socket may have closed, or the credential been revoked, while READY was being built.
      if (this.registry.get(session.id) !== session || session.socket !== connection) return;
      session.sendUnbuffered(dispatchPrefix('READY', ready.payload));
      for (const guild of ready.botBurst) session.sendUnbuffered(dispatchPrefix('GUILD_CREATE', guild));
      connection.becameReady(session);
      session.started();
    } catch (error) {
      this.deps.log.error('gateway identify failed', { error: (error as Error).message });
      this.registry.remove(session);
      connection.fail(CLOSE.FAILED_TO_START);
    }
  }

  async resume(connection: Connection, payload: ResumePayload): Promise<void> {
    const principal = await this.resolveCredential(connection, payload.token);
    if (!principal || !connection.isOpen) return;
    const session = this.registry.get(payload.sessionId);
    const now = this.deps.clock.now();
    if (!session || session.starting || this.registry.isExpired(session, now, this.deps.config.gatewayResumeWindowMs)) {
      if (session && !session.starting) this.registry.remove(session);
      return this.invalidSession(connection);
    }
    if (!sameCredential(session.credential, principal) || session.userId !== principal.user.id)
      return this.rejectToken(connection);
    if (payload.seq > session.seq || payload.seq < session.acknowledged) return connection.fail(CLOSE.INVALID_SEQUENCE);
    const frames = session.replayAfter(payload.seq);
    if (!frames) {
      this.registry.remove(session);
      return this.invalidSession(connection);
    }
    // A second socket resuming the session takes it over; the old one is closed without losing the session.
    const previous = session.socket;
    if (previous && previous !== connection) {
      this.registry.detach(session, now);
      previous.closeWith(CLOSE.SESSION_UNAVAILABLE.code, CLOSE.SESSION_UNAVAILABLE.reason);
    }
    this.registry.attach(session, connection);
    connection.session = session;
    session.acknowledge(payload.seq);
    for (const frame of frames) connection.send(frame);
    connection.becameReady(session);
    session.deliver(RESUMED_PREFIX);
  }

  /** The token is read from the payload only; a leading `Bot ` in any case is stripped (api.md §6). */
  private async resolveCredential(connection: Connection, rawToken: string): Promise<GatewayPrincipal | undefined> {
    const token = /^bot /i.test(rawToken) ? rawToken.slice(4) : rawToken;
    const parsed = BOT_TOKEN_SHAPE.test(token)
      ? parseAuthorization(`Bot ${token}`, { adminArea: false })
      : parseAuthorization(token, { adminArea: false });
    const principal =
      parsed.kind === 'session' || parsed.kind === 'bot' ? await this.deps.credentials.resolve(parsed) : undefined;
    if (principal?.kind === 'session' || principal?.kind === 'bot') return principal;
    this.rejectToken(connection);
    return undefined;
  }

  private rejectToken(connection: Connection): void {
    this.deps.recordAuthFailure(connection.ip, connection.strict).catch(() => {});
    connection.fail(CLOSE.INVALID_TOKEN);
  }

  private invalidSession(connection: Connection): void {
    connection.send(FRAMES.invalidSession);
    connection.backToUnauthenticated();
  }

  private openSession(connection: Connection, principal: GatewayPrincipal): GatewaySession {
    const credential: SessionCredential =
      principal.kind === 'session'
        ? { kind: 'session', sessionIdHash: principal.sessionIdHash }
        : { kind: 'bot', applicationId: principal.applicationId };
    const user = principal.user;
    const restricted =
      principal.kind === 'session' && effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) !== 0;
    const session = new GatewaySession(randomBase62(32), user.id, principal.kind === 'bot', credential, restricted);
    this.registry.add(session);
    this.registry.attach(session, connection);
    connection.session = session;
    return session;
  }

  /** The session's guilds (this shard's, for a bot); `undefined` = too many for one shard (4011). */
  private async indexFor(
    session: GatewaySession,
    shard: [number, number] | undefined,
  ): Promise<ReadyIndex | undefined> {
    if (session.restricted) return { guildIds: [], hasPrivateChannels: false };
    const index = await this.deps.chat.readyIndex(session.userId);
    let ids = index.guildIds;
    if (session.isBot && shard) ids = ids.filter((id) => Number((BigInt(id) >> 22n) % BigInt(shard[1])) === shard[0]);
    if (session.isBot && ids.length > this.limits.maxGuildsPerShard) return undefined;
    return { guildIds: ids, hasPrivateChannels: index.hasPrivateChannels };
  }

  private async buildReady(
    session: GatewaySession,
    principal: GatewayPrincipal,
    index: ReadyIndex,
    shard: [number, number] | undefined,
  ): Promise<{ payload: Record<string, unknown>; botBurst: Record<string, unknown>[] }> {
    const { chat, config } = this.deps;
    const [user, guilds, privateChannels] = await Promise.all([
      privateUserView(this.deps, principal.user),
      Promise.all(
        index.guildIds.map(
          async (id) =>
            (await chat.guildPayload(id, session.userId, { reducedMembers: true })) ?? { id, unavailable: true },
        ),
      ),
      index.hasPrivateChannels ? chat.privateChannelsOf(session.userId) : [],
    ]);
    const payload: Record<string, unknown> = {
      v: 1,
      version: 1,
      session_id: session.id,
      resume_gateway_url: gatewayUrl(config),
      user,
      guilds: session.isBot ? [] : guilds,
      private_channels: privateChannels,
      relationships: [],
      presences: [],
      users: [],
      sessions: [],
      read_states: [],
      user_settings: { locale: principal.user.locale, status: 'online', theme: 'dark', guild_positions: [] },
      user_guild_settings: [],
      notes: {},
      pinned_dms: [],
      favorite_memes: [],
      webauthn_credentials: [],
      rtc_regions: [],
      country_code: 'XX',
    };
    if (principal.kind === 'session') payload.auth_session_id_hash = principal.sessionIdHash;
    if (shard) payload.shard = shard;
    if (principal.kind === 'bot') payload.application = { id: principal.applicationId, flags: 0 };
    return { payload, botBurst: session.isBot ? guilds : [] };
  }
}

function sameCredential(credential: SessionCredential, principal: GatewayPrincipal): boolean {
  if (credential.kind === 'session')
    return principal.kind === 'session' && principal.sessionIdHash === credential.sessionIdHash;
  return principal.kind === 'bot' && principal.applicationId === credential.applicationId;
}
