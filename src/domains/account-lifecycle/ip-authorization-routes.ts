import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { IP_AUTHORIZATION_RESEND_AFTER_S } from '../auth/ip-authorization.ts';
import { tokenResponse } from '../users/views.ts';
import { accountFor } from './account-guards.ts';

const invalidToken = () =>
  fieldError('token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN', 'Invalid or expired authorization token');
const invalidTicket = () =>
  fieldError('ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET', 'Invalid or expired authorization ticket');

const ticketField = z.string().max(256);

/** What `ipAuthorizationRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type IpAuthorizationRoutesDeps = Pick<AppServices, 'clock' | 'ipAuthorization' | 'mfaView' | 'users'>;

/** `POST /auth/authorize-ip`, `POST /auth/ip-authorization/resend`, `GET /auth/ip-authorization/poll` (docs/accounts.md). */
export function ipAuthorizationRoutes(services: IpAuthorizationRoutesDeps): AnyRoute[] {
  const { clock } = services;
  const { ipAuthorization } = services;

  return [
    route({
      method: 'POST',
      path: '/auth/authorize-ip',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:authorize_ip', limit: 5, windowSeconds: 60 },
      body: z.object({ token: z.string().max(256) }),
      async handler(ctx) {
        const live = await ipAuthorization.findToken(ctx.body.token);
        if (!live) throw invalidToken();
        const user = await accountFor(services, live.userId, invalidToken);
        if (!(await ipAuthorization.complete(ctx.body.token, user.id))) throw invalidToken();
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/auth/ip-authorization/resend',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:ip_resend', limit: 5, windowSeconds: 60 },
      body: z.object({ ticket: ticketField }),
      async handler(ctx) {
        const { ticket } = ctx.body;
        const live = await ipAuthorization.findTicket(ticket);
        if (!live || live.data.completed) throw invalidTicket();
        const user = await accountFor(services, live.userId, invalidTicket);
        if (live.data.resend_used) throw new ApiError('IP_AUTHORIZATION_RESEND_LIMIT_EXCEEDED');
        const waitMs = live.createdAt.getTime() + IP_AUTHORIZATION_RESEND_AFTER_S * 1000 - clock.now();
        if (waitMs > 0) {
          const seconds = Math.ceil(waitMs / 1000);
          throw new ApiError('IP_AUTHORIZATION_RESEND_COOLDOWN', {
            extra: { resend_available_in: seconds },
            headers: { 'Retry-After': String(seconds) },
          });
        }
        await ipAuthorization.resend(ticket, user.id, live.data, live.expiresAt);
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/auth/ip-authorization/poll',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:ip_poll', limit: 60, windowSeconds: 60 },
      query: z.object({ ticket: ticketField }),
      async handler(ctx) {
        const { ticket } = ctx.query;
        const live = await ipAuthorization.findTicket(ticket);
        if (!live) throw invalidTicket();
        const user = await accountFor(services, live.userId, invalidTicket);
        if (!live.data.completed) return { completed: false };
        const token = ipAuthorization.openSession(ticket, live.data);
        if (!token) throw invalidTicket();
        return { completed: true, ...(await tokenResponse(services, user, token)) };
      },
    }),
  ];
}
