import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import type { AnyRoute, RequestContext } from '../../http/route.ts';
import { ALL_SUSPICIOUS_FLAGS, USER_FLAGS } from '../../identity/flags.ts';
import type { Principal } from '../../identity/principal.ts';
import { toUserRecord, type UserRecord, type UserRow } from '../../identity/user-record.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { aclListField, assertCanGrant, effectiveAcls } from './acls.ts';
import { adminRoute, bitfieldField, snowflakeField, targetUser } from './admin-route.ts';
import { adminUserView } from './admin-user-view.ts';
import { type AuditActor, type AuditChange, type AuditLog, auditActor } from './audit-log.ts';

const KNOWN_USER_FLAGS = Object.values(USER_FLAGS).reduce((a, b) => a | b, 0n);
/** Flags that take an account out of service: setting one ends its sessions. */
const LOCKOUT_FLAGS = USER_FLAGS.DISABLED | USER_FLAGS.DISABLED_SUSPICIOUS_ACTIVITY | USER_FLAGS.DELETED;
/** `duration_hours: 0` bans until an explicit unban; stored as a far-future instant. */
const UNTIL_UNBANNED = new Date('9999-12-31T23:59:59.999Z');
const LOOKUP_LIMIT = 25;
const DAY_MS = 86_400_000;

const userIdBody = z.object({ user_id: snowflakeField });
const suspiciousFlagsField = z
  .number()
  .int()
  .min(0)
  .refine((v) => (v & ~ALL_SUSPICIOUS_FLAGS) === 0, { error: 'Unknown suspicious-activity bits' });

function knownFlagBits(path: string, value: bigint | undefined): bigint {
  if (value === undefined) return 0n;
  if ((value & ~KNOWN_USER_FLAGS) !== 0n) throw fieldError(path, 'INVALID_FORMAT', 'Contains unknown user flag bits');
  return value;
}

async function lockedUser(tx: Queryable, userId: string): Promise<UserRecord> {
  const [row] = await tx.query<UserRow>('SELECT * FROM users WHERE id = $1 FOR UPDATE', [userId]);
  if (!row) throw new ApiError('UNKNOWN_USER');
  return toUserRecord(row);
}

