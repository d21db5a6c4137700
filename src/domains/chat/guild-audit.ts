import { type PartialUser, partialUser } from '../../identity/user-record.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { ChatEvents } from './events.ts';
import type { AuditEntryRow, AuditPageQuery, GuildAuditStore } from './guild-audit-store.ts';
import { PERMISSIONS } from './permissions.ts';
import type { ChatStore } from './store.ts';
import type { ThreadStore } from './thread-store.ts';
import { type ThreadView, threadView } from './thread-views.ts';

/**
 * The guild audit log (Discord's): every moderation and settings change of a guild, who made it and the
 * `X-Audit-Log-Reason` they gave. Not the instance admin audit log (`domains/admin/audit-log.ts`).
 */

/** Discord's AuditLogEvent numbers, those Hearth records. */
export const AUDIT_LOG_EVENTS = {
  GUILD_UPDATE: 1,
  CHANNEL_CREATE: 10,
  CHANNEL_UPDATE: 11,
  CHANNEL_DELETE: 12,
  CHANNEL_OVERWRITE_CREATE: 13,
  CHANNEL_OVERWRITE_UPDATE: 14,
  CHANNEL_OVERWRITE_DELETE: 15,
  MEMBER_KICK: 20,
  MEMBER_BAN_ADD: 22,
  MEMBER_BAN_REMOVE: 23,
  MEMBER_UPDATE: 24,
  MEMBER_ROLE_UPDATE: 25,
  MEMBER_MOVE: 26,
  MEMBER_DISCONNECT: 27,
  BOT_ADD: 28,
  ROLE_CREATE: 30,
  ROLE_UPDATE: 31,
  ROLE_DELETE: 32,
  INVITE_CREATE: 40,
  INVITE_DELETE: 42,
  WEBHOOK_CREATE: 50,
  WEBHOOK_UPDATE: 51,
  WEBHOOK_DELETE: 52,
  EMOJI_CREATE: 60,
  EMOJI_UPDATE: 61,
  EMOJI_DELETE: 62,
  STICKER_CREATE: 90,
  STICKER_UPDATE: 91,
  STICKER_DELETE: 92,
  MESSAGE_DELETE: 72,
  MESSAGE_BULK_DELETE: 73,
  MESSAGE_PIN: 74,
  MESSAGE_UNPIN: 75,
  THREAD_CREATE: 110,
  THREAD_UPDATE: 111,
  THREAD_DELETE: 112,
} as const;

/** Action types whose `target_id` is a user (the users list resolves them). */
const USER_TARGETS: ReadonlySet<number> = new Set([20, 22, 23, 24, 25, 26, 27, 28, 72, 74, 75]);

/** How long entries are kept (Discord's 45 days); the janitor deletes older ones. */
export const GUILD_AUDIT_RETENTION_MS = 45 * 24 * 3600 * 1000;

/** The longest reason kept; a longer `X-Audit-Log-Reason` is cut here. */
export const AUDIT_REASON_MAX = 512;

export interface AuditChange {
  key: string;
  old_value?: unknown;
  new_value?: unknown;
}

export interface AuditEntryInput {
  guildId: string;
  action: number;
  /** Who made the change; null for the system. */
  userId: string | null;
  targetId: string | null;
  changes?: AuditChange[];
  /** Discord's optional entry info; values are strings on the wire. */
  options?: Record<string, string>;
  reason?: string | null;
}

/** What the mutation routes need: one call per change, after it committed. */
export interface AuditRecorder {
  record(entry: AuditEntryInput): Promise<void>;
}

