import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import {
  ALL_SUSPICIOUS_FLAGS,
  SUSPICIOUS_FLAGS,
  type SuspiciousFlagName,
  USER_FLAGS,
  type UserFlagName,
} from '../../identity/flags.ts';
import { type ChatTestRoutesDeps, chatTestRoutes } from './chat.ts';
import { type LifecycleTestRoutesDeps, lifecycleTestRoutes } from './lifecycle.ts';
import { type MfaTestRoutesDeps, mfaTestRoutes } from './mfa.ts';
import { requireUser, testRoute } from './test-route.ts';

const securityFlagsBody = z.object({
  set_flags: z.array(z.string()).optional(),
  clear_flags: z.array(z.string()).optional(),
  suspicious_activity_flags: z.number().int().min(0).nullish(),
  suspicious_activity_flag_names: z.array(z.string()).optional(),
  pending_manual_verification: z.boolean().optional(),
});

const bigintInput = z.union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0)]).transform((v) => BigInt(v));

function userFlagBits(names: readonly string[]): bigint {
  let bits = 0n;
  for (const name of names) {
    const bit = USER_FLAGS[name as UserFlagName];
    if (bit === undefined) throw new ApiError('UNKNOWN_USER_FLAG', { message: `Unknown user flag: ${name}` });
    bits |= bit;
  }
  return bits;
}

function suspiciousBits(names: readonly string[]): number {
  let bits = 0;
  for (const name of names) {
    const bit = SUSPICIOUS_FLAGS[name as SuspiciousFlagName];
    if (bit === undefined)
      throw new ApiError('UNKNOWN_SUSPICIOUS_FLAG', { message: `Unknown suspicious activity flag: ${name}` });
    bits |= bit;
  }
  return bits;
}

/**
 * What the test harness uses of the composition root's services (docs/architecture.md#narrow-dependencies).
 */
export type TestHarnessRoutesDeps = CoreTestRoutesDeps &
  LifecycleTestRoutesDeps &
  MfaTestRoutesDeps &
  ChatTestRoutesDeps;

/**
 * The test harness under /v1/test and /test (docs/accounts.md#test-harness-test-mode-only): every route has
 * policy `test`, so it answers only in test mode with the right `X-Test-Token`.
 */
export function testHarnessRoutes(services: TestHarnessRoutesDeps): AnyRoute[] {
  return [
    ...lifecycleTestRoutes(services),
    ...mfaTestRoutes(services),
    ...chatTestRoutes(services),
    ...coreTestRoutes(services),
  ];
}

/** What `coreTestRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type CoreTestRoutesDeps = Pick<
  AppServices,
  'clock' | 'credentials' | 'db' | 'ipBans' | 'mfa' | 'outbox' | 'rateLimiter'
>;

export function coreTestRoutes(services: CoreTestRoutesDeps): AnyRoute[] {
  const { db, credentials, outbox, clock } = services;
  const changed = (userId: string) => credentials.invalidate({ userId });

  return [
    testRoute({
      method: 'POST',
      path: '/test/users/:userId/security-flags',
      body: securityFlagsBody,
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        const body = ctx.body;
        const setBits = userFlagBits(body.set_flags ?? []);
        const clearBits = userFlagBits(body.clear_flags ?? []);
        let suspicious: number | undefined;
        if (body.suspicious_activity_flags !== undefined)
          suspicious = (body.suspicious_activity_flags ?? 0) & ALL_SUSPICIOUS_FLAGS;
        if (body.suspicious_activity_flag_names)
          suspicious = (suspicious ?? 0) | suspiciousBits(body.suspicious_activity_flag_names);
        const [row] = await db.query<{ flags: string; suspicious_activity_flags: number }>(
          `UPDATE users SET flags = (flags | $2::bigint) & ~($3::bigint),
                  suspicious_activity_flags = COALESCE($4, suspicious_activity_flags),
                  pending_manual_verification = COALESCE($5, pending_manual_verification)
            WHERE id = $1 RETURNING flags, suspicious_activity_flags`,
          [
            userId,
            setBits.toString(),
            clearBits.toString(),
            suspicious ?? null,
            body.pending_manual_verification ?? null,
          ],
        );
        await changed(userId);
        return {
          success: true,
          updated: true,
          flags: row?.flags,
          suspicious_activity_flags: row?.suspicious_activity_flags,
        };
      },
    }),
    testRoute({
      method: 'PATCH',
      path: '/test/users/:userId/flags',
      body: z.object({ flags: bigintInput }),
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        await db.query('UPDATE users SET flags = $2 WHERE id = $1', [userId, ctx.body.flags.toString()]);
        await changed(userId);
        return { success: true };
      },
    }),
    testRoute({
      method: 'POST',
      path: '/test/users/:userId/acls',
      body: z.object({ acls: z.array(z.string().max(100)).max(200).nullable() }),
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        const acls = ctx.body.acls ?? [];
        await db.query('UPDATE users SET acls = $2 WHERE id = $1', [userId, acls]);
        await changed(userId);
        return { success: true, count: acls.length };
      },
    }),
    testRoute({
      method: 'POST',
      path: '/test/users/:userId/set-bot-flag',
      body: z.object({ is_bot: z.boolean() }),
      async handler(ctx) {
        const userId = await requireUser(services, ctx.params.userId);
        await db.query('UPDATE users SET is_bot = $2 WHERE id = $1', [userId, ctx.body.is_bot]);
        await changed(userId);
        return { success: true };
      },
    }),
    testRoute({
      method: 'GET',
      path: '/test/emails',
      query: z.object({ recipient: z.string().optional() }),
      handler(ctx) {
        const emails = outbox?.list(ctx.query.recipient) ?? [];
        return { emails, count: emails.length };
      },
    }),
    testRoute({
      method: 'DELETE',
      path: '/test/emails',
      handler() {
        outbox?.clear();
        return { cleared: true };
      },
    }),
    testRoute({
      method: 'POST',
      path: '/test/clock',
      body: z.object({ offset_ms: z.number().int(), frozen: z.boolean().optional() }),
      handler(ctx) {
        clock.setOffset(ctx.body.offset_ms, ctx.body.frozen === true);
        return { now: clock.now() };
      },
    }),
    testRoute({
      method: 'POST',
      path: '/test/rate-limits/reset',
      async handler() {
        await services.rateLimiter.reset();
        await services.ipBans.reset();
        await services.mfa.attempts.reset();
        return { success: true };
      },
    }),
  ];
}
