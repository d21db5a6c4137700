import type { Database, Queryable } from '../../platform/db/database.ts';
import { type ChannelRow, MEMBER_COLUMNS, type MemberRow } from './rows.ts';

export interface NewThread {
  id: string;
  type: number;
  guildId: string;
  parentId: string;
  name: string;
  ownerId: string;
  nsfw: boolean;
  rateLimitPerUser: number;
  autoArchiveDuration: number;
  invitable: boolean;
  /** Set when the thread starts from a message (same id): the flag the message gets. */
  starterFlag?: number | undefined;
}

export interface ThreadChanges {
  name: string;
  rateLimitPerUser: number;
  archived: boolean;
  autoArchiveDuration: number;
  locked: boolean;
  invitable: boolean;
}

/** A thread: its `channels` row with the `threads` row and live counts. */
export interface ThreadChannelRow extends ChannelRow {
  guild_id: string;
  parent_id: string;
  archived: boolean;
  auto_archive_duration: number;
  archive_timestamp: Date;
  locked: boolean;
  invitable: boolean;
  create_timestamp: Date;
  total_message_sent: number;
  last_activity_at: Date;
  message_count: number;
  member_count: number;
}

export interface ThreadMemberRow {
  thread_id: string;
  user_id: string;
  join_timestamp: Date;
  flags: number;
}

/** Discord counts thread members only up to 50. */
const THREAD_SELECT = `SELECT c.*, t.archived, t.auto_archive_duration, t.archive_timestamp, t.locked, t.invitable,
         t.create_timestamp, t.total_message_sent, t.last_activity_at,
         (SELECT count(*)::int FROM messages WHERE channel_id = c.id) AS message_count,
         (SELECT least(count(*), 50)::int FROM thread_members WHERE thread_id = c.id) AS member_count
    FROM channels c JOIN threads t ON t.channel_id = c.id`;

const MEMBER_SELECT = 'SELECT thread_id, user_id, join_timestamp, flags FROM thread_members';

/** SQL of threads and thread members. */
export class ThreadStore {
  constructor(readonly db: Database) {}

