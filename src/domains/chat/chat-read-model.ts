import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { VisibilityBefore } from '../events/dispatch.ts';
import { subjectFor, toOverwrites } from './access.ts';
import { type EmojiRow, guildEmojis } from './emoji-store.ts';
import { CHAT_INVALIDATE_TOPIC, type ChatInvalidation } from './events.ts';
import { type GuildPayloadView, renderGuildPayload } from './guild-payload.ts';
import type { GuildSettingsPayload, GuildSettingsStore } from './guild-settings-store.ts';
import {
  computeBasePermissions,
  computeChannelPermissions,
  has,
  type Overwrite,
  PERMISSIONS,
  parsePermissions,
} from './permissions.ts';
import { listPrivateChannels } from './private-channels.ts';
import type { ChatReadModelPort, ReadyIndex, VisibilityChange } from './read-model.ts';
import type { ReadStatePayload, ReadStateStore } from './read-state-store.ts';
import { listRelationships, type RelationshipView } from './relationships.ts';
import { type ChannelRow, type GuildRow, MEMBER_COLUMNS, type MemberRow, type RoleRow } from './rows.ts';
import { guildStickers, type StickerRow } from './sticker-store.ts';
import { type ChatStore, PRESENCE_MEMBER_LIMIT } from './store.ts';
import { channelView, type MemberView, memberView, type PrivateChannelView } from './views.ts';

interface GuildSnapshot {
  guild: GuildRow;
  roles: RoleRow[];
  channels: Map<string, ChannelRow>;
}

interface Expressions {
  emojis: EmojiRow[];
  stickers: StickerRow[];
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

  /** Ids of the members whose row is in doubt. */
  staleIds(): string[] {
    if (this.staleCount === 0) return [];
    const ids: string[] = [];
    for (const [id, entry] of this.entries) if (entry === STALE) ids.push(id);
    return ids;
  }

