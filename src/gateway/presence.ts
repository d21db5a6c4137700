import type { GuildJoins } from '../domains/chat/guild-joins.ts';
import type { ChatReadModelPort } from '../domains/chat/read-model.ts';
import type { Dispatch, Dispatcher } from '../domains/events/dispatch.ts';
import { offlinePresenceView, presenceView } from '../domains/users/presence-view.ts';
import { TtlCache } from '../platform/cache/ttl-cache.ts';
import type { Logger } from '../platform/log.ts';
import {
  type PresenceChange,
  type PresenceStore,
  type SessionPresence,
  type SessionStatus,
  samePresence,
} from '../platform/state/presences.ts';
import type { PresencePayload } from './protocol.ts';
import type { GatewaySession, SessionRegistry } from './sessions.ts';

/** A session's entry lives this long without a refresh (a process that died stops refreshing). */
const ENTRY_TTL_MS = 150_000;
/** How often a process refreshes the entries of its attached sessions. */
const REFRESH_EVERY_MS = 60_000;

/** What a session chose to show, kept while its socket is away so a resume restores it. */
type Choice = Omit<SessionPresence, 'updatedAt' | 'expiresAt'>;

/** A session's presence as it moves to another process with the session (docs/gateway.md#resume). */
export interface HandedOverPresence {
  choice: Choice;
  updatedAt: number;
}

/** The first presence of a session: the identify payload's, else the account's `status` setting. */
export function initialChoice(presence: PresencePayload | undefined, settingStatus: unknown): Choice {
  const fromSetting: SessionStatus =
    settingStatus === 'idle' || settingStatus === 'dnd' || settingStatus === 'invisible' ? settingStatus : 'online';
  if (!presence) return { status: fromSetting, activities: [], platform: 'web', afk: false, customStatus: null };
  return choiceOf(presence);
}

function choiceOf(presence: PresencePayload): Choice {
  // `offline` sent by a client means "appear offline", which is what invisible does.
  const status: SessionStatus = presence.status === 'offline' ? 'invisible' : presence.status;
  return {
    status,
    activities: presence.activities,
    platform: presence.mobile ? 'mobile' : 'web',
    afk: presence.afk,
    customStatus: presence.customStatus,
  };
}

/**
 * Presence of this process's gateway sessions (docs/gateway.md, "Presence"). A session is online from READY
 * until its socket goes away (a resume brings it back); the user's presence is the aggregate of their sessions
 * across every process, kept in the shared `PresenceStore`. When the aggregate changes, PRESENCE_UPDATE goes
 * to every guild the user shares (with `guild_id`) and to their friends (without). Changes of one user are
 * applied in order; different users proceed in parallel.
 */
export class PresenceTracker {
  private readonly choices = new Map<string, { session: GatewaySession; choice: Choice; updatedAt: number }>();
  private readonly live = new Set<string>();
  private readonly chains = new Map<string, Promise<void>>();
  /** Friend ids of users with sessions here, so a reconnect storm does not read them once per change. */
  private readonly friends = new TtlCache<string, Promise<string[]>>(100_000, 60_000);
  private lastRefresh = Date.now();

  constructor(
    private readonly deps: {
      presences: PresenceStore;
      dispatcher: Dispatcher;
      chat: Pick<ChatReadModelPort, 'friendIds'>;
      /** Ends the temporary memberships of a user whose last session went away (chat domain). */
      chatCore: { joins: Pick<GuildJoins, 'endTemporary'> };
      log: Logger;
    },
    private readonly registry: SessionRegistry,
  ) {}

  /** What the tracker derived from dispatches (friend lists) is dropped: some dispatches were lost. */
  forgetDerived(): void {
    this.friends.clear();
  }

