import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { MFA_TICKET_TTL_MS } from '../auth/login-mfa.ts';
import { requireUser, testRoute } from './test-route.ts';

/** What `mfaTestRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type MfaTestRoutesDeps = Pick<AppServices, 'db' | 'mfa'>;

/** `POST /test/auth/mfa-ticket` (docs/accounts.md#test-harness-test-mode-only): plants an MFA login ticket chosen by the caller. */
export function mfaTestRoutes(services: MfaTestRoutesDeps): AnyRoute[] {
  return [
    testRoute({
      method: 'POST',
      path: '/test/auth/mfa-ticket',
      body: z.object({
        ticket: z.string().min(1).max(256),
        user_id: z.union([z.string(), z.number()]).transform(String),
        ttl_seconds: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .default(MFA_TICKET_TTL_MS / 1000),
      }),
      async handler(ctx) {
        const { ticket, ttl_seconds } = ctx.body;
        const userId = await requireUser(services, ctx.body.user_id);
        await services.mfa.tickets.issue(userId, { ttlMs: ttl_seconds * 1000, token: ticket });
        return { success: true, ticket, user_id: userId, ttl_seconds };
      },
    }),
  ];
}