  /** The channel row, the thread row and the creator's membership, together. */
  async insert(thread: NewThread, at: Date): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO channels (id, type, guild_id, name, parent_id, rate_limit_per_user, owner_id, nsfw)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          thread.id,
          thread.type,
          thread.guildId,
          thread.name,
          thread.parentId,
          thread.rateLimitPerUser,
          thread.ownerId,
          thread.nsfw,
        ],
      );
      await tx.query(
        `INSERT INTO threads (channel_id, guild_id, parent_id, auto_archive_duration, archive_timestamp, invitable,
                              create_timestamp, last_activity_at)
         VALUES ($1, $2, $3, $4, $5, $6, $5, $5)`,
        [thread.id, thread.guildId, thread.parentId, thread.autoArchiveDuration, at, thread.invitable],
      );
      await this.addMember(thread.id, thread.ownerId, at, tx);
      if (thread.starterFlag !== undefined)
        await tx.query('UPDATE messages SET flags = flags | $2 WHERE id = $1', [thread.id, thread.starterFlag]);
    });
  }

  /** `archiveChangedAt` set = `archived` flips now (archive_timestamp moves; unarchiving restarts the countdown). */
  async update(threadId: string, changes: ThreadChanges, archiveChangedAt: Date | undefined): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('UPDATE channels SET name = $2, rate_limit_per_user = $3 WHERE id = $1', [
        threadId,
        changes.name,
        changes.rateLimitPerUser,
      ]);
      await tx.query(
        `UPDATE threads SET archived = $2, auto_archive_duration = $3, locked = $4, invitable = $5,
                archive_timestamp = coalesce($6, archive_timestamp),
                last_activity_at = CASE WHEN $6::timestamptz IS NOT NULL AND NOT $2 THEN $6 ELSE last_activity_at END
          WHERE channel_id = $1`,
        [
          threadId,
          changes.archived,
          changes.autoArchiveDuration,
          changes.locked,
          changes.invitable,
          archiveChangedAt ?? null,
        ],
      );
    });
  }

  /** Deletes the thread (members and messages cascade) and takes `starterFlag` off its starter message. */
  async delete(threadId: string, starterFlag: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM channels WHERE id = $1', [threadId]);
      await tx.query('UPDATE messages SET flags = flags & ~$2::int WHERE id = $1', [threadId, starterFlag]);
    });
  }

  async unarchive(threadId: string, at: Date): Promise<void> {
    await this.db.query(
      'UPDATE threads SET archived = false, archive_timestamp = $2, last_activity_at = $2 WHERE channel_id = $1',
      [threadId, at],
    );
  }

  async countMessage(threadId: string, at: Date): Promise<void> {
    await this.db.query(
      'UPDATE threads SET total_message_sent = total_message_sent + 1, last_activity_at = $2 WHERE channel_id = $1',
      [threadId, at],
    );
  }

  /** Archives up to `limit` threads idle past their auto_archive_duration at `now`; returns their ids. */
  async archiveIdle(now: Date, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ channel_id: string }>(
      `UPDATE threads SET archived = true, archive_timestamp = $1
        WHERE channel_id IN (
          SELECT channel_id FROM threads
           WHERE NOT archived AND last_activity_at + auto_archive_duration * interval '1 minute' <= $1
           LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING channel_id`,
      [now, limit],
    );
    return rows.map((r) => r.channel_id);
  }

  /** A guild's member rows; with `only`, just those with one of the user ids or holding one of the roles. */
  guildMembers(guildId: string, only?: { userIds: readonly string[]; roleIds: readonly string[] }) {
    if (!only)
      return this.db.query<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1`, [guildId]);
    return this.db.query<MemberRow>(
      `SELECT ${MEMBER_COLUMNS} FROM members m
        WHERE m.guild_id = $1 AND (m.user_id = ANY($2::bigint[]) OR m.roles && $3::bigint[])`,
      [guildId, only.userIds, only.roleIds],
    );
  }

  async find(threadId: string, db: Queryable = this.db): Promise<ThreadChannelRow | undefined> {
    const [row] = await db.query<ThreadChannelRow>(`${THREAD_SELECT} WHERE c.id = $1`, [threadId]);
    return row;
  }

  async findMany(threadIds: readonly string[], db: Queryable = this.db): Promise<ThreadChannelRow[]> {
    if (threadIds.length === 0) return [];
    return db.query<ThreadChannelRow>(`${THREAD_SELECT} WHERE c.id = ANY($1::bigint[])`, [threadIds]);
  }

  /** Active (unarchived) threads of a guild, oldest first. */
  active(guildId: string, db: Queryable = this.db): Promise<ThreadChannelRow[]> {
    return db.query<ThreadChannelRow>(`${THREAD_SELECT} WHERE t.guild_id = $1 AND NOT t.archived ORDER BY c.id`, [
      guildId,
    ]);
  }

  /** Archived threads of a parent, newest archive first, before an archive time; one extra row tells has_more. */
  archived(
    parentId: string,
    types: readonly number[],
    options: { before?: Date | undefined; limit: number; memberId?: string | undefined; beforeId?: string | undefined },
    db: Queryable = this.db,
  ): Promise<ThreadChannelRow[]> {
    const params: unknown[] = [parentId, types];
    let filter = '';
    if (options.before) {
      params.push(options.before);
      filter += ` AND t.archive_timestamp < $${params.length}`;
    }
    if (options.beforeId) {
      params.push(options.beforeId);
      filter += ` AND c.id < $${params.length}`;
    }
    if (options.memberId) {
      params.push(options.memberId);
      filter += ` AND EXISTS (SELECT 1 FROM thread_members tm WHERE tm.thread_id = c.id AND tm.user_id = $${params.length})`;
    }
    params.push(options.limit + 1);
    const order = options.memberId ? 'c.id DESC' : 't.archive_timestamp DESC, c.id DESC';
    return db.query<ThreadChannelRow>(
      `${THREAD_SELECT} WHERE t.parent_id = $1 AND c.type = ANY($2::smallint[]) AND t.archived${filter}
        ORDER BY ${order} LIMIT $${params.length}`,
      params,
    );
  }

  async member(threadId: string, userId: string, db: Queryable = this.db): Promise<ThreadMemberRow | undefined> {
    const [row] = await db.query<ThreadMemberRow>(`${MEMBER_SELECT} WHERE thread_id = $1 AND user_id = $2`, [
      threadId,
      userId,
    ]);
    return row;
  }

  members(
    threadId: string,
    options: { after?: string | undefined; limit: number },
    db: Queryable = this.db,
  ): Promise<ThreadMemberRow[]> {
    return db.query<ThreadMemberRow>(
      `${MEMBER_SELECT} WHERE thread_id = $1 AND user_id > $2 ORDER BY user_id LIMIT $3`,
      [threadId, options.after ?? '0', options.limit],
    );
  }

  async memberIds(threadId: string, db: Queryable = this.db): Promise<string[]> {
    const rows = await db.query<{ user_id: string }>('SELECT user_id FROM thread_members WHERE thread_id = $1', [
      threadId,
    ]);
    return rows.map((r) => r.user_id);
  }

  /** The thread member rows of one user among some threads. */
  membershipsOf(userId: string, threadIds: readonly string[], db: Queryable = this.db): Promise<ThreadMemberRow[]> {
    if (threadIds.length === 0) return Promise.resolve([]);
    return db.query<ThreadMemberRow>(`${MEMBER_SELECT} WHERE user_id = $1 AND thread_id = ANY($2::bigint[])`, [
      userId,
      threadIds,
    ]);
  }

  /** Adds a member; `undefined` when they already were one. */
  async addMember(threadId: string, userId: string, at: Date, db: Queryable = this.db) {
    const [row] = await db.query<ThreadMemberRow>(
      `INSERT INTO thread_members (thread_id, user_id, join_timestamp) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING thread_id, user_id, join_timestamp, flags`,
      [threadId, userId, at],
    );
    return row;
  }

  async removeMember(threadId: string, userId: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query('DELETE FROM thread_members WHERE thread_id = $1 AND user_id = $2 RETURNING 1', [
      threadId,
      userId,
    ]);
    return rows.length > 0;
  }
}
