import { toUserRecord, type UserRecord, type UserRow } from '../../identity/user-record.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import type { PresenceView } from '../users/presence-view.ts';
import type { UsersRepository } from '../users/users-repository.ts';
import type { GuildVoiceStateView } from '../voice/voice-views.ts';
import { type ChannelRow, type GuildRow, MEMBER_COLUMNS, type MemberRow, ROLE_JSON, type RoleRow } from './rows.ts';

/** Guild payloads show presences of at most this many members. */
export const PRESENCE_MEMBER_LIMIT = 25_000;

export interface GuildBundle {
  guild: GuildRow;
  member: MemberRow | undefined;
  roles: RoleRow[];
}

/**
 * The chat module's reads that several resources share. Each is one indexed query: a permission check
 * loads the guild, the caller's member row and every role together.
 */
export class ChatStore {
  /** Who is in voice in a guild, for guild payloads' `voice_states` (set by the composition root; voice domain). */
  voiceStatesOf: ((guildId: string) => Promise<GuildVoiceStateView[]>) | undefined;
  /** The visible presences of a guild's members, for guild payloads and counts (set by the composition root). */
  presencesOf: ((guildId: string) => Promise<PresenceView[]>) | undefined;
  /** Which of these users are online (idle and dnd count; invisible does not), for `@here` (set by the composition root). */
  onlineAmong: ((userIds: readonly string[]) => Promise<ReadonlySet<string>>) | undefined;

  constructor(
    readonly db: Database,
    private readonly users: UsersRepository,
  ) {}

  async guildBundle(guildId: string, userId: string, db: Queryable = this.db): Promise<GuildBundle | undefined> {
    const [row] = await db.query<GuildRow & { member: MemberRow | null; roles: RoleRow[] }>(
      `SELECT g.*,
              (SELECT json_build_object('guild_id', m.guild_id::text, 'user_id', m.user_id::text, 'nick', m.nick,
                        'avatar', m.avatar, 'banner', m.banner, 'bio', m.bio, 'roles', m.roles::text[], 'joined_at', m.joined_at, 'mute', m.mute,
                        'deaf', m.deaf, 'communication_disabled_until', m.communication_disabled_until)
                 FROM members m WHERE m.guild_id = g.id AND m.user_id = $2) AS member,
              (SELECT coalesce(json_agg(${ROLE_JSON} ORDER BY r.position, r.id), '[]'::json)
                 FROM roles r WHERE r.guild_id = g.id) AS roles
         FROM guilds g WHERE g.id = $1`,
      [guildId, userId],
    );
    if (!row) return undefined;
    const { member, roles, ...guild } = row;
    return { guild: guild as GuildRow, member: member ?? undefined, roles };
  }

  async guild(guildId: string, db: Queryable = this.db): Promise<GuildRow | undefined> {
    const [row] = await db.query<GuildRow>('SELECT * FROM guilds WHERE id = $1', [guildId]);
    return row;
  }

  async channel(channelId: string, db: Queryable = this.db): Promise<ChannelRow | undefined> {
    const [row] = await db.query<ChannelRow>('SELECT * FROM channels WHERE id = $1', [channelId]);
    return row;
  }

  async guildChannels(guildId: string, db: Queryable = this.db): Promise<ChannelRow[]> {
    // Threads are channels too, but Discord lists them apart (GUILD_CREATE `threads`, the thread routes).
    return db.query<ChannelRow>(
      'SELECT * FROM channels WHERE guild_id = $1 AND type NOT IN (10, 11, 12) ORDER BY position, id',
      [guildId],
    );
  }

  async roles(guildId: string, db: Queryable = this.db): Promise<RoleRow[]> {
    return db
      .query<RoleRow>(`SELECT (${ROLE_JSON}) AS j FROM roles r WHERE r.guild_id = $1 ORDER BY r.position, r.id`, [
        guildId,
      ])
      .then((rows) => rows.map((row) => (row as unknown as { j: RoleRow }).j));
  }

