import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { subjectFor, toOverwrites } from './access.ts';
import { CHAT_INVALIDATE_TOPIC, type ChatInvalidation } from './events.ts';
import { buildGuildPayload } from './guild-payload.ts';
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

/**
 * The gateway's view of the chat core. `canViewChannel` runs once per connection per channel-scoped
 * dispatch, so it reads from in-memory snapshots (guild + roles + channels, and member rows) that every
 * chat change invalidates over the event bus; a short TTL bounds staleness if an invalidation is lost.
 */
export class ChatReadModel implements ChatReadModelPort {
  private readonly snapshots: TtlCache<string, GuildSnapshot>;
  private readonly members: TtlCache<string, MemberRow | null>;

  constructor(
    private readonly store: ChatStore,
    bus: EventBus,
    private readonly clock: Clock,
  ) {
    this.snapshots = new TtlCache(10_000, 30_000);
    this.members = new TtlCache(500_000, 30_000);
    bus.subscribe<ChatInvalidation>(CHAT_INVALIDATE_TOPIC, (message) => this.forget(message));
  }

  forget(message: ChatInvalidation): void {
    if (message.userId) this.members.delete(`${message.guildId}:${message.userId}`);
    else this.snapshots.delete(message.guildId);
  }

  async guildIdsOf(userId: string): Promise<string[]> {
    const rows = await this.store.db.query<{ guild_id: string }>(
      'SELECT guild_id FROM members WHERE user_id = $1 ORDER BY guild_id',
      [userId],
    );
    return rows.map((r) => r.guild_id);
  }

  guildPayload(
    guildId: string,
    viewerId: string,
    options: { reducedMembers?: boolean } = {},
  ): Promise<Record<string, unknown> | undefined> {
    return buildGuildPayload(this.store, guildId, viewerId, this.clock.now(), options);
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

  private async snapshot(guildId: string): Promise<GuildSnapshot | undefined> {
    const hit = this.snapshots.get(guildId);
    if (hit) return hit;
    const [guild, roles, channels] = await Promise.all([
      this.store.guild(guildId),
      this.store.roles(guildId),
      this.store.guildChannels(guildId),
    ]);
    if (!guild) return undefined;
    const snapshot = { guild, roles, channels: new Map(channels.map((c) => [c.id, c])) };
    this.snapshots.set(guildId, snapshot);
    return snapshot;
  }

  private async member(guildId: string, userId: string): Promise<MemberRow | null> {
    const key = `${guildId}:${userId}`;
    const hit = this.members.get(key);
    if (hit !== undefined) return hit;
    const row = (await this.store.member(guildId, userId)) ?? null;
    this.members.set(key, row);
    return row;
  }
}
