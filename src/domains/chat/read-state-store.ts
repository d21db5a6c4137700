import { SNOWFLAKE_EPOCH_MS } from '../../platform/crypto/snowflake.ts';
import type { Database } from '../../platform/db/database.ts';
import { iso, MESSAGE_COLUMNS, type MessageRow } from './rows.ts';

/** Discord's read-state flags: the channel is a guild channel, the channel is a thread. */
export const READ_STATE_FLAGS = { IS_GUILD_CHANNEL: 1 << 0, IS_THREAD: 1 << 1 } as const;

/** Discord's value for pins never acknowledged. */
const NEVER = '1970-01-01T00:00:00.000Z';

export interface ReadStateEntry {
  id: string;
  last_message_id: string;
  mention_count: number;
  last_pin_timestamp: string;
  flags: number;
}

/** READY `read_state` (the established user-account shape; Hearth always sends the full set). */
export interface ReadStatePayload {
  version: number;
  partial: false;
  entries: ReadStateEntry[];
}

export interface AckResult {
  last_message_id: string;
  mention_count: number;
  version: number;
}

/** Who counts as pinged by a message, for recounting a user's mentions after an ack. */
export interface PingSubject {
  userId: string;
  /** DMs and group DMs: every message of someone else counts. */
  isPrivate: boolean;
  /** The user's role ids in the channel's guild. */
  roleIds: readonly string[];
}

export interface MentionsQuery {
  limit: number;
  before?: string | undefined;
  guildId?: string | undefined;
  roles: boolean;
  everyone: boolean;
}

/**
 * The SQL of read states (acks, pins acks, READY) and of the mentions inbox. Mention counts grow in the
 * message insert itself (MessageService.create); an ack recounts what is left after the acked message.
 */
export class ReadStateStore {
  constructor(private readonly db: Database) {}

  /**
   * Moves the user's read marker in the channel. A plain ack only moves it forward; a manual one
   * (mark unread) puts it where asked. The mention count becomes `mentionCount` when a manual ack gives
   * one, else the messages after the marker that ping the user (an @everyone / @here or role ping not when
   * the user's settings of the guild suppress it).
   */
  async ack(
    subject: PingSubject,
    channelId: string,
    messageId: string,
    options: { manual: boolean; mentionCount: number | undefined; now: number },
  ): Promise<AckResult> {
    const [row] = await this.db.query<{ last_message_id: string; mention_count: number; version: string }>(
      `WITH target AS (
         SELECT CASE WHEN $4 THEN $3::bigint
                     ELSE greatest($3::bigint, coalesce((SELECT last_message_id FROM read_states
                                                           WHERE user_id = $1 AND channel_id = $2), 0)) END AS id),
       suppressed AS (
         SELECT coalesce(bool_or(s.suppress_everyone), false) AS everyone,
                coalesce(bool_or(s.suppress_roles), false) AS roles
           FROM channels c JOIN user_guild_settings s ON s.guild_id = c.guild_id AND s.user_id = $1
          WHERE c.id = $2),
       pending AS (
         SELECT count(*)::int AS n FROM messages msg, target, suppressed
          WHERE msg.channel_id = $2 AND msg.id > target.id AND msg.author_id IS DISTINCT FROM $1
            AND ($7 OR (cardinality(msg.mentions) > 0 AND msg.mentions @> ARRAY[$1::bigint])
                 OR (msg.mention_everyone AND NOT suppressed.everyone)
                 OR (msg.mention_roles && $8::bigint[] AND NOT suppressed.roles)))
       INSERT INTO read_states AS rs (user_id, channel_id, last_message_id, mention_count, version, updated_at)
       VALUES ($1, $2, (SELECT id FROM target), coalesce($5::int, (SELECT n FROM pending)), 1, $6)
       ON CONFLICT (user_id, channel_id) DO UPDATE SET
         last_message_id = EXCLUDED.last_message_id, mention_count = EXCLUDED.mention_count,
         version = rs.version + 1, updated_at = EXCLUDED.updated_at
       RETURNING last_message_id::text, mention_count, version::text`,
      [
        subject.userId,
        channelId,
        messageId,
        options.manual,
        options.mentionCount ?? null,
        new Date(options.now),
        subject.isPrivate,
        subject.roleIds,
      ],
    );
    if (!row) throw new Error('read state upsert returned nothing');
    return { last_message_id: row.last_message_id, mention_count: row.mention_count, version: Number(row.version) };
  }