  /**
   * The session is about to get READY: it shows its first presence. Resolves once stored, so READY's guild
   * payloads count the session itself.
   */
  started(session: GatewaySession, choice: Choice): Promise<void> {
    if (session.restricted) return Promise.resolve();
    this.choices.set(session.id, { session, choice, updatedAt: Date.now() });
    this.live.add(session.id);
    return this.write(session, [...session.guildIds]);
  }

  /** Op 3. */
  changed(session: GatewaySession, presence: PresencePayload): void {
    const known = this.choices.get(session.id);
    if (!known) return;
    known.choice = choiceOf(presence);
    known.updatedAt = Date.now();
    if (this.live.has(session.id)) void this.write(session, [...session.guildIds]);
  }

  /** The socket went away: the session stops counting until it resumes. */
  detached(session: GatewaySession): void {
    if (!this.live.delete(session.id)) return;
    void this.write(session, [...session.guildIds]);
  }

  resumed(session: GatewaySession): void {
    if (!this.choices.has(session.id) || this.live.has(session.id)) return;
    this.live.add(session.id);
    void this.write(session, [...session.guildIds]);
  }

  /** The session moves to another process: forgotten here without a write; the taker writes it on resume. */
  handOver(session: GatewaySession): HandedOverPresence | undefined {
    const known = this.choices.get(session.id);
    this.choices.delete(session.id);
    this.live.delete(session.id);
    return known && { choice: known.choice, updatedAt: known.updatedAt };
  }

  /** A session taken over from another process carries its presence; `resumed` then shows it. */
  takeOver(session: GatewaySession, presence: HandedOverPresence | undefined): void {
    if (presence && !session.restricted) this.choices.set(session.id, { session, ...presence });
  }

  /** The session is gone for good; `guildIds` is what it was in (the registry has already cleared it). */
  ended(session: GatewaySession, guildIds: readonly string[]): void {
    if (!this.choices.delete(session.id)) return;
    const wasLive = this.live.delete(session.id);
    if (wasLive) void this.write(session, guildIds);
  }

  /**
   * Dispatches seen by this process: a status chosen in the settings (another client, the REST API) applies to
   * every session of the account, and a user who joins a guild shows their presence to its members.
   */
  onDispatch(dispatch: Dispatch): void {
    if (dispatch.event === 'GUILD_MEMBER_ADD') {
      this.showToNewGuild(dispatch.payload);
      return;
    }
    // A relationship changed on both sides: each side's friend list is read again on its next change.
    if (
      (dispatch.event === 'RELATIONSHIP_ADD' ||
        dispatch.event === 'RELATIONSHIP_UPDATE' ||
        dispatch.event === 'RELATIONSHIP_REMOVE') &&
      dispatch.audience.kind === 'users'
    ) {
      const otherId = dispatch.payload.id;
      for (const userId of dispatch.audience.userIds) this.friends.delete(userId);
      if (typeof otherId === 'string') this.friends.delete(otherId);
      return;
    }
    if (dispatch.event !== 'USER_SETTINGS_UPDATE' || dispatch.audience.kind !== 'users') return;
    const status = dispatch.payload.status;
    if (status !== 'online' && status !== 'idle' && status !== 'dnd' && status !== 'invisible') return;
    const now = Date.now();
    for (const userId of dispatch.audience.userIds)
      for (const session of this.registry.ofUser(userId) ?? []) {
        const known = this.choices.get(session.id);
        if (!known || known.choice.status === status) continue;
        known.choice = { ...known.choice, status };
        known.updatedAt = now;
        if (this.live.has(session.id)) void this.write(session, [...session.guildIds]);
      }
  }

  private showToNewGuild(payload: Record<string, unknown>): void {
    const userId = (payload.user as { id?: unknown } | undefined)?.id;
    const guildId = payload.guild_id;
    if (typeof userId !== 'string' || typeof guildId !== 'string') return;
    const sessions = [...(this.registry.ofUser(userId) ?? [])];
    if (!sessions.some((session) => this.live.has(session.id))) return;
    this.deps.presences
      .getMany([userId], Date.now())
      .then((found) => {
        const presence = found.get(userId);
        if (!presence) return;
        return this.deps.dispatcher.dispatch('PRESENCE_UPDATE', presenceView(userId, presence, guildId), {
          kind: 'guild',
          guildId,
        });
      })
      .catch((error) => this.deps.log.error('presence announce failed', { error: (error as Error).message }));
  }

