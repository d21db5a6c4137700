import type { PartialUser } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { GuildView, MessageView } from '../chat/views.ts';

export const REPORT_TARGET_TYPES = ['message', 'user', 'guild'] as const;
export type ReportTargetType = (typeof REPORT_TARGET_TYPES)[number];
export const REPORT_CATEGORIES = ['spam', 'harassment', 'illegal_content', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];
export const REPORT_STATUSES = ['open', 'resolved', 'dismissed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** Bound of a reporter's description and of an admin's resolution note (migration 0150 checks it too). */
export const REPORT_TEXT_MAX = 1000;

/**
 * The reported target as it was when the report was filed (docs/safety.md#filing-a-report): a message as the reporter saw it,
 * without its reactions (with `guild_id` in a guild), a user as `partialUser` shows them, or a guild's name, icon
 * and owner.
 */
export type ReportSnapshot =
  | (Omit<MessageView, 'reactions'> & { guild_id?: string })
  | PartialUser
  | Pick<GuildView, 'id' | 'name' | 'icon' | 'owner_id'>;

/** A row of `reports` (migration 0150). */
export interface ReportRow {
  id: string;
  reporter_id: string;
  target_type: ReportTargetType;
  target_id: string;
  channel_id: string | null;
  guild_id: string | null;
  category: ReportCategory;
  description: string | null;
  snapshot: ReportSnapshot;
  status: ReportStatus;
  created_at: Date;
  closed_at: Date | null;
  closed_by: string | null;
  resolution_note: string | null;
}

const COLUMNS = `id::text, reporter_id::text, target_type, target_id::text, channel_id::text, guild_id::text, category,
  description, snapshot, status, created_at, closed_at, closed_by::text, resolution_note`;

export interface NewReport {
  id: string;
  reporterId: string;
  targetType: ReportTargetType;
  targetId: string;
  channelId: string | null;
  guildId: string | null;
  category: ReportCategory;
  description: string | null;
  snapshot: ReportSnapshot;
  now: number;
}

export interface ReportQuery {
  status?: ReportStatus | undefined;
  target_type?: ReportTargetType | undefined;
  target_id?: string | undefined;
  reporter_id?: string | undefined;
  /** A report id: only older reports (the list is newest first). */
  before?: string | undefined;
  limit: number;
}

/** The `reports` table: every statement about reports lives here. */
export class ReportStore {
  /** The reporter's open report on this target, if any. */
  async findOpen(
    db: Queryable,
    reporterId: string,
    targetType: ReportTargetType,
    targetId: string,
  ): Promise<ReportRow | undefined> {
    const [row] = await db.query<ReportRow>(
      `SELECT ${COLUMNS} FROM reports
        WHERE reporter_id = $1 AND target_type = $2 AND target_id = $3 AND status = 'open'`,
      [reporterId, targetType, targetId],
    );
    return row;
  }

  /**
   * Files a report, unless the reporter already has one open on the same target: then that one is answered
   * and `created` is false. The partial unique index settles two filings racing each other.
   */
  async create(db: Queryable, report: NewReport): Promise<{ row: ReportRow; created: boolean }> {
    // Two rounds: an open report that is closed between the conflict and the read lets the second insert in.
    for (let round = 0; round < 2; round++) {
      const [inserted] = await db.query<ReportRow>(
        `INSERT INTO reports (id, reporter_id, target_type, target_id, channel_id, guild_id, category, description,
                              snapshot, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'open', $10)
         ON CONFLICT (reporter_id, target_type, target_id) WHERE status = 'open' DO NOTHING
         RETURNING ${COLUMNS}`,
        [
          report.id,
          report.reporterId,
          report.targetType,
          report.targetId,
          report.channelId,
          report.guildId,
          report.category,
          report.description,
          JSON.stringify(report.snapshot),
          new Date(report.now),
        ],
      );
      if (inserted) return { row: inserted, created: true };
      const existing = await this.findOpen(db, report.reporterId, report.targetType, report.targetId);
      if (existing) return { row: existing, created: false };
    }
    throw new Error('report filing lost two races in a row');
  }

  async find(db: Queryable, id: string): Promise<ReportRow | undefined> {
    const [row] = await db.query<ReportRow>(`SELECT ${COLUMNS} FROM reports WHERE id = $1`, [id]);
    return row;
  }

  /** Newest first, paged by `before`; `total` counts the whole filtered set. */
  async search(db: Queryable, query: ReportQuery): Promise<{ rows: ReportRow[]; total: number }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      conditions.push(sql.replace('?', `$${params.length}`));
    };
    if (query.status !== undefined) add('status = ?', query.status);
    if (query.target_type !== undefined) add('target_type = ?', query.target_type);
    if (query.target_id !== undefined) add('target_id = ?', query.target_id);
    if (query.reporter_id !== undefined) add('reporter_id = ?', query.reporter_id);
    const filter = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const [count] = await db.query<{ total: string }>(`SELECT count(*)::text AS total FROM reports ${filter}`, params);

    const pageParams = [...params];
    let pageFilter = filter;
    if (query.before !== undefined) {
      pageParams.push(query.before);
      pageFilter = `${filter ? `${filter} AND` : 'WHERE'} id < $${pageParams.length}`;
    }
    pageParams.push(query.limit);
    const rows = await db.query<ReportRow>(
      `SELECT ${COLUMNS} FROM reports ${pageFilter} ORDER BY id DESC LIMIT $${pageParams.length}`,
      pageParams,
    );
    return { rows, total: Number(count?.total ?? 0) };
  }

  /** Closes an open report; undefined when it was not open (already closed by someone else). */
  async close(
    db: Queryable,
    id: string,
    change: { status: Exclude<ReportStatus, 'open'>; adminUserId: string; note: string | null; now: number },
  ): Promise<ReportRow | undefined> {
    const [row] = await db.query<ReportRow>(
      `UPDATE reports SET status = $2, closed_by = $3, resolution_note = $4, closed_at = $5
        WHERE id = $1 AND status = 'open'
        RETURNING ${COLUMNS}`,
      [id, change.status, change.adminUserId, change.note, new Date(change.now)],
    );
    return row;
  }
}