  /** Forgets the user's read state of the channel; true when there was one. */
  async remove(userId: string, channelId: string): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM read_states WHERE user_id = $1 AND channel_id = $2 RETURNING 1', [
      userId,
      channelId,
    ]);
    return rows.length > 0;
  }

  /** Marks the channel's pins as seen up to `timestamp` (its latest pin, or now when it has none). */
  async ackPins(userId: string, channelId: string, timestamp: Date, now: number): Promise<number> {
    const [row] = await this.db.query<{ version: string }>(
      `INSERT INTO read_states AS rs (user_id, channel_id, last_pin_timestamp, version, updated_at)
       VALUES ($1, $2, $3, 1, $4)
       ON CONFLICT (user_id, channel_id) DO UPDATE SET
         last_pin_timestamp = EXCLUDED.last_pin_timestamp, version = rs.version + 1, updated_at = EXCLUDED.updated_at
       RETURNING version::text`,
      [userId, channelId, timestamp, new Date(now)],
    );
    return Number(row?.version ?? 0);
  }

  /**
   * READY's read states: the user's rows for channels of guilds they are still in and DMs they are still
   * part of. `version` is the highest entry version (it grows with every ack).
   */
  async readyState(userId: string): Promise<ReadStatePayload> {
    const rows = await this.db.query<{
      id: string;
      last_message_id: string;
      mention_count: number;
      last_pin_timestamp: Date | null;
      guild_id: string | null;
      type: number;
      version: string;
    }>(
      `SELECT rs.channel_id::text AS id, rs.last_message_id::text AS last_message_id, rs.mention_count,
              rs.last_pin_timestamp, c.guild_id::text AS guild_id, c.type, rs.version::text AS version
         FROM read_states rs JOIN channels c ON c.id = rs.channel_id
        WHERE rs.user_id = $1
          AND CASE WHEN c.guild_id IS NULL
                   THEN EXISTS (SELECT 1 FROM dm_recipients d WHERE d.channel_id = c.id AND d.user_id = $1)
                   ELSE EXISTS (SELECT 1 FROM members m WHERE m.guild_id = c.guild_id AND m.user_id = $1) END
        ORDER BY rs.channel_id`,
      [userId],
    );
    let version = 0;
    const entries = rows.map((row) => {
      version = Math.max(version, Number(row.version));
      return {
        id: row.id,
        last_message_id: row.last_message_id,
        mention_count: row.mention_count,
        last_pin_timestamp: iso(row.last_pin_timestamp) ?? NEVER,
        flags:
          (row.guild_id !== null ? READ_STATE_FLAGS.IS_GUILD_CHANNEL : 0) |
          (row.type >= 10 && row.type <= 12 ? READ_STATE_FLAGS.IS_THREAD : 0),
      };
    });
    return { version, partial: false, entries };
  }

  /**
   * Candidates for the mentions inbox, newest first: messages of others that name the user, or (when
   * asked) ping @everyone in one of the user's guilds or one of the user's roles since the user joined that
   * guild, in guilds the user is still in and DMs the user is still part of. Whether the user may still read each channel is the
   * caller's check.
   */
  async mentionCandidates(userId: string, query: MentionsQuery): Promise<MessageRow[]> {
    return this.db.query<MessageRow>(
      `WITH mine AS (
         SELECT guild_id, roles,
                (floor(extract(epoch FROM joined_at) * 1000)::bigint - ${SNOWFLAKE_EPOCH_MS}) << 22 AS since
           FROM members WHERE user_id = $1),
            my_roles AS (SELECT coalesce(array_agg(r), '{}') AS ids FROM mine, unnest(mine.roles) AS r)
       SELECT ${MESSAGE_COLUMNS} FROM messages msg
        WHERE msg.author_id IS DISTINCT FROM $1
          AND ($2::bigint IS NULL OR msg.id < $2::bigint)
          AND ($3::bigint IS NULL OR msg.guild_id = $3::bigint)
          AND ((cardinality(msg.mentions) > 0 AND msg.mentions @> ARRAY[$1::bigint])
               OR ($4 AND msg.mention_everyone AND msg.guild_id IN (SELECT guild_id FROM mine)
                   AND msg.id >= (SELECT since FROM mine WHERE mine.guild_id = msg.guild_id))
               OR ($5 AND cardinality(msg.mention_roles) > 0 AND msg.mention_roles && (SELECT ids FROM my_roles)
                   AND msg.id >= (SELECT since FROM mine WHERE mine.guild_id = msg.guild_id)))
          AND CASE WHEN msg.guild_id IS NULL
                   THEN EXISTS (SELECT 1 FROM dm_recipients d WHERE d.channel_id = msg.channel_id AND d.user_id = $1)
                   ELSE msg.guild_id IN (SELECT guild_id FROM mine) END
        ORDER BY msg.id DESC LIMIT $6`,
      [userId, query.before ?? null, query.guildId ?? null, query.everyone, query.roles, query.limit],
    );
  }
}