  /** Every user id with an entry (stale ones included: `settle` them before trusting their row). */
  userIds(): IterableIterator<string> {
    return this.entries.keys();
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
  /** Guild payloads' `emojis` and `stickers`, apart from the snapshot so permission checks never read them. */
  private readonly expressionLists: TtlCache<string, Expressions>;
  private readonly loading = new Map<string, Promise<unknown>>();
  /** Bumped by every invalidation of a guild, so a load that raced with a change is not cached. */
  private readonly generations = new Map<string, number>();
  /** Bumped when every guild is invalidated at once (a gap on the invalidation topic). */
  private epoch = 0;

  constructor(
    private readonly store: ChatStore,
    bus: EventBus,
    private readonly clock: Clock,
    private readonly readStates: ReadStateStore,
    private readonly guildSettings: GuildSettingsStore,
  ) {
    this.snapshots = new TtlCache(10_000, 30_000);
    this.memberMaps = new TtlCache(10_000, 30_000);
    this.expressionLists = new TtlCache(10_000, 30_000);
    bus.subscribe(CHAT_INVALIDATE_TOPIC, (message) => this.forget(message));
    // Invalidations may have been lost (a Redis reconnect): nothing cached can be trusted.
    bus.onGap(CHAT_INVALIDATE_TOPIC, () => this.forgetAll());
  }

  /** A guild's cache generation: loads that began under another one do not cache what they read. */
  private generation(guildId: string): string {
    return `${this.epoch}.${this.generations.get(guildId) ?? 0}`;
  }

  forgetAll(): void {
    this.epoch += 1;
    this.generations.clear();
    this.snapshots.clear();
    this.memberMaps.clear();
    this.expressionLists.clear();
  }

  forget(message: ChatInvalidation): void {
    this.generations.set(message.guildId, (this.generations.get(message.guildId) ?? 0) + 1);
    if (message.members) this.memberMaps.delete(message.guildId);
    if (message.userId) this.memberMaps.get(message.guildId)?.markStale(message.userId);
    else {
      this.snapshots.delete(message.guildId);
      this.expressionLists.delete(message.guildId);
    }
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
    options: { reducedMembers?: boolean; largeThreshold?: number; lastMessageIds?: ReadonlyMap<string, string> } = {},
  ): Promise<GuildPayloadView | undefined> {
    const [snapshot, members, expressions] = await Promise.all([
      this.snapshot(guildId),
      this.members(guildId),
      this.expressions(guildId),
    ]);
    const member = await this.memberIn(members, guildId, viewerId);
    if (!snapshot || !member) return undefined;
    const memberCount = members.exactCount() ?? (await this.store.memberCount(guildId));
    return renderGuildPayload(
      this.store,
      {
        guild: snapshot.guild,
        roles: snapshot.roles,
        channels: withLastMessageIds([...snapshot.channels.values()], options.lastMessageIds),
        emojis: expressions.emojis,
        stickers: expressions.stickers,
        member,
        memberCount,
      },
      viewerId,
      this.clock.now(),
      options,
    );
  }

  lastMessageIds(guildIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    return guildIds.length === 0 ? Promise.resolve(new Map()) : this.store.lastMessageIds(guildIds);
  }

  /** From the member map, queried only while a member entry is in doubt. */
  async memberCount(guildId: string): Promise<number> {
    return (await this.members(guildId)).exactCount() ?? this.store.memberCount(guildId);
  }

  /**
   * Ids of a guild's members whose presence its payloads show, at most `PRESENCE_MEMBER_LIMIT`, from the member
   * map (a member whose row is in doubt is included; a presence shown for one who just left is harmless).
   */
  async memberIds(guildId: string): Promise<string[]> {
    const ids: string[] = [];
    for (const id of (await this.members(guildId)).userIds()) {
      if (ids.length >= PRESENCE_MEMBER_LIMIT) break;
      ids.push(id);
    }
    return ids;
  }

  relationshipsOf(userId: string): Promise<RelationshipView[]> {
    return listRelationships(this.store, userId);
  }

  friendIds(userId: string): Promise<string[]> {
    return this.store.friendIds(userId);
  }

  membershipsOf(userId: string): Promise<MemberRow[]> {
    return this.store.membershipsOf(userId);
  }

  readStateOf(userId: string): Promise<ReadStatePayload> {
    return this.readStates.readyState(userId);
  }

  /**
   * The channel ids that keep an override come from the guild snapshots (READY loads the same ones for its guild
   * payloads, concurrent misses sharing one load), not from another read of the channels.
   */
  guildSettingsOf(userId: string): Promise<GuildSettingsPayload> {
    return this.guildSettings.readyState(userId, this.clock.now(), async (guildId) => {
      const snapshot = await this.snapshot(guildId);
      return new Set(snapshot ? snapshot.channels.keys() : []);
    });
  }

  privateChannelsOf(userId: string): Promise<PrivateChannelView[]> {
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

  /**
   * Of the members a message pings (the ids in `users`, holders of a role in `roles`, or everyone), those
   * who may view the channel, from the in-memory snapshots: no query per member, whatever the guild's size
   * (a member whose row is in doubt is read again). For a thread pass its parent: threads have no overwrites.
   */
  async viewersAmong(
    guildId: string,
    channelId: string,
    pinged: { users: readonly string[]; roles: readonly string[]; everyone: boolean },
  ): Promise<string[]> {
    if (!pinged.everyone && pinged.users.length === 0 && pinged.roles.length === 0) return [];
    const [snapshot, members] = await Promise.all([this.snapshot(guildId), this.members(guildId)]);
    if (!snapshot) return [];
    let channel = snapshot.channels.get(channelId);
    if (!channel) {
      this.snapshots.delete(guildId);
      channel = (await this.snapshot(guildId))?.channels.get(channelId);
      if (!channel) return [];
    }
    const overwrites = toOverwrites(channel);
    const roles = new Set(pinged.roles);
    const candidates = pinged.everyone || roles.size > 0 ? members.userIds() : pinged.users.values();
    const direct = new Set(pinged.users);
    const now = this.clock.now();
    const out: string[] = [];
    for (const userId of [...candidates]) {
      const member = await this.memberIn(members, guildId, userId);
      if (!member) continue;
      if (!pinged.everyone && !direct.has(userId) && !member.roles.some((id) => roles.has(id))) continue;
      const subject = subjectFor(snapshot.guild, snapshot.roles, member, now);
      if (has(computeChannelPermissions(subject, overwrites), PERMISSIONS.VIEW_CHANNEL)) out.push(userId);
    }
    return out;
  }

  /**
   * Who of `userIds` lost or gained sight of which channels, from the snapshots (no query unless a member row
   * is in doubt). VIEW_CHANNEL depends only on ownership, the member's roles and member overwrites (a timeout
   * keeps it), so members without a member overwrite on the channels concerned are computed once per distinct
   * role set: the cost is one pass over the users plus (role sets × channels), whatever the guild's size.
   */
  async visibilityChanges(
    guildId: string,
    userIds: readonly string[],
    before: VisibilityBefore,
  ): Promise<VisibilityChange[]> {
    if (userIds.length === 0) return [];
    const [snapshot, members] = await Promise.all([this.snapshot(guildId), this.members(guildId)]);
    if (!snapshot) return [];
    const all = [...snapshot.channels.values()];
    const onlyOverwrites =
      before.roles === undefined &&
      before.held === undefined &&
      before.notHeld === undefined &&
      before.ownerId === undefined;
    const channels = onlyOverwrites ? all.filter((c) => before.overwrites?.[c.id] !== undefined) : all;
    if (channels.length === 0) return [];

    const rolesNow = new Map(snapshot.roles.map((r) => [r.id, parsePermissions(r.permissions)]));
    const rolesBefore = new Map(rolesNow);
    for (const [id, permissions] of Object.entries(before.roles ?? {}))
      rolesBefore.set(id, parsePermissions(permissions));
    const overwritesNow = channels.map((c) => toOverwrites(c));
    const overwritesBefore = channels.map((c, i) => {
      const old = before.overwrites?.[c.id];
      return old ? toOverwrites({ permission_overwrites: old }) : (overwritesNow[i] as Overwrite[]);
    });
    // Members named in a member overwrite are computed on their own; everyone else shares by role set.
    const personal = new Set<string>();
    for (const list of [...overwritesNow, ...overwritesBefore])
      for (const o of list) if (o.type === 1) personal.add(o.id);
    const byUser = (map: Record<string, string[]> | undefined) => {
      const out = new Map<string, Set<string>>();
      for (const [roleId, ids] of Object.entries(map ?? {}))
        for (const id of ids) {
          const set = out.get(id) ?? new Set<string>();
          set.add(roleId);
          out.set(id, set);
        }
      return out;
    };
    const lostRoles = byUser(before.held);
    const newRoles = byUser(before.notHeld);
    const ownerNow = snapshot.guild.owner_id;
    const ownerBefore = before.ownerId ?? ownerNow;
    const memo = new Map<string, boolean[]>();
    const sight = (
      side: string,
      userId: string,
      ownerId: string,
      roleIds: string[],
      roles: Map<string, bigint>,
      overwrites: Overwrite[][],
    ): boolean[] => {
      const owner = userId === ownerId;
      // A deleted role's id may linger in a cached member row or an overwrite: only existing roles count.
      const held = roleIds.filter((id) => roles.has(id)).sort();
      const key = personal.has(userId) ? undefined : `${side}:${owner ? '*' : held.join(',')}`;
      const hit = key === undefined ? undefined : memo.get(key);
      if (hit) return hit;
      const subject = { guildId, ownerId, userId, memberRoleIds: held, rolePermissions: roles };
      const out = overwrites.map((list) => has(computeChannelPermissions(subject, list), PERMISSIONS.VIEW_CHANNEL));
      if (key !== undefined) memo.set(key, out);
      return out;
    };

    const lost = channels.map(() => [] as string[]);
    const gained = channels.map(() => [] as string[]);
    for (const userId of new Set(userIds)) {
      const member = await this.memberIn(members, guildId, userId);
      if (!member) continue;
      const added = newRoles.get(userId);
      const removed = lostRoles.get(userId);
      const rolesThen = member.roles.filter((id) => !added?.has(id));
      for (const id of removed ?? []) if (!rolesThen.includes(id)) rolesThen.push(id);
      const now = sight('now', userId, ownerNow, member.roles, rolesNow, overwritesNow);
      const then = sight('then', userId, ownerBefore, rolesThen, rolesBefore, overwritesBefore);
      for (let i = 0; i < channels.length; i++) {
        if (then[i] && !now[i]) lost[i]?.push(userId);
        else if (!then[i] && now[i]) gained[i]?.push(userId);
      }
    }
    const out: VisibilityChange[] = [];
    channels.forEach((channel, i) => {
      const view = lost[i]?.length || gained[i]?.length ? channelView(channel) : undefined;
      if (view && lost[i]?.length) out.push({ event: 'CHANNEL_DELETE', channel: view, userIds: lost[i] as string[] });
      if (view && gained[i]?.length)
        out.push({ event: 'CHANNEL_CREATE', channel: view, userIds: gained[i] as string[] });
    });
    return out;
  }

  async holdsGuildPermission(userId: string, guildId: string, permission: string): Promise<boolean> {
    const member = await this.member(guildId, userId);
    if (!member) return false;
    const snapshot = await this.snapshot(guildId);
    if (!snapshot) return false;
    const subject = subjectFor(snapshot.guild, snapshot.roles, member, this.clock.now());
    return has(computeBasePermissions(subject), parsePermissions(permission));
  }

  async searchMembers(
    guildId: string,
    options: { query?: string; limit: number; userIds?: string[] },
  ): Promise<MemberView[]> {
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
    // Keyed by generation: a caller after an invalidation must not share a load that began before it (the
    // visibility diff, run right after a change, would read the state from before the change as "now").
    const generation = this.generation(guildId);
    return this.once(`snapshot:${guildId}:${generation}`, async () => {
      const [guild, roles, channels] = await Promise.all([
        this.store.guild(guildId),
        this.store.roles(guildId),
        this.store.guildChannels(guildId),
      ]);
      if (!guild) return undefined;
      const snapshot = { guild, roles, channels: new Map(channels.map((c) => [c.id, c])) };
      if (this.generation(guildId) === generation) this.snapshots.set(guildId, snapshot);
      return snapshot;
    });
  }

  private expressions(guildId: string): Promise<Expressions> {
    const hit = this.expressionLists.get(guildId);
    if (hit) return Promise.resolve(hit);
    return this.once(`expressions:${guildId}`, async () => {
      const generation = this.generation(guildId);
      const [emojis, stickers] = await Promise.all([
        guildEmojis(this.store.db, guildId),
        guildStickers(this.store.db, guildId),
      ]);
      const expressions = { emojis, stickers };
      if (this.generation(guildId) === generation) this.expressionLists.set(guildId, expressions);
      return expressions;
    });
  }

  private async members(guildId: string): Promise<GuildMembers> {
    return (
      this.memberMaps.get(guildId) ??
      this.once(`members:${guildId}:${this.generation(guildId)}`, async () => {
        const generation = this.generation(guildId);
        const rows = await this.store.db.query<MemberRow>(
          `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1`,
          [guildId],
        );
        const members = new GuildMembers(new Map(rows.map((r) => [r.user_id, r])));
        if (this.generation(guildId) === generation) this.memberMaps.set(guildId, members);
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
    // Every member in doubt is read again in one query, shared by concurrent callers (a fan-out after a wave
    // of joins asks for many of them at once).
    await this.once(`stale:${guildId}`, async () => {
      const ids = members.staleIds();
      if (ids.length === 0) return;
      const rows = await this.store.membersAmong(guildId, ids);
      const found = new Map(rows.map((row) => [row.user_id, row]));
      for (const id of ids) members.settle(id, found.get(id) ?? null);
    });
    const settled = members.get(userId);
    if (settled === STALE) {
      // Marked stale again while the shared read ran: read this one alone.
      const row = (await this.store.member(guildId, userId)) ?? null;
      members.settle(userId, row);
      return row;
    }
    return settled ?? null;
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

/** The snapshot's channel rows with their newest message id read now (a copy only of the rows that differ). */
function withLastMessageIds(channels: ChannelRow[], fresh: ReadonlyMap<string, string> | undefined): ChannelRow[] {
  if (!fresh) return channels;
  return channels.map((channel) => {
    const id = fresh.get(channel.id);
    return id !== undefined && id !== channel.last_message_id ? { ...channel, last_message_id: id } : channel;
  });
}