/** What `userRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type UserRoutesDeps = Pick<AppServices, 'credentials' | 'db' | 'mfa' | 'sessions' | 'users'>;

/** Admin operations on accounts (docs/admin.md). Each write is audited in its own transaction. */
export function userRoutes(services: UserRoutesDeps, deps: { audit: AuditLog }): AnyRoute[] {
  const { db, credentials, sessions } = services;
  const { audit } = deps;

  /**
   * Runs one audited change: reads the locked target, applies `change`, records the entry, and afterwards
   * drops cached credentials (and ends sessions when asked) so the change applies to the next request.
   */
  async function auditedUserChange(
    ctx: RequestContext,
    userId: string,
    change: (tx: Queryable, user: UserRecord) => Promise<Omit<AuditChange, 'targetType' | 'targetId'>>,
    options: { revokeSessions?: (user: UserRecord) => boolean } = {},
  ): Promise<UserRecord> {
    const actor: AuditActor = auditActor(ctx);
    const before = await db.transaction(async (tx) => {
      const user = await lockedUser(tx, userId);
      const entry = await change(tx, user);
      await audit.record(tx, actor, { ...entry, targetType: 'user', targetId: userId });
      return user;
    });
    const after = (await services.users.findById(userId, { fresh: true })) ?? before;
    if (options.revokeSessions?.(after)) await sessions.revokeAll(userId);
    else await credentials.invalidate({ userId });
    return after;
  }

  async function setColumns(tx: Queryable, userId: string, sql: string, params: unknown[]): Promise<void> {
    await tx.query(`UPDATE users SET ${sql} WHERE id = $1`, [userId, ...params]);
  }

  return [
    adminRoute({
      method: 'GET',
      path: '/admin/users/me',
      acl: 'admin:authenticate',
      kind: 'read',
      async handler(ctx) {
        const principal = ctx.principal as Principal;
        const keyAcls = principal.kind === 'admin_key' ? principal.keyAcls : undefined;
        return {
          user: await adminUserView(services, principal.user),
          acls: effectiveAcls(principal.user.acls, keyAcls),
        };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/lookup',
      acl: 'user:lookup',
      kind: 'read',
      body: z.object({ query: z.string().trim().min(1).max(254) }),
      async handler(ctx) {
        const query = ctx.body.query;
        const tagged = /^(.{1,32})#(\d{4})$/.exec(query);
        let rows: UserRow[];
        if (tagged) {
          // Every account's discriminator is 0001: another tag names nobody.
          rows =
            tagged[2] === '0001'
              ? await db.query<UserRow>('SELECT * FROM users WHERE lower(username) = lower($1) ORDER BY id LIMIT $2', [
                  tagged[1],
                  LOOKUP_LIMIT,
                ])
              : [];
        } else if (query.includes('@')) {
          rows = await db.query<UserRow>('SELECT * FROM users WHERE lower(email) = lower($1) LIMIT $2', [
            query,
            LOOKUP_LIMIT,
          ]);
        } else if (/^\d{1,20}$/.test(query) && isSnowflake(query)) {
          rows = await db.query<UserRow>(
            'SELECT * FROM users WHERE id = $1::bigint OR lower(username) = lower($2) ORDER BY id LIMIT $3',
            [query, query, LOOKUP_LIMIT],
          );
        } else {
          rows = await db.query<UserRow>('SELECT * FROM users WHERE lower(username) = lower($1) ORDER BY id LIMIT $2', [
            query,
            LOOKUP_LIMIT,
          ]);
        }
        const users = await Promise.all(rows.map((row) => adminUserView(services, toUserRecord(row))));
        return { users };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/update-flags',
      acl: 'user:update:flags',
      kind: 'write',
      body: z.object({
        user_id: snowflakeField,
        add_flags: bitfieldField.optional(),
        remove_flags: bitfieldField.optional(),
      }),
      async handler(ctx) {
        const add = knownFlagBits('add_flags', ctx.body.add_flags);
        const remove = knownFlagBits('remove_flags', ctx.body.remove_flags);
        const user = await auditedUserChange(
          ctx,
          ctx.body.user_id,
          async (tx, before) => {
            const flags = (before.flags | add) & ~remove;
            await setColumns(tx, before.id, 'flags = $2', [flags.toString()]);
            return {
              action: 'user.update_flags',
              metadata: { add_flags: add.toString(), remove_flags: remove.toString() },
              before: { flags: before.flags.toString() },
              after: { flags: flags.toString() },
            };
          },
          { revokeSessions: (after) => (after.flags & add & LOCKOUT_FLAGS) !== 0n },
        );
        return { user: await adminUserView(services, user) };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/update-suspicious-activity-flags',
      acl: 'user:update:suspicious_activity',
      kind: 'write',
      body: z.object({ user_id: snowflakeField, flags: suspiciousFlagsField }),
      async handler(ctx) {
        const user = await auditedUserChange(ctx, ctx.body.user_id, async (tx, before) => {
          await setColumns(tx, before.id, 'suspicious_activity_flags = $2', [ctx.body.flags]);
          return {
            action: 'user.update_suspicious_activity_flags',
            before: { suspicious_activity_flags: before.suspiciousActivityFlags },
            after: { suspicious_activity_flags: ctx.body.flags },
          };
        });
        return { user: await adminUserView(services, user) };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/set-acls',
      acl: 'acl:set:user',
      kind: 'write',
      body: z.object({ user_id: snowflakeField, acls: aclListField }),
      async handler(ctx) {
        const principal = ctx.principal as Principal;
        if (ctx.body.user_id === principal.user.id) throw new ApiError('ACCESS_DENIED');
        const target = await targetUser(services, ctx.body.user_id);
        // Adding and removing both count as granting: a lesser admin can neither raise nor strip others.
        const next = ctx.body.acls;
        const changed = [
          ...next.filter((a) => !target.acls.includes(a)),
          ...target.acls.filter((a) => !next.includes(a)),
        ];
        const grantors =
          principal.kind === 'admin_key' ? [principal.user.acls, principal.keyAcls] : [principal.user.acls];
        assertCanGrant(grantors, changed);
        await auditedUserChange(ctx, target.id, async (tx, before) => {
          await setColumns(tx, before.id, 'acls = $2', [next]);
          return { action: 'user.set_acls', before: { acls: before.acls }, after: { acls: next } };
        });
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/disable-suspicious',
      acl: 'user:disable:suspicious',
      kind: 'write',
      body: z.object({ user_id: snowflakeField, flags: suspiciousFlagsField }),
      async handler(ctx) {
        await auditedUserChange(
          ctx,
          ctx.body.user_id,
          async (tx, before) => {
            const flags = before.flags | USER_FLAGS.DISABLED_SUSPICIOUS_ACTIVITY;
            await setColumns(tx, before.id, 'flags = $2, suspicious_activity_flags = $3', [
              flags.toString(),
              ctx.body.flags,
            ]);
            return {
              action: 'user.disable_suspicious',
              before: { flags: before.flags.toString(), suspicious_activity_flags: before.suspiciousActivityFlags },
              after: { flags: flags.toString(), suspicious_activity_flags: ctx.body.flags },
            };
          },
          { revokeSessions: () => true },
        );
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/temp-ban',
      acl: 'user:temp_ban',
      kind: 'write',
      body: z.object({
        user_id: snowflakeField,
        duration_hours: z
          .number()
          .int()
          .min(0)
          .max(24 * 365 * 10),
        reason: z.string().max(512).optional(),
      }),
      async handler(ctx) {
        const hours = ctx.body.duration_hours;
        const until = hours === 0 ? UNTIL_UNBANNED : new Date(ctx.now + hours * 3600_000);
        await auditedUserChange(
          ctx,
          ctx.body.user_id,
          async (tx, before) => {
            await setColumns(tx, before.id, 'temp_banned_until = $2', [until]);
            return {
              action: 'user.temp_ban',
              metadata: { duration_hours: hours, ...(ctx.body.reason ? { reason: ctx.body.reason } : {}) },
              before: { temp_banned_until: before.tempBannedUntil?.toISOString() ?? null },
              after: { temp_banned_until: until.toISOString() },
            };
          },
          { revokeSessions: () => true },
        );
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/unban',
      acl: 'user:temp_ban',
      kind: 'write',
      body: userIdBody,
      async handler(ctx) {
        await auditedUserChange(ctx, ctx.body.user_id, async (tx, before) => {
          await setColumns(tx, before.id, 'temp_banned_until = NULL', []);
          return {
            action: 'user.unban',
            before: { temp_banned_until: before.tempBannedUntil?.toISOString() ?? null },
            after: { temp_banned_until: null },
          };
        });
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/schedule-deletion',
      acl: 'user:delete',
      kind: 'write',
      body: z.object({
        user_id: snowflakeField,
        reason_code: z.number().int().min(0).max(1000),
        days_until_deletion: z.number().int().min(0).max(365).default(60),
      }),
      async handler(ctx) {
        const at = new Date(ctx.now + ctx.body.days_until_deletion * DAY_MS);
        await auditedUserChange(
          ctx,
          ctx.body.user_id,
          async (tx, before) => {
            // An operator's deletion is not the holder's: clearing SELF_DELETED keeps a login from cancelling it.
            const flags = before.flags & ~USER_FLAGS.SELF_DELETED;
            await setColumns(tx, before.id, 'pending_deletion_at = $2, deletion_reason_code = $3, flags = $4', [
              at,
              ctx.body.reason_code,
              flags.toString(),
            ]);
            return {
              action: 'user.schedule_deletion',
              metadata: { reason_code: ctx.body.reason_code, days_until_deletion: ctx.body.days_until_deletion },
              before: { pending_deletion_at: before.pendingDeletionAt?.toISOString() ?? null },
              after: { pending_deletion_at: at.toISOString() },
            };
          },
          { revokeSessions: () => true },
        );
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/cancel-deletion',
      acl: 'user:delete',
      kind: 'write',
      body: userIdBody,
      async handler(ctx) {
        await auditedUserChange(ctx, ctx.body.user_id, async (tx, before) => {
          const flags = before.flags & ~USER_FLAGS.SELF_DELETED;
          await setColumns(tx, before.id, 'pending_deletion_at = NULL, deletion_reason_code = NULL, flags = $2', [
            flags.toString(),
          ]);
          return {
            action: 'user.cancel_deletion',
            before: { pending_deletion_at: before.pendingDeletionAt?.toISOString() ?? null },
            after: { pending_deletion_at: null },
          };
        });
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/list-sessions',
      acl: 'user:list:sessions',
      kind: 'read',
      body: userIdBody,
      async handler(ctx) {
        const user = await targetUser(services, ctx.body.user_id);
        const rows = await services.sessions.list(user.id);
        return {
          sessions: rows.map((row) => ({
            id_hash: row.token_hash,
            client_info: row.client_info,
            ip: row.ip,
            created_at: row.created_at.toISOString(),
            last_used_at: row.last_used_at.toISOString(),
          })),
        };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/terminate-sessions',
      acl: 'user:update:flags',
      kind: 'write',
      body: userIdBody,
      async handler(ctx) {
        await auditedUserChange(
          ctx,
          ctx.body.user_id,
          async (tx, before) => {
            const [count] = await tx.query<{ n: string }>('SELECT count(*) AS n FROM sessions WHERE user_id = $1', [
              before.id,
            ]);
            return { action: 'user.terminate_sessions', metadata: { sessions: Number(count?.n ?? 0) } };
          },
          { revokeSessions: () => true },
        );
        return { success: true };
      },
    }),

    adminRoute({
      method: 'POST',
      path: '/admin/users/disable-mfa',
      acl: 'user:update:mfa',
      kind: 'write',
      body: userIdBody,
      async handler(ctx) {
        const target = await targetUser(services, ctx.body.user_id);
        const status = await services.mfa.status(target.id);
        await auditedUserChange(ctx, target.id, async (tx) => {
          await services.mfa.removeAllFactors(target.id, tx);
          return {
            action: 'user.disable_mfa',
            before: { totp: status.totp, webauthn: status.webauthn },
            after: { totp: false, webauthn: false },
          };
        });
        return { success: true };
      },
    }),
  ];
}
