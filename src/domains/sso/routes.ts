import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { clientInfoOf } from '../auth/client-info.ts';
import { ssoStatus } from '../discovery/sso-status.ts';
import { tokenResponse } from '../users/views.ts';
import { SsoFlow } from './sso-flow.ts';

/**
 * A same-origin path: one leading slash, not `//` or `/\` (both are read by browsers as another host),
 * no control characters, no scheme.
 */
const relativePath = z
  .string()
  .max(2048)
  .refine((value) => /^\/(?![/\\])[^\s\p{Cc}]*$/u.test(value), { error: 'Must be a relative path starting with /' });

const startBody = z.object({
  redirect_to: relativePath.nullish(),
  redirect_uri: z.string().max(2048).nullish(),
});

const completeBody = z.object({
  code: z.string().min(1).max(4096),
  state: z.string().max(512),
});

/** What `ssoRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type SsoRoutesDeps = Pick<
  AppServices,
  | 'clock'
  | 'config'
  | 'credentials'
  | 'db'
  | 'ids'
  | 'log'
  | 'mfaView'
  | 'secrets'
  | 'sessions'
  | 'settings'
  | 'tokens'
  | 'users'
>;

/**
 * Single sign-on routes (docs/accounts.md). None of them is `·L`: they are the way in while SSO is enforced.
 * Rate-limit buckets: `auth:sso:status`, `auth:sso:start` (10/10 s each), `auth:sso:complete` (15/10 s).
 */
export function ssoRoutes(services: SsoRoutesDeps): AnyRoute[] {
  const flow = new SsoFlow(services);

  return [
    route({
      method: 'GET',
      path: '/auth/sso/status',
      policy: 'none',
      rateLimit: { bucket: 'auth:sso:status', limit: 10, windowSeconds: 10 },
      handler: () => ssoStatus(services.config, services.settings),
    }),

    route({
      method: 'POST',
      path: '/auth/sso/start',
      policy: 'none',
      rateLimit: { bucket: 'auth:sso:start', limit: 10, windowSeconds: 10 },
      body: startBody,
      handler: (ctx) => flow.start(ctx.body),
    }),

    route({
      method: 'POST',
      path: '/auth/sso/complete',
      policy: 'none',
      rateLimit: { bucket: 'auth:sso:complete', limit: 15, windowSeconds: 10 },
      body: completeBody,
      async handler(ctx) {
        const { user, redirectTo } = await flow.complete(ctx.body, ctx);
        // Never an MFA challenge: the identity provider owns the second factor for SSO sign-ins.
        const session = await services.sessions.issue(user.id, ctx.ip, clientInfoOf(ctx.request.headers));
        return { ...(await tokenResponse(services, user, session.token)), redirect_to: redirectTo };
      },
    }),
  ];
}
