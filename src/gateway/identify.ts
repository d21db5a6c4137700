import type { AppServices } from '../app-services.ts';
import type { GuildPayloadView, UnavailableGuild } from '../domains/chat/guild-payload.ts';
import type { GuildSettingsPayload } from '../domains/chat/guild-settings-store.ts';
import type { ChatReadModelPort, ReadyIndex } from '../domains/chat/read-model.ts';
import type { ReadStatePayload } from '../domains/chat/read-state-store.ts';
import { gatewayUrl } from '../domains/discovery/urls.ts';
import type { NoSettings, ReadyView } from '../domains/events/ready-view.ts';
import { type PresenceView, presenceView } from '../domains/users/presence-view.ts';
import type { UserSettingsView } from '../domains/users/settings.ts';
import { privateUserView } from '../domains/users/views.ts';
import type { CallCreateView } from '../domains/voice/voice-views.ts';
import { parseAuthorization } from '../http/auth/authorization.ts';
import { effectiveSuspiciousFlags } from '../identity/flags.ts';
import type { Principal } from '../identity/principal.ts';
import type { PartialUser } from '../identity/user-record.ts';
import { randomBase62 } from '../platform/crypto/tokens.ts';
import { isAfter } from '../platform/state/event-bus.ts';
import type { Connection } from './connection.ts';
import { checkResume, type HandoffReply, type ResumeClaim, type SessionHandoff } from './handoff.ts';
import { initialChoice } from './presence.ts';
import { CLOSE, dispatchPrefix, FRAMES, type IdentifyPayload, type ResumePayload } from './protocol.ts';
import {
  GatewaySession,
  inShard,
  SESSION_EVICT_TOPIC,
  type SessionCredential,
  type SessionRegistry,
  SLOT_LEASE_MS,
  sessionSlotKey,
} from './sessions.ts';

type HandoffPresence = Extract<HandoffReply, { outcome: 'moved' }>['presence'];

export type IdentifyDeps = Pick<
  AppServices,
  | 'config'
  | 'clock'
  | 'credentials'
  | 'mfaView'
  | 'recordAuthFailure'
  | 'log'
  | 'rateLimiter'
  | 'userSettings'
  | 'presences'
  | 'calls'
  | 'slots'
  | 'bus'
> & {
  chat: ChatReadModelPort;
};

