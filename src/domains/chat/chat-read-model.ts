import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { subjectFor, toOverwrites } from './access.ts';
import { CHAT_INVALIDATE_TOPIC, type ChatInvalidation } from './events.ts';
import { renderGuildPayload } from './guild-payload.ts';
import { computeChannelPermissions, has, PERMISSIONS } from './permissions.ts';
import { listPrivateChannels } from './private-channels.ts';
import type { ChatReadModelPort, ReadyIndex } from './read-model.ts';
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

/** Every member row of one guild, and how many of them must be read again. */
class GuildMembers {
  private staleCount = 0;

  constructor(private readonly entries: Map<string, MemberEntry>) {}

  get(userId: string): MemberEntry | undefined {
    return this.entries.get(userId);
  }

  markStale(userId: string): void {
    if (this.entries.get(userId) === STALE) return;
    this.entries.set(userId, STALE);
    this.staleCount += 1;
  }

  /** Settles a stale entry with what the database holds now (null: no longer a member). */
  settle(userId: string, row: MemberRow | null): void {
    if (this.entries.get(userId) !== STALE) return;
    this.staleCount -= 1;
    if (row) this.entries.set(userId, row);
    else this.entries.delete(userId);
  }

  /** The member count, when no entry is in doubt (a stale entry may be a member who left). */
  exactCount(): number | undefined {
    return this.staleCount === 0 ? this.entries.size : undefined;
  }
}

/**
 * The gateway's view of the chat core. `canViewChannel` runs once per connection per channel-scoped
 * dispatch, so it reads from in-memory snapshots: per guild, the guild row, roles and channels, and every
 * member's row (loaded in one query, so a fan-out to a thousand members costs no query per member). Every
 * chat change publishes an invalidation on the event bus; a short TTL bounds staleness if one is lost.
 * Concurrent misses share one load.
 */
export class ChatReadModel implements ChatReadModelPort {
  private readonly snapshots: TtlCache<string, GuildSnapshot>;
  private readonly memberMaps: TtlCache<string, GuildMembers>;
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
    if (message.userId) this.memberMaps.get(message.guildId)?.markStale(message.userId);
    else this.snapshots.delete(message.guildId);
  }

  async readyIndex(userId: string): Promise<ReadyIndex> {
    const [row] = await this.store.db.query<{ guild_ids: string[]; has_private_channels: boolean }>(
      `SELECT ARRAY(SELECT guild_id::text FROM members WHERE user_id = $1 ORDER BY guild_id) AS guild_ids,
              EXISTS (SELECT 1 FROM dm_recipients WHERE user_id = $1) AS has_private_channels`,
      [userId],
    );
    return { guildIds: row?.guild_ids ?? [], hasPrivateChannels: row?.has_private_channels ?? false };
  }

  /**
   * READY and GUILD_CREATE for many connections of one guild read the same guild, roles and channels:
   * they come from the snapshot, the viewer's member row and the member count from the member map (the
   * count is queried only while a member entry is in doubt).
   */
  async guildPayload(
    guildId: string,
    viewerId: string,
    options: { reducedMembers?: boolean } = {},
  ): Promise<Record<string, unknown> | undefined> {
    const [snapshot, members] = await Promise.all([this.snapshot(guildId), this.members(guildId)]);
    const member = await this.memberIn(members, guildId, viewerId);
    if (!snapshot || !member) return undefined;
    const memberCount = members.exactCount() ?? (await this.store.memberCount(guildId));
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
      params.push(options.userIds.filter(isSnowflake));
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

  private async members(guildId: string): Promise<GuildMembers> {
    return (
      this.memberMaps.get(guildId) ??
      this.once(`members:${guildId}`, async () => {
        const generation = this.generations.get(guildId);
        const rows = await this.store.db.query<MemberRow>(
          `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1`,
          [guildId],
        );
        const members = new GuildMembers(new Map(rows.map((r) => [r.user_id, r])));
        if (this.generations.get(guildId) === generation) this.memberMaps.set(guildId, members);
        return members;
      })
    );
  }

  private async member(guildId: string, userId: string): Promise<MemberRow | null> {
    return this.memberIn(await this.members(guildId), guildId, userId);
  }

  private async memberIn(members: GuildMembers, guildId: string, userId: string): Promise<MemberRow | null> {
    const entry = members.get(userId);
    if (entry === undefined) return null;
    if (entry !== STALE) return entry;
    const row = (await this.store.member(guildId, userId)) ?? null;
    members.settle(userId, row);
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