  async member(guildId: string, userId: string, db: Queryable = this.db): Promise<MemberRow | undefined> {
    const [row] = await db.query<MemberRow>(
      `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1 AND m.user_id = $2`,
      [guildId, userId],
    );
    return row;
  }

  /** The user's member rows, one per guild they are in. */
  async membershipsOf(userId: string, db: Queryable = this.db): Promise<MemberRow[]> {
    return db.query<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.user_id = $1`, [userId]);
  }

  /** The member rows of those of `userIds` who are members (one query). */
  async membersAmong(guildId: string, userIds: readonly string[], db: Queryable = this.db): Promise<MemberRow[]> {
    return db.query<MemberRow>(
      `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1 AND m.user_id = ANY($2::bigint[])`,
      [guildId, userIds],
    );
  }

  async memberIds(guildId: string, db: Queryable = this.db): Promise<string[]> {
    const rows = await db.query<{ user_id: string }>('SELECT user_id FROM members WHERE guild_id = $1', [guildId]);
    return rows.map((r) => r.user_id);
  }

  async recipientIds(channelId: string, db: Queryable = this.db): Promise<string[]> {
    const rows = await db.query<{ user_id: string }>(
      'SELECT user_id FROM dm_recipients WHERE channel_id = $1 ORDER BY user_id',
      [channelId],
    );
    return rows.map((r) => r.user_id);
  }

  async user(userId: string): Promise<UserRecord | undefined> {
    return this.users.findById(userId);
  }

  /** Users by id in one query (member lists, mentions, recipients); unknown ids are skipped. */
  async usersByIds(ids: readonly string[], db: Queryable = this.db): Promise<Map<string, UserRecord>> {
    const unique = [...new Set(ids)];
    const out = new Map<string, UserRecord>();
    if (unique.length === 0) return out;
    const rows = await db.query<UserRow>('SELECT * FROM users WHERE id = ANY($1::bigint[])', [unique]);
    for (const row of rows) out.set(row.id, toUserRecord(row));
    return out;
  }

  async memberCount(guildId: string, db: Queryable = this.db): Promise<number> {
    const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM members WHERE guild_id = $1', [
      guildId,
    ]);
    return row?.n ?? 0;
  }

  /**
   * The newest message id of every channel of these guilds that has one, by channel id, in one query: READY
   * overlays them on the cached guild snapshots, which message creation does not invalidate.
   */
  async lastMessageIds(guildIds: readonly string[], db: Queryable = this.db): Promise<Map<string, string>> {
    const rows = await db.query<{ id: string; last_message_id: string }>(
      `SELECT id::text, last_message_id::text FROM channels
        WHERE guild_id = ANY($1::bigint[]) AND last_message_id IS NOT NULL`,
      [guildIds],
    );
    return new Map(rows.map((row) => [row.id, row.last_message_id]));
  }

  /** Of `others`, those who blocked `userId` or whom `userId` blocked (relationship type 2, either way). */
  async blockedAmong(userId: string, others: readonly string[], db: Queryable = this.db): Promise<Set<string>> {
    if (others.length === 0) return new Set();
    const rows = await db.query<{ other: string }>(
      `SELECT CASE WHEN user_id = $1 THEN target_id ELSE user_id END::text AS other FROM relationships
        WHERE type = 2 AND ((user_id = $1 AND target_id = ANY($2::bigint[])) OR (target_id = $1 AND user_id = ANY($2::bigint[])))`,
      [userId, others],
    );
    return new Set(rows.map((row) => row.other));
  }

  /** Ids of the user's friends (relationship type 1), who see the user's presence outside any guild. */
  async friendIds(userId: string, db: Queryable = this.db): Promise<string[]> {
    const rows = await db.query<{ target_id: string }>(
      'SELECT target_id::text AS target_id FROM relationships WHERE user_id = $1 AND type = 1',
      [userId],
    );
    return rows.map((row) => row.target_id);
  }

  async isBanned(guildId: string, userId: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM bans WHERE guild_id = $1 AND user_id = $2', [guildId, userId]);
    return rows.length > 0;
  }

  /** Whether `a` and `b` are friends (both rows type 1; a block replaces the rows, so friends are never blocked). */
  async areFriends(a: string, b: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM relationships WHERE user_id = $1 AND target_id = $2 AND type = 1', [
      a,
      b,
    ]);
    return rows.length > 0;
  }

  /** Whether either side blocked the other. */
  async blockedBetween(a: string, b: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM relationships WHERE type = 2
          AND ((user_id = $1 AND target_id = $2) OR (user_id = $2 AND target_id = $1)) LIMIT 1`,
      [a, b],
    );
    return rows.length > 0;
  }

  /**
   * Whether `sender` and `recipient` share a guild that the recipient takes DMs from: one not in the
   * recipient's `restricted_guilds` setting (the settings row belongs to the users domain; read here in one query).
   */
  async sharesGuildAllowingDms(sender: string, recipient: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM members x JOIN members y ON y.guild_id = x.guild_id AND y.user_id = $2
        WHERE x.user_id = $1
          AND NOT EXISTS (SELECT 1 FROM user_settings s WHERE s.user_id = $2
                            AND coalesce(s.settings->'restricted_guilds', '[]'::jsonb) @> to_jsonb(x.guild_id::text))
        LIMIT 1`,
      [sender, recipient],
    );
    return rows.length > 0;
  }

  /**
   * Discord's `default_guilds_restricted`: when the user has it on, a guild they just joined goes into their
   * `restricted_guilds` (no DMs from its members). Answers the new list when it changed, for
   * USER_SETTINGS_UPDATE; the settings row belongs to the users domain, written here in one statement.
   */
  async restrictJoinedGuild(userId: string, guildId: string, db: Queryable = this.db): Promise<string[] | undefined> {
    const [row] = await db.query<{ restricted_guilds: string[] }>(
      `UPDATE user_settings
          SET settings = jsonb_set(settings, '{restricted_guilds}',
                                   coalesce(settings->'restricted_guilds', '[]'::jsonb) || to_jsonb($2::text))
        WHERE user_id = $1 AND settings->'default_guilds_restricted' = 'true'::jsonb
          AND NOT coalesce(settings->'restricted_guilds', '[]'::jsonb) @> to_jsonb($2::text)
        RETURNING settings->'restricted_guilds' AS restricted_guilds`,
      [userId, guildId],
    );
    return row?.restricted_guilds;
  }

  /**
   * Whether `recipient`'s `friend_source_flags` take a friend request from `sender`: `{all: true}` (the default)
   * takes everyone; otherwise `mutual_friends` takes someone with a friend in common and `mutual_guilds`
   * someone in a shared guild; `{}` takes nobody.
   */
  async friendSourceAllows(sender: string, recipient: string, db: Queryable = this.db): Promise<boolean> {
    const [row] = await db.query<{ flags: Record<string, unknown> | null }>(
      `SELECT settings->'friend_source_flags' AS flags FROM user_settings WHERE user_id = $1`,
      [recipient],
    );
    const flags = row?.flags ?? { all: true };
    if (flags.all === true) return true;
    if (flags.mutual_guilds === true && (await this.sharesGuild(sender, recipient, db))) return true;
    if (flags.mutual_friends === true) {
      const common = await db.query(
        `SELECT 1 FROM relationships x JOIN relationships y ON y.target_id = x.target_id AND y.user_id = $2 AND y.type = 1
          WHERE x.user_id = $1 AND x.type = 1 LIMIT 1`,
        [sender, recipient],
      );
      if (common.length > 0) return true;
    }
    return false;
  }

  async sharesGuild(a: string, b: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM members x JOIN members y ON y.guild_id = x.guild_id AND y.user_id = $2
        WHERE x.user_id = $1 LIMIT 1`,
      [a, b],
    );
    return rows.length > 0;
  }
}
