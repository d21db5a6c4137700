import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { fieldError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { hasFlag, USER_FLAGS } from '../../identity/flags.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { ipKey as toIpKey } from '../../platform/net/cidr.ts';
import { requireUser, testRoute } from './test-route.ts';

const seedBody = z.object({
  ticket: z.string().min(1).max(256),
  token: z.string().min(1).max(256),
  user_id: z.union([z.string(), z.number()]).transform(String),
  email: z.string().max(320),
  client_ip: z.string().max(64),
  resend_used: z.boolean().optional(),
  created_at: z.number().int().optional(),
  ttl_seconds: z.number().int().min(1).max(86_400).optional(),
});

const premiumBody = z.object({
  premium_type: z.number().int().min(0).max(10),
  premium_until: z.union([z.string(), z.number()]).nullish(),
});

/**
 * How many rows of the user's data each store still holds (docs/accounts.md#test-harness-test-mode-only `data-exists`). Relationships are
 * stored one row per direction, so the user's own list is the rows keyed by the user. Pinned DMs and saved
 * messages have no store yet (READY sends them empty), so there is nothing to count.
 */
async function dataCounts(db: Queryable, userId: string) {
  const [row] = await db.query<{ relationships: string; sessions: string; oauth_tokens: string }>(
    `SELECT (SELECT count(*) FROM relationships WHERE user_id = $1) AS relationships,
            (SELECT count(*) FROM sessions WHERE user_id = $1) AS sessions,
            (SELECT count(*) FROM oauth2_tokens t JOIN oauth2_grants g ON g.id = t.grant_id
              WHERE g.user_id = $1) AS oauth_tokens`,
    [userId],
  );
  return {
    relationships_count: Number(row?.relationships ?? 0),
    sessions_count: Number(row?.sessions ?? 0),
    oauth_tokens_count: Number(row?.oauth_tokens ?? 0),
    pinned_dms_count: 0,
    saved_messages_count: 0,
  };
}

/** What `lifecycleTestRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type LifecycleTestRoutesDeps = Pick<AppServices, 'credentials' | 'db' | 'ipAuthorization' | 'mfa'>;

/** Test-harness routes of the account lifecycle (docs/accounts.md#test-harness-test-mode-only). */
export function lifecycleTestRoutes(services: LifecycleTestRoutesDeps): AnyRoute[] {
  const { db, credentials } = services;
  const { ipAuthorization } = services;

  return [
    testRoute({
      method: 'POST',
      path: '/test/auth/ip-authorization',
      body: seedBody,
      async handler(ctx) {
        const body = ctx.body;
        const userId = await requireUser(services, body.user_id);
        await ipAuthorization.seed({
          ticket: body.ticket,
          token: body.token,
          userId,
          email: body.email,
          ip: body.client_ip,
          ipKey: toIpKey(body.client_ip),
          ...(body.resend_used !== undefined ? { resendUsed: body.resend_used } : {}),
          ...(body.created_at !== undefined ? { createdAt: body.created_at } : {}),
          ...(body.ttl_seconds !== undefined ? { ttlMs: body.ttl_seconds * 1000 } : {}),
        });
        return { success: true };
      },
    }),

    testRoute({
      method: 'POST',
      path: '/test/auth/ip-authorization/expire',
      body: z.object({ ticket: z.string().max(256).optional(), token: z.string().max(256).optional() }),
      async handler(ctx) {
        await ipAuthorization.expire(ctx.body.ticket, ctx.body.token);
        return { success: true };
      },
    }),

    testRoute({
      method: 'POST',
      path: '/test/users/:userId/unclaim',
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        await db.transaction(async (tx) => {
          await tx.query(
            'UPDATE users SET email = NULL, email_verified = false, password_hash = NULL, password_last_changed_at = NULL WHERE id = $1',
            [userId],
          );
          await services.mfa.removeAllFactors(userId, tx);
        });
        await credentials.invalidate({ userId });
        return { success: true };
      },
    }),

    testRoute({
      method: 'POST',
      path: '/test/users/:userId/premium',
      body: premiumBody,
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        const until = ctx.body.premium_until;
        const untilDate = until === null || until === undefined ? null : new Date(until);
        if (untilDate && Number.isNaN(untilDate.getTime())) throw fieldError('premium_until', 'INVALID_FORMAT');
        await db.query('UPDATE users SET premium_type = $2, premium_until = $3 WHERE id = $1', [
          userId,
          ctx.body.premium_type,
          untilDate,
        ]);
        await credentials.invalidate({ userId });
        return { success: true };
      },
    }),

    testRoute({
      method: 'GET',
      path: '/test/users/:userId/data-exists',
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        const [user] = await db.query<{
          email: string | null;
          password_hash: string | null;
          flags: string;
          pending_deletion_at: Date | null;
        }>('SELECT email, password_hash, flags, pending_deletion_at FROM users WHERE id = $1', [userId]);
        const flags = BigInt(user?.flags ?? '0');
        return {
          user_exists: Boolean(user),
          email_cleared: user?.email === null,
          phone_cleared: true,
          password_cleared: user?.password_hash === null,
          flags: flags.toString(),
          has_deleted_flag: hasFlag(flags, USER_FLAGS.DELETED),
          has_self_deleted_flag: hasFlag(flags, USER_FLAGS.SELF_DELETED),
          pending_deletion_at: user?.pending_deletion_at?.toISOString() ?? null,
          ...(await dataCounts(db, userId)),
        };
      },
    }),
  ];
}
