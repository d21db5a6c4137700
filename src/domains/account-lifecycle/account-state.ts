import type { AppServices } from '../../app-services.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { USER_FLAGS } from '../../identity/flags.ts';

export const DELETION_GRACE_MS = 14 * 24 * 3600_000;
/** Test mode shortens the grace period so suites can watch a deletion complete (docs/accounts.md#test-harness-test-mode-only). */
export const TEST_DELETION_GRACE_MS = 36_000;

export function deletionGraceMs(services: Pick<AppServices, 'config'>): number {
  return services.config.testMode ? TEST_DELETION_GRACE_MS : DELETION_GRACE_MS;
}

/** What `accountStateRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AccountStateRoutesDeps = Pick<AppServices, 'config' | 'db' | 'ipAuthorization' | 'sessions'>;

/**
 * Self-service account state (docs/accounts.md): disable, delete (with a grace period that the next correct
 * password login cancels, see `reactivate`), and forgetting the authorised login addresses.
 */
export function accountStateRoutes(services: AccountStateRoutesDeps): AnyRoute[] {
  const { db, sessions } = services;
  const { ipAuthorization } = services;
  const stateLimit = { bucket: 'users:disable_delete', limit: 5, windowSeconds: 3600 };

  return [
    route({
      method: 'POST',
      path: '/users/@me/disable',
      policy: 'user-only',
      sudo: 'y0',
      rateLimit: stateLimit,
      async handler(ctx) {
        await db.query('UPDATE users SET flags = flags | $2::bigint WHERE id = $1', [
          ctx.user.id,
          USER_FLAGS.DISABLED.toString(),
        ]);
        await sessions.revokeAll(ctx.user.id);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/users/@me/delete',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: stateLimit,
      async handler(ctx) {
        await db.query('UPDATE users SET flags = flags | $2::bigint, pending_deletion_at = $3 WHERE id = $1', [
          ctx.user.id,
          USER_FLAGS.SELF_DELETED.toString(),
          new Date(ctx.now + deletionGraceMs(services)),
        ]);
        await sessions.revokeAll(ctx.user.id);
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/users/@me/authorized-ips',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: { bucket: 'users:write', limit: 20, windowSeconds: 10 },
      async handler(ctx) {
        await ipAuthorization.forgetAll(ctx.user.id);
        return undefined;
      },
    }),
  ];
}
