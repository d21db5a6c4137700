import { toUserRecord, type UserRecord, type UserRow } from '../../identity/user-record.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import type { UsersRepository } from '../users/users-repository.ts';
import { type ChannelRow, type GuildRow, MEMBER_COLUMNS, type MemberRow, ROLE_JSON, type RoleRow } from './rows.ts';

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
  voiceStatesOf: ((guildId: string) => Promise<Record<string, unknown>[]>) | undefined;

  constructor(
    readonly db: Database,
    private readonly users: UsersRepository,
  ) {}

  async guildBundle(guildId: string, userId: string, db: Queryable = this.db): Promise<GuildBundle | undefined> {
    const [row] = await db.query<GuildRow & { member: MemberRow | null; roles: RoleRow[] }>(
      `SELECT g.*,
              (SELECT json_build_object('guild_id', m.guild_id::text, 'user_id', m.user_id::text, 'nick', m.nick,
                        'avatar', m.avatar, 'roles', m.roles::text[], 'joined_at', m.joined_at, 'mute', m.mute,
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

  async isBanned(guildId: string, userId: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM bans WHERE guild_id = $1 AND user_id = $2', [guildId, userId]);
    return rows.length > 0;
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
