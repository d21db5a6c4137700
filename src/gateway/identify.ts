import type { AppServices } from '../app-services.ts';
import type { ChatReadModelPort, ReadyIndex } from '../domains/chat/read-model.ts';
import { gatewayUrl } from '../domains/discovery/urls.ts';
import { privateUserView } from '../domains/users/views.ts';
import { parseAuthorization } from '../http/auth/authorization.ts';
import { effectiveSuspiciousFlags } from '../identity/flags.ts';
import type { Principal } from '../identity/principal.ts';
import { randomBase62 } from '../platform/crypto/tokens.ts';
import type { Connection } from './connection.ts';
import { CLOSE, dispatchPrefix, FRAMES, type IdentifyPayload, type ResumePayload } from './protocol.ts';
import { GatewaySession, type SessionCredential, type SessionRegistry } from './sessions.ts';

export type IdentifyDeps = Pick<
  AppServices,
  'config' | 'clock' | 'credentials' | 'mfaView' | 'recordAuthFailure' | 'log' | 'rateLimiter' | 'userSettings'
> & {
  chat: ChatReadModelPort;
};

export interface SessionLimits {
  /** Resumable sessions (attached or inside their resume window) one account may hold. */
  maxSessionsPerUser: number;
  /** Guilds a single bot shard may carry before 4011. */
  maxGuildsPerShard: number;
}

type GatewayPrincipal = Extract<Principal, { kind: 'session' | 'bot' }>;

const BOT_TOKEN_SHAPE = /^\d{1,20}\./;
/**
 * Identify allowances (docs/gateway.md): per address before the credential is even resolved, and per
 * account after, so one token cannot open thousands of sessions. Test mode applies them to strict upgrades only.
 */
const IDENTIFY_PER_ADDRESS = { limit: 60, windowMs: 60_000 };
const IDENTIFY_PER_ACCOUNT = { limit: 20, windowMs: 60_000 };
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
    if (!(await this.admitIdentify(connection, `gw-identify:ip:${connection.ipKey}`, IDENTIFY_PER_ADDRESS))) return;
    const principal = await this.resolveCredential(connection, payload.token);
    if (!principal || !connection.isOpen) return;
    if (!(await this.admitIdentify(connection, `gw-identify:user:${principal.user.id}`, IDENTIFY_PER_ACCOUNT))) return;
    if (!this.makeRoomForSession(principal)) return connection.fail(CLOSE.TOO_MANY_SESSIONS);

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
    // Flags set while the socket was away end the full session: the client identifies again, restricted.
    if (!session.restricted && isRestricted(principal)) {
      this.registry.remove(session);
      return this.invalidSession(connection);
    }
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

  /** `false` (and the socket closed 4008) when the allowance is spent. */
  private async admitIdentify(
    connection: Connection,
    key: string,
    allowance: { limit: number; windowMs: number },
  ): Promise<boolean> {
    if (!connection.strict) return true;
    const decision = await this.deps.rateLimiter.consume(
      key,
      allowance.limit,
      allowance.windowMs,
      this.deps.clock.now(),
    );
    if (decision.allowed) return true;
    connection.fail(CLOSE.RATE_LIMITED);
    return false;
  }

  /**
   * Keeps an account under its cap of resumable sessions: at the cap the session detached longest ago is
   * dropped (it could only have been resumed); when every session has a socket the new one is refused.
   */
  private makeRoomForSession(principal: GatewayPrincipal): boolean {
    // Bots shard across many sessions; their identify allowance and the per-address socket cap bound them.
    if (principal.kind === 'bot') return true;
    const userId = principal.user.id;
    if (this.registry.sessionCount(userId) < this.limits.maxSessionsPerUser) return true;
    const oldest = this.registry.oldestDetached(userId);
    if (!oldest) return false;
    this.registry.remove(oldest);
    return true;
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
    const session = new GatewaySession(
      randomBase62(32),
      principal.user.id,
      principal.kind === 'bot',
      credential,
      isRestricted(principal),
    );
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
    const [user, guilds, privateChannels, settings, notes] = await Promise.all([
      privateUserView(this.deps, principal.user),
      Promise.all(
        index.guildIds.map(
          async (id) =>
            (await chat.guildPayload(id, session.userId, { reducedMembers: true })) ?? { id, unavailable: true },
        ),
      ),
      index.hasPrivateChannels ? chat.privateChannelsOf(session.userId) : [],
      session.isBot ? {} : this.deps.userSettings.settings(session.userId, principal.user.locale),
      session.isBot ? {} : this.deps.userSettings.notes(session.userId),
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
      user_settings: settings,
      user_guild_settings: [],
      notes,
      feature_flags: { disabled_gravity_surfaces: [], disabled_features: [] },
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

/** Suspicious-flagged user sessions see only events addressed to them (docs/gateway.md). */
function isRestricted(principal: GatewayPrincipal): boolean {
  const user = principal.user;
  return (
    principal.kind === 'session' && effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) !== 0
  );
}

function sameCredential(credential: SessionCredential, principal: GatewayPrincipal): boolean {
  if (credential.kind === 'session')
    return principal.kind === 'session' && principal.sessionIdHash === credential.sessionIdHash;
  return principal.kind === 'bot' && principal.applicationId === credential.applicationId;
}
