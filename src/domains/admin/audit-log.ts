import { ApiError, fieldError } from '../../http/errors.ts';
import type { RequestContext } from '../../http/route.ts';
import type { Principal } from '../../identity/principal.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Queryable } from '../../platform/db/database.ts';

export type AuditCredentialKind = 'session' | 'bearer' | 'admin_api_key';
export const AUDIT_REASON_MAX = 512;

/** Who made an Admin write, and why: read from the request before the write happens. */
export interface AuditActor {
  adminUserId: string;
  credentialKind: AuditCredentialKind;
  apiKeyId: string | null;
  reason: string | null;
  now: number;
}

export interface AuditChange {
  action: string;
  targetType: 'user' | 'admin_api_key' | 'ip_ban' | 'instance_config' | 'report';
  targetId: string;
  metadata?: Record<string, unknown>;
  before?: unknown;
  after?: unknown;
}

/**
 * `X-Audit-Log-Reason` as Discord-style libraries send it (URI-encoded); a value that does not decode is
 * kept as sent. Absent or empty: null.
 */
export function decodeAuditReason(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string' || header.length === 0) return null;
  let reason: string;
  try {
    reason = decodeURIComponent(header);
  } catch {
    // Not URI-encoded: keep the raw text.
    reason = header;
  }
  // A NUL (`%00`) cannot be stored in text: it is dropped (docs/conventions.md#errors).
  return reason.replaceAll('\u0000', '') || null;
}

/**
 * Who made an Admin write and why (`decodeAuditReason`). Over-long reasons are refused before anything
 * changes, so a refusal records nothing.
 */
export function auditActor(ctx: Pick<RequestContext, 'principal' | 'request' | 'now'>): AuditActor {
  const principal = ctx.principal as Principal;
  if (principal.kind === 'bot') throw new ApiError('UNAUTHORIZED');
  const reason = decodeAuditReason(ctx.request.headers['x-audit-log-reason']);
  if (reason !== null && reason.length > AUDIT_REASON_MAX)
    throw fieldError(
      'X-Audit-Log-Reason',
      'CONTENT_EXCEEDS_MAX_LENGTH',
      `Must be at most ${AUDIT_REASON_MAX} characters`,
    );
  return {
    adminUserId: principal.user.id,
    credentialKind: principal.kind === 'admin_key' ? 'admin_api_key' : principal.kind,
    apiKeyId: principal.kind === 'admin_key' ? principal.keyId : null,
    reason,
    now: ctx.now,
  };
}

export interface AuditQuery {
  admin_user_id?: string | undefined;
  target_type?: string | undefined;
  target_id?: string | undefined;
  action?: string | undefined;
  before?: string | undefined;
  limit: number;
}

interface AuditRow {
  log_id: string;
  admin_user_id: string;
  credential_kind: AuditCredentialKind;
  api_key_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  audit_log_reason: string | null;
  metadata: Record<string, unknown>;
  before: unknown;
  after: unknown;
  created_at: Date;
}

/** The audit trail of Admin writes (docs/admin.md): appended in the write's own transaction, read newest first. */
export class AuditLog {
  constructor(private readonly ids: SnowflakeGenerator) {}

  async record(db: Queryable, actor: AuditActor, change: AuditChange): Promise<void> {
    await db.query(
      `INSERT INTO audit_logs (log_id, admin_user_id, credential_kind, api_key_id, action, target_type, target_id,
                               audit_log_reason, metadata, before, after, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        this.ids.next(),
        actor.adminUserId,
        actor.credentialKind,
        actor.apiKeyId,
        change.action,
        change.targetType,
        change.targetId,
        actor.reason,
        JSON.stringify(change.metadata ?? {}),
        change.before === undefined || change.before === null ? null : JSON.stringify(change.before),
        change.after === undefined || change.after === null ? null : JSON.stringify(change.after),
        new Date(actor.now),
      ],
    );
  }

  async search(db: Queryable, query: AuditQuery): Promise<{ logs: Record<string, unknown>[]; total: number }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      conditions.push(sql.replace('?', `$${params.length}`));
    };
    if (query.admin_user_id !== undefined) add('admin_user_id = ?', query.admin_user_id);
    if (query.target_type !== undefined) add('target_type = ?', query.target_type);
    if (query.target_id !== undefined) add('target_id = ?', query.target_id);
    if (query.action !== undefined) add('action = ?', query.action);
    const filter = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const [count] = await db.query<{ total: string }>(`SELECT count(*) AS total FROM audit_logs ${filter}`, params);

    // `before` is a cursor, so it pages through the filtered set without changing its total.
    const pageParams = [...params];
    let pageFilter = filter;
    if (query.before !== undefined) {
      pageParams.push(query.before);
      pageFilter = `${filter ? `${filter} AND` : 'WHERE'} log_id < $${pageParams.length}`;
    }
    pageParams.push(query.limit);
    const rows = await db.query<AuditRow>(
      `SELECT * FROM audit_logs ${pageFilter} ORDER BY log_id DESC LIMIT $${pageParams.length}`,
      pageParams,
    );
    return { logs: rows.map(auditEntryView), total: Number(count?.total ?? 0) };
  }
}

/**
 * An entry of the Admin audit log (`auditEntryView`, docs/admin.md). `metadata`, `before` and `after` are what the
 * write recorded, of a shape that depends on the action: they stay open.
 */
export type AdminAuditEntryView = {
  log_id: string;
  admin_user_id: string;
  credential_kind: AuditCredentialKind;
  api_key_id?: string;
  action: string;
  target_type: string;
  target_id: string;
  audit_log_reason: string | null;
  metadata: Record<string, unknown>;
  before?: unknown;
  after?: unknown;
  created_at: string;
};

function auditEntryView(row: AuditRow): AdminAuditEntryView {
  return {
    log_id: row.log_id,
    admin_user_id: row.admin_user_id,
    credential_kind: row.credential_kind,
    ...(row.api_key_id !== null ? { api_key_id: row.api_key_id } : {}),
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    audit_log_reason: row.audit_log_reason,
    metadata: row.metadata,
    ...(row.before !== null ? { before: row.before } : {}),
    ...(row.after !== null ? { after: row.after } : {}),
    created_at: row.created_at.toISOString(),
  };
}
