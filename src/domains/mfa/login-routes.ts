import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, type RateLimitSpec, type RequestContext, route } from '../../http/route.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { assertNotBot, assertNotSuspended, isDeleted } from '../auth/account-rules.ts';
import { clientInfoOf } from '../auth/client-info.ts';
import { joinThroughInviteCode } from '../auth/invite-join.ts';
import { reactivate } from '../auth/reactivation.ts';
import { tokenResponse } from '../users/views.ts';

const LOGIN_MFA: RateLimitSpec = { bucket: 'auth:login_mfa', limit: 5, windowSeconds: 60 };
const WEBAUTHN: RateLimitSpec = { bucket: 'auth:webauthn', limit: 20, windowSeconds: 10 };

const ticketField = z.string().max(256);
const webauthnResponse = z.record(z.string(), z.unknown());

/** What `mfaLoginRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type MfaLoginRoutesDeps = Pick<
  AppServices,
  'chatCore' | 'credentials' | 'db' | 'mfa' | 'mfaView' | 'recordAuthFailure' | 'sessions' | 'users'
>;

/**
 * The second step of a password login, and passkey sign-in (docs/accounts.md). All `none·L`. The MFA ticket
 * is charged one attempt per try (5 at most) and used up only by a successful step.
 */
export function mfaLoginRoutes(services: MfaLoginRoutesDeps): AnyRoute[] {
  const { mfa, users, sessions } = services;

  const sessionTimeout = () => fieldError('ticket', 'SESSION_TIMEOUT', 'The login session has expired');

  /** The live, non-deleted, non-bot account a ticket names. */
  async function ticketAccount(ticket: string): Promise<UserRecord> {
    const userId = await mfa.tickets.peek(ticket);
    const user = userId ? await users.findById(userId, { fresh: true }) : undefined;
    if (!user || isDeleted(user)) throw sessionTimeout();
    assertNotBot(user);
    return user;
  }

  async function completeLogin(ctx: RequestContext, ticket: string, user: UserRecord) {
    const used = await mfa.tickets.consume(ticket);
    if (used?.userId !== user.id) throw sessionTimeout();
    assertNotSuspended(user, ctx.now);
    await joinThroughInviteCode(services, user, used.inviteCode, ctx.now);
    const session = await sessions.issue(user.id, ctx.ip, clientInfoOf(ctx.request.headers));
    return tokenResponse(services, user, session.token);
  }

  const failed = (ctx: RequestContext) => services.recordAuthFailure(ctx.ip, ctx.request.hearth.strict);

  return [
    route({
      method: 'POST',
      path: '/auth/login/mfa/totp',
      policy: 'none',
      localAuth: true,
      rateLimit: LOGIN_MFA,
      body: z.object({ code: z.string().max(64), ticket: ticketField }),
      async handler(ctx) {
        const { code, ticket } = ctx.body;
        const user = await ticketAccount(ticket);
        if (!(await mfa.totp.isEnabled(user.id)))
          throw fieldError('code', 'TOTP_NOT_ENABLED', 'Authenticator app is not enabled');
        if (!(await mfa.tickets.chargeAttempt(ticket))) throw sessionTimeout();
        if (!(await mfa.verifyCode(user, code, ctx.now, { strict: ctx.request.hearth.strict }))) {
          await failed(ctx);
          throw fieldError('code', 'INVALID_CODE', 'Invalid two-factor code');
        }
        return completeLogin(ctx, ticket, user);
      },
    }),

    route({
      method: 'POST',
      path: '/auth/login/mfa/webauthn/authentication-options',
      policy: 'none',
      localAuth: true,
      rateLimit: WEBAUTHN,
      body: z.object({ ticket: ticketField }),
      async handler(ctx) {
        const user = await ticketAccount(ctx.body.ticket);
        return mfa.webauthn.authenticationOptions(user.id, 'mfa_login');
      },
    }),

    route({
      method: 'POST',
      path: '/auth/login/mfa/webauthn',
      policy: 'none',
      localAuth: true,
      rateLimit: LOGIN_MFA,
      body: z.object({ response: webauthnResponse, challenge: z.string().max(512), ticket: ticketField }),
      async handler(ctx) {
        const { response, challenge, ticket } = ctx.body;
        const user = await ticketAccount(ticket);
        if (!(await mfa.tickets.chargeAttempt(ticket))) throw sessionTimeout();
        const ok = await mfa.verifyWebAuthn(user, response, challenge, ctx.now, {
          strict: ctx.request.hearth.strict,
          purpose: 'mfa_login',
        });
        if (!ok) {
          await failed(ctx);
          throw new ApiError('PASSKEY_AUTHENTICATION_FAILED');
        }
        return completeLogin(ctx, ticket, user);
      },
    }),

    route({
      method: 'POST',
      path: '/auth/webauthn/authentication-options',
      policy: 'none',
      localAuth: true,
      rateLimit: WEBAUTHN,
      handler: () => mfa.webauthn.authenticationOptions(null, 'passkey'),
    }),

    route({
      method: 'POST',
      path: '/auth/webauthn/authenticate',
      policy: 'none',
      localAuth: true,
      rateLimit: WEBAUTHN,
      body: z.object({ response: webauthnResponse, challenge: z.string().max(512) }),
      async handler(ctx) {
        const userId = await mfa.webauthn.verifyAssertion(
          null,
          ctx.body.response,
          ctx.body.challenge,
          'passkey',
          ctx.now,
        );
        const user = userId ? await users.findById(userId, { fresh: true }) : undefined;
        if (!user || isDeleted(user)) {
          await failed(ctx);
          throw new ApiError('PASSKEY_AUTHENTICATION_FAILED');
        }
        assertNotBot(user);
        assertNotSuspended(user, ctx.now);
        // A passkey sign-in is a login: it ends a self-disable and cancels a pending self-deletion.
        const active = await reactivate(services, user);
        const session = await sessions.issue(active.id, ctx.ip, clientInfoOf(ctx.request.headers));
        return tokenResponse(services, active, session.token);
      },
    }),
  ];
}