/** `X-Audit-Log-Reason` (URL-encoded), decoded; a malformed encoding is kept as sent; NULs dropped; cut to 512 characters. */
export function auditReason(headers: Record<string, string | string[] | undefined>): string | null {
  const header = headers['x-audit-log-reason'];
  if (typeof header !== 'string' || header.length === 0) return null;
  let reason: string;
  try {
    reason = decodeURIComponent(header);
  } catch {
    reason = header;
  }
  // A NUL (`%00`) cannot be stored in text: it is dropped (docs/conventions.md#errors).
  return reason.replaceAll('\u0000', '').slice(0, AUDIT_REASON_MAX) || null;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Discord's `changes` of an entry: a created object lists its set fields as `new_value`, a deleted one as
 * `old_value`, an update the fields that differ with both. A null side is left out (Discord's way).
 */
export function auditChanges(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
  keys: readonly string[],
): AuditChange[] {
  const out: AuditChange[] = [];
  for (const key of keys) {
    const oldValue = before?.[key];
    const newValue = after?.[key];
    if (before && after && same(oldValue, newValue)) continue;
    if (!present(oldValue) && !present(newValue)) continue;
    out.push({
      key,
      ...(present(oldValue) ? { old_value: oldValue } : {}),
      ...(present(newValue) ? { new_value: newValue } : {}),
    });
  }
  return out;
}

/** A webhook an audit log page names (discord-api-types' APIWebhook, without its token or user). */
type AuditWebhookView = {
  id: string;
  type: 1;
  guild_id: string;
  channel_id: string;
  name: string;
  avatar: string | null;
  application_id: null;
};

/** discord-api-types' APIAuditLog as `GuildAudit.page` answers it: what Hearth has none of is an empty list. */
export type AuditLogPageView = {
  audit_log_entries: AuditEntryView[];
  users: PartialUser[];
  integrations: [];
  webhooks: AuditWebhookView[];
  guild_scheduled_events: [];
  threads: ThreadView[];
  application_commands: [];
  auto_moderation_rules: [];
};

/** APIAuditLogEntry as `auditEntryView` sends it: `changes`, `options` and `reason` only when there are some. */
export type AuditEntryView = {
  id: string;
  target_id: string | null;
  changes?: AuditEntryRow['changes'];
  user_id: string | null;
  action_type: number;
  options?: Record<string, string>;
  reason?: string;
};

/** APIAuditLogEntry. */
export function auditEntryView(row: AuditEntryRow): AuditEntryView {
  return {
    id: row.id,
    target_id: row.target_id,
    ...(row.changes.length > 0 ? { changes: row.changes } : {}),
    user_id: row.user_id,
    action_type: row.action_type,
    ...(row.options ? { options: row.options } : {}),
    ...(row.reason !== null ? { reason: row.reason } : {}),
  };
}

export class GuildAuditLog implements AuditRecorder {
  constructor(
    private readonly store: GuildAuditStore,
    private readonly chat: ChatStore,
    private readonly threads: ThreadStore,
    private readonly events: ChatEvents,
    private readonly ids: SnowflakeGenerator,
  ) {}

  /** Stores the entry, then GUILD_AUDIT_LOG_ENTRY_CREATE to the members holding VIEW_AUDIT_LOG. */
  async record(entry: AuditEntryInput): Promise<void> {
    const row: AuditEntryRow = {
      id: this.ids.next(),
      guild_id: entry.guildId,
      user_id: entry.userId,
      target_id: entry.targetId,
      action_type: entry.action,
      changes: entry.changes ?? [],
      options: entry.options && Object.keys(entry.options).length > 0 ? entry.options : null,
      reason: entry.reason ?? null,
    };
    await this.store.insert(row);
    await this.events.guildHolders(
      'GUILD_AUDIT_LOG_ENTRY_CREATE',
      entry.guildId,
      PERMISSIONS.VIEW_AUDIT_LOG,
      auditEntryView(row),
    );
  }

  /** APIAuditLog: a page of entries with the users, webhooks and threads they name. */
  async page(guildId: string, query: AuditPageQuery): Promise<AuditLogPageView> {
    const rows = await this.store.page(guildId, query);
    const userIds = new Set<string>();
    const webhookIds: string[] = [];
    const threadIds: string[] = [];
    for (const row of rows) {
      if (row.user_id) userIds.add(row.user_id);
      if (!row.target_id) continue;
      if (USER_TARGETS.has(row.action_type)) userIds.add(row.target_id);
      else if (row.action_type >= 50 && row.action_type <= 52) webhookIds.push(row.target_id);
      else if (row.action_type >= 110 && row.action_type <= 112) threadIds.push(row.target_id);
    }
    const [users, webhooks, threads] = await Promise.all([
      this.chat.usersByIds([...userIds]),
      this.store.webhooks(guildId, webhookIds),
      threadIds.length > 0 ? this.threads.findMany([...new Set(threadIds)]) : Promise.resolve([]),
    ]);
    return {
      audit_log_entries: rows.map(auditEntryView),
      users: [...users.values()].map(partialUser),
      integrations: [],
      webhooks: webhooks.map((w) => ({
        id: w.id,
        type: 1,
        guild_id: w.guild_id,
        channel_id: w.channel_id,
        name: w.name,
        avatar: w.avatar,
        application_id: null,
      })),
      guild_scheduled_events: [],
      threads: threads.filter((t) => t.guild_id === guildId).map((t) => threadView(t)),
      application_commands: [],
      auto_moderation_rules: [],
    };
  }
}
