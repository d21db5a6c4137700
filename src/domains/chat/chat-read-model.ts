import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { subjectFor, toOverwrites } from './access.ts';
import { CHAT_INVALIDATE_TOPIC, type ChatInvalidation } from './events.ts';
import { renderGuildPayload } from './guild-payload.ts';
import { computeChannelPermissions, has, PERMISSIONS } from './permissions.ts';
import { listPrivateChannels } from './private-channels.ts';
import type { ChatReadModelPort } from './read-model.ts';
import { type ChannelRow, type GuildRow, MEMBER_COLUMNS, type MemberRow, type RoleRow } from './rows.ts';
import type { ChatStore } from './store.ts';
import { memberView } from './views.ts';

interface GuildSnapshot {
  guild: GuildRow;
  roles: RoleRow[];
  channels: Map<string, ChannelRow>;
}

/** A member whose row changed since the guild's members were loaded: read it again on next use. */
const STALE = Symbol('stale member');
type MemberEntry = MemberRow | typeof STALE;

/**
 * The gateway's view of the chat core. `canViewChannel` runs once per connection per channel-scoped
 * dispatch, so it reads from in-memory snapshots: per guild, the guild row, roles and channels, and every
 * member's row (loaded in one query, so a fan-out to a thousand members costs no query per member). Every
 * chat change publishes an invalidation on the event bus; a short TTL bounds staleness if one is lost.
 * Concurrent misses share one load.
 */
export class ChatReadModel implements ChatReadModelPort {
  private readonly snapshots: TtlCache<string, GuildSnapshot>;
  private readonly memberMaps: TtlCache<string, Map<string, MemberEntry>>;
  private readonly loading = new Map<string, Promise<unknown>>();
  /** Bumped by every invalidation of a guild, so a load that raced with a change is not cached. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly store: ChatStore,
    bus: EventBus,
    private readonly clock: Clock,
  ) {
    this.snapshots = new TtlCache(10_000, 30_000);
    this.memberMaps = new TtlCache(10_000, 30_000);
    bus.subscribe<ChatInvalidation>(CHAT_INVALIDATE_TOPIC, (message) => this.forget(message));
  }

  forget(message: ChatInvalidation): void {
    this.generations.set(message.guildId, (this.generations.get(message.guildId) ?? 0) + 1);
    if (message.userId) this.memberMaps.get(message.guildId)?.set(message.userId, STALE);
    else this.snapshots.delete(message.guildId);
  }

  async guildIdsOf(userId: string): Promise<string[]> {
    const rows = await this.store.db.query<{ guild_id: string }>(
      'SELECT guild_id FROM members WHERE user_id = $1 ORDER BY guild_id',
      [userId],
    );
    return rows.map((r) => r.guild_id);
  }

  /**
   * READY and GUILD_CREATE for many connections of one guild read the same guild, roles and channels:
   * they come from the snapshot, the viewer's member row from the member map; only the count is queried.
   */
  async guildPayload(
    guildId: string,
    viewerId: string,
    options: { reducedMembers?: boolean } = {},
  ): Promise<Record<string, unknown> | undefined> {
    const [snapshot, member, memberCount] = await Promise.all([
      this.snapshot(guildId),
      this.member(guildId, viewerId),
      this.store.memberCount(guildId),
    ]);
    if (!snapshot || !member) return undefined;
    return renderGuildPayload(
      this.store,
      { guild: snapshot.guild, roles: snapshot.roles, channels: [...snapshot.channels.values()], member, memberCount },
      viewerId,
      this.clock.now(),
      options,
    );
  }

  privateChannelsOf(userId: string): Promise<Record<string, unknown>[]> {
    return listPrivateChannels(this.store, userId);
  }

  async canViewChannel(userId: string, guildId: string, channelId: string): Promise<boolean> {
    const member = await this.member(guildId, userId);
    if (!member) return false;
    let snapshot = await this.snapshot(guildId);
    if (!snapshot) return false;
    let channel = snapshot.channels.get(channelId);
    if (!channel) {
      // A channel newer than the snapshot: reload once rather than wait for the invalidation.
      this.snapshots.delete(guildId);
      snapshot = await this.snapshot(guildId);
      channel = snapshot?.channels.get(channelId);
      if (!snapshot || !channel) return false;
    }
    const subject = subjectFor(snapshot.guild, snapshot.roles, member, this.clock.now());
    return has(computeChannelPermissions(subject, toOverwrites(channel)), PERMISSIONS.VIEW_CHANNEL);
  }

  async searchMembers(
    guildId: string,
    options: { query?: string; limit: number; userIds?: string[] },
  ): Promise<Record<string, unknown>[]> {
    const limit = Math.max(1, Math.min(options.limit || 1000, 1000));
    const params: unknown[] = [guildId];
    let filter = '';
    if (options.userIds && options.userIds.length > 0) {
      params.push(options.userIds.filter((id) => /^\d{1,20}$/.test(id)));
      filter = ` AND m.user_id = ANY($${params.length}::bigint[])`;
    } else if (options.query) {
      params.push(`${options.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      filter = ` AND (lower(u.username) LIKE $${params.length} OR lower(coalesce(m.nick, '')) LIKE $${params.length})`;
    }
    params.push(limit);
    const rows = await this.store.db.query<MemberRow>(
      `SELECT ${MEMBER_COLUMNS} FROM members m JOIN users u ON u.id = m.user_id
        WHERE m.guild_id = $1${filter} ORDER BY m.user_id LIMIT $${params.length}`,
      params,
    );
    const users = await this.store.usersByIds(rows.map((r) => r.user_id));
    return rows.map((row) => memberView(row, users.get(row.user_id)));
  }

  private snapshot(guildId: string): Promise<GuildSnapshot | undefined> {
    const hit = this.snapshots.get(guildId);
    if (hit) return Promise.resolve(hit);
    return this.once(`snapshot:${guildId}`, async () => {
      const generation = this.generations.get(guildId);
      const [guild, roles, channels] = await Promise.all([
        this.store.guild(guildId),
        this.store.roles(guildId),
        this.store.guildChannels(guildId),
      ]);
      if (!guild) return undefined;
      const snapshot = { guild, roles, channels: new Map(channels.map((c) => [c.id, c])) };
      if (this.generations.get(guildId) === generation) this.snapshots.set(guildId, snapshot);
      return snapshot;
    });
  }

  private async member(guildId: string, userId: string): Promise<MemberRow | null> {
    const members =
      this.memberMaps.get(guildId) ??
      (await this.once(`members:${guildId}`, async () => {
        const generation = this.generations.get(guildId);
        const rows = await this.store.db.query<MemberRow>(
          `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1`,
          [guildId],
        );
        const map = new Map<string, MemberEntry>(rows.map((r) => [r.user_id, r]));
        if (this.generations.get(guildId) === generation) this.memberMaps.set(guildId, map);
        return map;
      }));
    const entry = members.get(userId);
    if (entry === undefined) return null;
    if (entry !== STALE) return entry;
    const row = (await this.store.member(guildId, userId)) ?? null;
    if (members.get(userId) === STALE) {
      if (row) members.set(userId, row);
      else members.delete(userId);
    }
    return row;
  }

  /** Runs `load` once for concurrent callers asking for the same key. */
  private once<T>(key: string, load: () => Promise<T>): Promise<T> {
    const pending = this.loading.get(key);
    if (pending) return pending as Promise<T>;
    const promise = load().finally(() => this.loading.delete(key));
    this.loading.set(key, promise);
    return promise;
  }
}