/** What else follows a session's start and resume (presence, in the gateway server). */
export interface SessionLifecycle {
  /** Resolves once the session counts as online (before READY is built). */
  started(session: GatewaySession, choice: ReturnType<typeof initialChoice>): Promise<void>;
  resumed(session: GatewaySession): void;
  /** A session taken over from another process brings its presence. */
  takeOver(session: GatewaySession, presence: HandoffPresence): void;
}

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
    private readonly lifecycle: SessionLifecycle,
    /** Resume of sessions other processes hold; absent or disabled on one process. */
    private readonly handoff?: SessionHandoff,
  ) {}

  async identify(connection: Connection, payload: IdentifyPayload): Promise<void> {
    if (!(await this.admitIdentify(connection, `gw-identify:ip:${connection.ipKey}`, IDENTIFY_PER_ADDRESS))) return;
    const principal = await this.resolveCredential(connection, payload.token);
    if (!principal || !connection.isOpen) return;
    if (!(await this.admitIdentify(connection, `gw-identify:user:${principal.user.id}`, IDENTIFY_PER_ACCOUNT))) return;
    const sessionId = randomBase62(32);
    if (!(await this.takeSessionSlot(principal, sessionId))) return connection.fail(CLOSE.TOO_MANY_SESSIONS);
    if (!connection.isOpen) {
      if (principal.kind !== 'bot') await this.deps.slots.release(sessionSlotKey(principal.user.id), sessionId);
      return;
    }

    const session = this.openSession(connection, principal, sessionId);
    if (session.isBot && payload.shard) session.shard = payload.shard;
    session.intents = payload.intents;
    session.largeThreshold = payload.largeThreshold;
    const settingsLoad: Promise<UserSettingsView | NoSettings> = session.isBot
      ? Promise.resolve({})
      : this.deps.userSettings.settings(session.userId, principal.user.locale);
    settingsLoad.catch(() => {});
    try {
      const index = await this.indexFor(session, payload.shard);
      if (index === undefined) {
        this.registry.remove(session);
        return connection.fail(CLOSE.SHARDING_REQUIRED);
      }
      for (const guildId of index.guildIds) this.registry.joinGuild(session, guildId);
      const settings = await settingsLoad;
      // Online before READY is built, so its guild payloads count this session too.
      await this.lifecycle.started(session, initialChoice(payload.presence, settings.status));
      const ready = await this.buildReady(session, principal, index, payload.shard, settings);
      // The socket may have closed, or the credential been revoked, while READY was being built.
      if (this.registry.get(session.id) !== session || session.socket !== connection) return;
      session.sendUnbuffered(dispatchPrefix('READY', ready.payload));
      for (const guild of ready.botBurst) session.sendUnbuffered(dispatchPrefix('GUILD_CREATE', guild));
      // Discord's READY says nothing of calls: each call in progress in one's DMs follows it as a CALL_CREATE.
      for (const call of ready.calls) session.sendUnbuffered(dispatchPrefix('CALL_CREATE', call));
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
    const claim = {
      userId: principal.user.id,
      credential: credentialOf(principal),
      restrictedNow: isRestricted(principal),
      seq: payload.seq,
      moving: false,
    };
    if (!session) {
      if (this.handoff?.enabled) return this.resumeFromElsewhere(connection, payload, claim);
      return this.invalidSession(connection);
    }
    const now = this.deps.clock.now();
    const verdict = checkResume(session, claim, now, this.deps.config.gatewayResumeWindowMs, (s, at, windowMs) =>
      this.registry.isExpired(s, at, windowMs),
    );
    if (verdict.outcome === 'foreign') return this.rejectToken(connection);
    if (verdict.outcome === 'sequence') return connection.fail(CLOSE.INVALID_SEQUENCE);
    if (verdict.outcome === 'invalid') {
      if (verdict.end) this.registry.remove(session);
      return this.invalidSession(connection);
    }
    // An identify (on any node) may have evicted it while it was detached: then it is gone.
    if (!(await this.sessionSlotBusy(session))) {
      this.registry.remove(session);
      if (connection.isOpen) this.invalidSession(connection);
      return;
    }
    if (!connection.isOpen) return;
    if (this.registry.get(session.id) !== session) return this.invalidSession(connection);
    // A second socket resuming the session takes it over; the old one is closed without losing the session.
    const previous = session.socket;
    if (previous && previous !== connection) {
      this.registry.detach(session, now);
      previous.closeWith(CLOSE.SESSION_UNAVAILABLE.code, CLOSE.SESSION_UNAVAILABLE.reason);
    }
    this.completeResume(connection, session, payload.seq);
  }

  /**
   * The session lives on another process, or nowhere (docs/gateway.md#resume): collect what the bus brings
   * for the account in a session that has not started, ask for the session, then carry on from what arrives.
   */
  private async resumeFromElsewhere(connection: Connection, payload: ResumePayload, claim: ResumeClaim): Promise<void> {
    const handoff = this.handoff as SessionHandoff;
    if (this.registry.sessionCount(claim.userId) >= this.limits.maxSessionsPerUser && !this.isBotClaim(claim))
      return this.invalidSession(connection);
    const index = claim.restrictedNow ? undefined : await this.deps.chat.readyIndex(claim.userId);
    if (!connection.isOpen || this.registry.get(payload.sessionId)) return this.invalidSession(connection);
    // From here to the request, synchronously: collection starts before the request is published.
    const local = new GatewaySession(
      payload.sessionId,
      claim.userId,
      this.isBotClaim(claim),
      claim.credential,
      claim.restrictedNow,
    );
    this.registry.add(local);
    for (const guildId of index?.guildIds ?? []) this.registry.joinGuild(local, guildId);
    local.membershipChanges = new Map();
    const reply = await handoff.request(payload.sessionId, { ...claim, moving: true });
    const changes = local.membershipChanges;
    local.membershipChanges = undefined;
    if (reply?.outcome !== 'moved' || local.lost) {
      // A gap while collecting (local.lost): what was collected is incomplete, so the session cannot move; it
      // ends (it was handed over already). Otherwise the collecting placeholder simply goes away.
      this.registry.remove(local, reply?.outcome !== 'moved');
      if (!connection.isOpen) return;
      if (reply?.outcome === 'foreign') return this.rejectToken(connection);
      if (reply?.outcome === 'sequence') return connection.fail(CLOSE.INVALID_SEQUENCE);
      return this.invalidSession(connection);
    }
    // The holder's guilds as of its bus position, then the joins and leaves collected here since.
    const guilds = new Set(reply.guildIds);
    for (const [guildId, joined] of changes) {
      if (joined) guilds.add(guildId);
      else guilds.delete(guildId);
    }
    const shard = reply.state.shard;
    for (const guildId of [...guilds]) if (shard && !inShard(guildId, shard)) guilds.delete(guildId);
    for (const guildId of [...local.guildIds]) if (!guilds.has(guildId)) this.registry.leaveGuild(local, guildId);
    for (const guildId of guilds) this.registry.joinGuild(local, guildId);
    local.adopt(
      reply.state,
      (tag) => isAfter(tag.mark, reply.position) && (tag.guildId === undefined || guilds.has(tag.guildId)),
    );
    this.lifecycle.takeOver(local, reply.presence);
    // Its slot moved with it; an identify that evicted it meanwhile (it was detached) ended it.
    if (!(await this.sessionSlotBusy(local))) {
      this.registry.remove(local);
      if (connection.isOpen) this.invalidSession(connection);
      return;
    }
    if (!connection.isOpen || this.registry.get(local.id) !== local) {
      // The socket went away meanwhile: the session is ours now, detached, resumable here.
      if (this.registry.get(local.id) === local) this.registry.detach(local, this.deps.clock.now());
      return;
    }
    this.completeResume(connection, local, payload.seq);
  }

  private completeResume(connection: Connection, session: GatewaySession, seq: number): void {
    const frames = session.replayAfter(seq) ?? [];
    this.registry.attach(session, connection);
    connection.session = session;
    session.acknowledge(seq);
    for (const frame of frames) connection.send(frame);
    connection.becameReady(session);
    session.deliver(RESUMED_PREFIX);
    this.lifecycle.resumed(session);
  }

  private isBotClaim(claim: ResumeClaim): boolean {
    return claim.credential.kind === 'bot';
  }

  /** The token is read from the payload only; a leading `Bot ` in any case is stripped (docs/gateway.md). */
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
   * Keeps an account under its cap of resumable sessions, counted across every process: at the cap the
   * session detached longest ago, wherever it lives, is evicted (it could only have been resumed); when every
   * session has a socket the new one is refused.
   */
  private async takeSessionSlot(principal: GatewayPrincipal, sessionId: string): Promise<boolean> {
    // Bots shard across many sessions; their identify allowance and the per-address socket cap bound them.
    if (principal.kind === 'bot') return true;
    const decision = await this.deps.slots.acquire(
      sessionSlotKey(principal.user.id),
      sessionId,
      this.limits.maxSessionsPerUser,
      { now: Date.now(), leaseMs: SLOT_LEASE_MS, evictIdle: true },
    );
    if (!decision.admitted) return false;
    // The holder (this process included: local delivery is synchronous) ends the evicted session.
    if (decision.evicted !== undefined)
      await this.deps.bus.publish(SESSION_EVICT_TOPIC, { sessionId: decision.evicted }).catch((error) => {
        this.deps.log.error('gateway session eviction failed', { error: (error as Error).message });
      });
    return true;
  }

  /** The session's slot is held (and now busy): false when it was evicted or lapsed. */
  private async sessionSlotBusy(session: GatewaySession): Promise<boolean> {
    if (session.isBot) return true;
    return this.deps.slots.busy(sessionSlotKey(session.userId), session.id, {
      now: Date.now(),
      leaseMs: SLOT_LEASE_MS,
    });
  }

  private rejectToken(connection: Connection): void {
    this.deps.recordAuthFailure(connection.ip, connection.strict).catch(() => {});
    connection.fail(CLOSE.INVALID_TOKEN);
  }

  private invalidSession(connection: Connection): void {
    connection.send(FRAMES.invalidSession);
    connection.backToUnauthenticated();
  }

  private openSession(connection: Connection, principal: GatewayPrincipal, id: string): GatewaySession {
    const session = new GatewaySession(
      id,
      principal.user.id,
      principal.kind === 'bot',
      credentialOf(principal),
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
    if (session.isBot && shard) ids = ids.filter((id) => inShard(id, shard));
    if (session.isBot && ids.length > this.limits.maxGuildsPerShard) return undefined;
    return { guildIds: ids, hasPrivateChannels: index.hasPrivateChannels };
  }

  private async buildReady(
    session: GatewaySession,
    principal: GatewayPrincipal,
    index: ReadyIndex,
    shard: [number, number] | undefined,
    settings: UserSettingsView | NoSettings,
  ): Promise<{
    payload: ReadyView;
    botBurst: (GuildPayloadView | UnavailableGuild)[];
    calls: CallCreateView[];
  }> {
    const { chat, config } = this.deps;
    // The guild snapshots are cached and messages do not invalidate them: each channel's newest message id is
    // read now, in one query for every guild, so unread markers after a reload are right.
    const lastMessageIds = chat.lastMessageIds(index.guildIds);
    const [user, guilds, privateChannels, notes, relationships, presences, readState, guildSettings] =
      await Promise.all([
        privateUserView(this.deps, principal.user),
        Promise.all(
          index.guildIds.map(
            async (id): Promise<GuildPayloadView | UnavailableGuild> =>
              (await chat.guildPayload(id, session.userId, {
                reducedMembers: true,
                largeThreshold: session.largeThreshold,
                lastMessageIds: await lastMessageIds,
              })) ?? { id, unavailable: true },
          ),
        ),
        index.hasPrivateChannels ? chat.privateChannelsOf(session.userId) : [],
        session.isBot ? {} : this.deps.userSettings.notes(session.userId),
        session.isBot ? [] : chat.relationshipsOf(session.userId),
        session.isBot ? [] : this.friendPresences(session.userId),
        session.isBot
          ? ({ version: 0, partial: false, entries: [] } satisfies ReadStatePayload)
          : chat.readStateOf(session.userId),
        session.isBot
          ? ({ version: 0, partial: false, entries: [] } satisfies GuildSettingsPayload)
          : chat.guildSettingsOf(session.userId),
      ]);
    const payload: ReadyView = {
      v: 1,
      version: 1,
      session_id: session.id,
      resume_gateway_url: gatewayUrl(config),
      user,
      guilds: session.isBot ? [] : guilds,
      private_channels: privateChannels,
      relationships,
      presences,
      users: readyUsers(relationships, privateChannels),
      sessions: [],
      read_state: readState,
      user_settings: settings,
      user_guild_settings: guildSettings,
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
    // Read after the session was registered: a call that changes from here on also arrives as an event.
    const calls = session.isBot ? [] : await this.deps.calls.ongoing(privateChannels.map((c) => String(c.id)));
    return { payload, botBurst: session.isBot ? guilds : [], calls };
  }

  /** READY `presences`: the friends who are online, without `guild_id`. */
  private async friendPresences(userId: string): Promise<PresenceView[]> {
    const friends = await this.deps.chat.friendIds(userId);
    if (friends.length === 0) return [];
    const found = await this.deps.presences.getMany(friends, Date.now());
    return [...found].map(([id, presence]) => presenceView(id, presence));
  }
}

/** Suspicious-flagged user sessions see only events addressed to them (docs/gateway.md). */
function isRestricted(principal: GatewayPrincipal): boolean {
  const user = principal.user;
  return (
    principal.kind === 'session' && effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) !== 0
  );
}

function credentialOf(principal: GatewayPrincipal): SessionCredential {
  return principal.kind === 'session'
    ? { kind: 'session', sessionIdHash: principal.sessionIdHash }
    : { kind: 'bot', applicationId: principal.applicationId };
}

/**
 * READY `users`: each user READY refers to outside guilds — relationships and DM recipients — once, as the
 * platform's own clients read them into their user store.
 */
function readyUsers(
  relationships: readonly { user: PartialUser | { id: string } }[],
  privateChannels: readonly { recipients?: readonly PartialUser[] }[],
): PartialUser[] {
  const users = new Map<string, PartialUser>();
  for (const { user } of relationships) if ('username' in user) users.set(user.id, user);
  for (const channel of privateChannels) for (const user of channel.recipients ?? []) users.set(user.id, user);
  return [...users.values()];
}
