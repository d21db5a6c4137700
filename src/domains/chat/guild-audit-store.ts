import type { Queryable } from '../../platform/db/database.ts';

/** A row of `guild_audit_log` (migration 0125); int8 columns as decimal strings. */
export interface AuditEntryRow {
  id: string;
  guild_id: string;
  user_id: string | null;
  target_id: string | null;
  action_type: number;
  changes: { key: string; old_value?: unknown; new_value?: unknown }[];
  options: Record<string, string> | null;
  reason: string | null;
}

export interface AuditPageQuery {
  userId?: string | undefined;
  actionType?: number | undefined;
  before?: string | undefined;
  after?: string | undefined;
  limit: number;
}

/** A webhook named by audit log entries, as the audit log lists it (still existing ones only). */
export interface AuditWebhookRow {
  id: string;
  guild_id: string;
  channel_id: string;
  creator_id: string | null;
  name: string;
  avatar: string | null;
}

const COLUMNS = 'id, guild_id, user_id, target_id, action_type, changes, options, reason';

/** The guild audit log's SQL: one insert per entry, pages read newest first through (guild_id, id DESC). */
export class GuildAuditStore {
  constructor(private readonly db: Queryable) {}

  async insert(entry: AuditEntryRow, db: Queryable = this.db): Promise<void> {
    await db.query(`INSERT INTO guild_audit_log (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8)`, [
      entry.id,
      entry.guild_id,
      entry.user_id,
      entry.target_id,
      entry.action_type,
      JSON.stringify(entry.changes),
      entry.options === null ? null : JSON.stringify(entry.options),
      entry.reason,
    ]);
  }

  /**
   * One page, newest first. With only `after`, the entries closest to it are wanted: read ascending, then
   * restore the order (as the message list does).
   */
  async page(guildId: string, query: AuditPageQuery): Promise<AuditEntryRow[]> {
    const params: unknown[] = [guildId];
    let filter = '';
    const add = (sql: string, value: unknown) => {
      params.push(value);
      filter += ` AND ${sql}$${params.length}`;
    };
    if (query.userId !== undefined) add('user_id = ', query.userId);
    if (query.actionType !== undefined) add('action_type = ', query.actionType);
    if (query.before !== undefined) add('id < ', query.before);
    if (query.after !== undefined) add('id > ', query.after);
    params.push(query.limit);
    const ascending = query.after !== undefined && query.before === undefined;
    const rows = await this.db.query<AuditEntryRow>(
      `SELECT ${COLUMNS} FROM guild_audit_log WHERE guild_id = $1${filter}
        ORDER BY id ${ascending ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
      params,
    );
    if (ascending) rows.reverse();
    return rows;
  }

  async webhooks(guildId: string, ids: readonly string[]): Promise<AuditWebhookRow[]> {
    if (ids.length === 0) return [];
    return this.db.query<AuditWebhookRow>(
      `SELECT id, guild_id, channel_id, creator_id, name, avatar FROM webhooks
        WHERE guild_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`,
      [guildId, [...new Set(ids)]],
    );
  }
}
