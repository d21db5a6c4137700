import type { Database } from '../../platform/db/database.ts';

/** What a scheduled message keeps of the message body until its time (docs/chat.md#scheduled-messages). */
export interface ScheduledPayload {
  content?: string | null;
  embeds?: unknown[] | null;
  allowed_mentions?: unknown;
  message_reference?: unknown;
  flags?: number | null;
  tts?: boolean | null;
}

export interface ScheduledMessageRow {
  id: string;
  channel_id: string;
  author_id: string;
  scheduled_at: Date;
  payload: ScheduledPayload;
  /** The error code the delivery met (the message was not posted), or null while it waits. */
  failure: string | null;
  /** The id the message is posted under, once a delivery has claimed it. */
  message_id: string | null;
  created_at: Date;
}

const COLUMNS = `id::text, channel_id::text, author_id::text, scheduled_at, payload, failure, message_id::text, created_at`;

/** The SQL of scheduled messages. */
export class ScheduledMessageStore {
  constructor(readonly db: Database) {}

  async insert(
    row: Omit<ScheduledMessageRow, 'failure' | 'message_id' | 'created_at'>,
    now: Date,
  ): Promise<ScheduledMessageRow> {
    const [inserted] = await this.db.query<ScheduledMessageRow>(
      `INSERT INTO scheduled_messages (id, channel_id, author_id, scheduled_at, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [row.id, row.channel_id, row.author_id, row.scheduled_at, JSON.stringify(row.payload), now],
    );
    return inserted as ScheduledMessageRow;
  }

  /** The author's scheduled messages in a channel, soonest first (failed ones included, until cancelled). */
  list(authorId: string, channelId: string): Promise<ScheduledMessageRow[]> {
    return this.db.query<ScheduledMessageRow>(
      `SELECT ${COLUMNS} FROM scheduled_messages WHERE author_id = $1 AND channel_id = $2
        ORDER BY scheduled_at, id`,
      [authorId, channelId],
    );
  }

  async find(authorId: string, channelId: string, id: string): Promise<ScheduledMessageRow | undefined> {
    const [row] = await this.db.query<ScheduledMessageRow>(
      `SELECT ${COLUMNS} FROM scheduled_messages WHERE id = $1 AND author_id = $2 AND channel_id = $3`,
      [id, authorId, channelId],
    );
    return row;
  }

  async countPending(authorId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM scheduled_messages WHERE author_id = $1 AND failure IS NULL',
      [authorId],
    );
    return row?.n ?? 0;
  }

  /** A new time or body; a failed message edited is pending again. */
  async update(
    id: string,
    changes: { scheduled_at: Date; payload: ScheduledPayload },
  ): Promise<ScheduledMessageRow | undefined> {
    const [row] = await this.db.query<ScheduledMessageRow>(
      `UPDATE scheduled_messages SET scheduled_at = $2, payload = $3, failure = NULL
        WHERE id = $1 AND claimed_until IS NULL RETURNING ${COLUMNS}`,
      [id, changes.scheduled_at, JSON.stringify(changes.payload)],
    );
    return row;
  }

  /** Cancelled, unless a delivery has claimed it (it is being posted). */
  async delete(id: string, authorId: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      'DELETE FROM scheduled_messages WHERE id = $1 AND author_id = $2 AND claimed_until IS NULL RETURNING id::text',
      [id, authorId],
    );
    return rows.length > 0;
  }

  /**
   * Claims up to `limit` due messages for delivery until `until`: rows another process is claiming are skipped, and
   * a claim that ran out (its process died) is taken again, so each message is delivered by one process at a time.
   */
  claimDue(now: Date, until: Date, limit: number): Promise<ScheduledMessageRow[]> {
    return this.db.query<ScheduledMessageRow>(
      `UPDATE scheduled_messages SET claimed_until = $2 WHERE id IN (
         SELECT id FROM scheduled_messages
          WHERE failure IS NULL AND scheduled_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
          ORDER BY scheduled_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [now, until, limit],
    );
  }

  /** The message id of a claimed row: the one a previous attempt recorded, else `minted`, recorded now. */
  async messageIdFor(id: string, minted: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ message_id: string }>(
      `UPDATE scheduled_messages SET message_id = coalesce(message_id, $2) WHERE id = $1 RETURNING message_id::text`,
      [id, minted],
    );
    return row?.message_id;
  }

  /** Posted: the row goes. */
  async delivered(id: string): Promise<void> {
    await this.db.query('DELETE FROM scheduled_messages WHERE id = $1', [id]);
  }

  /** Not posted: the row stays, with the reason, until its author edits (it waits again) or cancels it. */
  async recordFailure(id: string, failure: string): Promise<void> {
    await this.db.query(
      'UPDATE scheduled_messages SET failure = $2, claimed_until = NULL, message_id = NULL WHERE id = $1',
      [id, failure],
    );
  }
}