  /** Called by the gateway's sweep: keeps this process's entries alive in the shared store. */
  sweep(): void {
    const now = Date.now();
    if (now - this.lastRefresh < REFRESH_EVERY_MS) return;
    this.lastRefresh = now;
    const entries = [...this.live].flatMap((sessionId) => {
      const known = this.choices.get(sessionId);
      return known ? [{ userId: known.session.userId, sessionId, entry: this.entry(known, now) }] : [];
    });
    this.deps.presences
      .refresh(entries)
      .catch((error) => this.deps.log.error('presence refresh failed', { error: (error as Error).message }));
  }

  /** Settles once every queued change has been written and announced (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private entry(known: { choice: Choice; updatedAt: number }, now: number): SessionPresence {
    return { ...known.choice, updatedAt: known.updatedAt, expiresAt: now + ENTRY_TTL_MS };
  }

  /**
   * Writes the session's current entry (or its absence) and announces the user's new presence if it changed.
   * Resolves once the entry is stored (the announcement follows on the user's chain).
   */
  private write(session: GatewaySession, guildIds: readonly string[]): Promise<void> {
    const userId = session.userId;
    let stored: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      stored = resolve;
    });
    const run = async () => {
      const now = Date.now();
      const known = this.live.has(session.id) ? this.choices.get(session.id) : undefined;
      let change: PresenceChange;
      try {
        change = await this.deps.presences.update(userId, session.id, known ? this.entry(known, now) : undefined, now);
      } finally {
        stored();
      }
      // The user's last session anywhere is gone: temporary memberships end (before the presence goes out, so
      // whoever sees the offline presence can already read the outcome back).
      if (!known && change.sessionsAfter === 0)
        await this.deps.chatCore.joins.endTemporary(userId).catch((error) => {
          this.deps.log.error('ending temporary memberships failed', { error: (error as Error).message });
        });
      if (!samePresence(change.before, change.after)) await this.announce(userId, change, guildIds);
    };
    const previous = this.chains.get(userId) ?? Promise.resolve();
    const next = previous
      .then(run)
      .catch((error) => this.deps.log.error('presence update failed', { error: (error as Error).message }));
    this.chains.set(userId, next);
    void next.then(() => {
      if (this.chains.get(userId) === next) this.chains.delete(userId);
    });
    return written;
  }

  private async announce(userId: string, change: PresenceChange, sessionGuildIds: readonly string[]): Promise<void> {
    const { after } = change;
    const view = (guildId?: string) =>
      after ? presenceView(userId, after, guildId) : offlinePresenceView(userId, guildId);
    // A user's sessions on this process together know every guild they are in (a bot's shards split them).
    const guildIds = new Set(sessionGuildIds);
    for (const other of this.registry.ofUser(userId) ?? []) for (const id of other.guildIds) guildIds.add(id);
    const { dispatcher } = this.deps;
    const sends = [...guildIds].map((guildId) =>
      dispatcher.dispatch('PRESENCE_UPDATE', view(guildId), { kind: 'guild', guildId }),
    );
    let friendsLoad = this.friends.get(userId);
    if (!friendsLoad) {
      friendsLoad = this.deps.chat.friendIds(userId);
      this.friends.set(userId, friendsLoad);
      friendsLoad.catch(() => this.friends.delete(userId));
    }
    const friends = await friendsLoad;
    if (friends.length > 0)
      sends.push(dispatcher.dispatch('PRESENCE_UPDATE', view(), { kind: 'users', userIds: friends }));
    await Promise.all(sends);
  }
}
