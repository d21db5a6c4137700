import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { enforceAllowance } from '../../http/allowance.ts';
import { fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { hashPassword } from '../../platform/crypto/passwords.ts';
import {
  assertNotBot,
  assertNotSuspended,
  emailField,
  isCommonPassword,
  isDeleted,
  passwordField,
} from '../auth/account-rules.ts';
import { clientInfoOf } from '../auth/client-info.ts';
import { reactivate } from '../auth/reactivation.ts';
import { accountFor } from './account-guards.ts';
import { signIn } from './sign-in.ts';

export const PASSWORD_RESET_TTL_MS = 3600_000;

const invalidToken = () => fieldError('token', 'INVALID_OR_EXPIRED_RESET_TOKEN', 'Invalid or expired reset token');

/** What `passwordRecoveryRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type PasswordRecoveryRoutesDeps = Pick<
  AppServices,
  | 'credentials'
  | 'db'
  | 'emails'
  | 'ipAuthorization'
  | 'mfa'
  | 'mfaView'
  | 'rateLimiter'
  | 'sessions'
  | 'tokens'
  | 'users'
>;

/** `POST /auth/forgot`, `GET /auth/reset/{token}`, `POST /auth/reset` (docs/accounts.md). */
export function passwordRecoveryRoutes(services: PasswordRecoveryRoutesDeps): AnyRoute[] {
  const { tokens, rateLimiter, db, sessions, emails, credentials } = services;
  const { ipAuthorization } = services;

  return [
    route({
      method: 'POST',
      path: '/auth/forgot',
      policy: 'none',
      localAuth: true,
      captcha: true,
      rateLimit: { bucket: 'auth:forgot', limit: 5, windowSeconds: 60 },
      body: z.object({ email: emailField }),
      async handler(ctx) {
        const email = ctx.body.email;
        await enforceAllowance(rateLimiter, ctx, `forgot:ip:${ctx.ipKey}`, 20, 30 * 60_000);
        await enforceAllowance(rateLimiter, ctx, `forgot:email:${email.toLowerCase()}`, 5, 30 * 60_000);
        const found = await services.users.findByEmail(email);
        // Unknown and deleted addresses get the same 204; only a bot account is refused (docs/accounts.md#common-rules).
        if (!found || isDeleted(found) || !found.email) return undefined;
        assertNotBot(found);
        await tokens.revokeAll('password_reset', found.id);
        const token = await tokens.issue('password_reset', found.id, PASSWORD_RESET_TTL_MS, { email: found.email });
        // Not awaited: a slow mail server must not tell an existing address from an unknown one.
        void emails.sendLink('password_reset', found.email, token, { user_id: found.id });
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/auth/reset/:token',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:reset', limit: 10, windowSeconds: 60 },
      async handler(ctx) {
        const token = ctx.params.token ?? '';
        const live = token.length <= 256 ? await tokens.peek('password_reset', token) : undefined;
        if (!live) return { valid: false };
        const user = live.userId ? await services.users.findById(live.userId, { fresh: true }) : undefined;
        if (!user || isDeleted(user)) return { valid: false };
        assertNotBot(user);
        return { valid: true };
      },
    }),

    route({
      method: 'POST',
      path: '/auth/reset',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:reset', limit: 10, windowSeconds: 60 },
      body: z.object({ token: z.string().max(256), password: passwordField }),
      async handler(ctx) {
        const { token, password } = ctx.body;
        const live = await tokens.peek('password_reset', token);
        if (!live) throw invalidToken();
        const user = await accountFor(services, live.userId, invalidToken);
        if (isCommonPassword(password))
          throw fieldError('password', 'PASSWORD_IS_TOO_COMMON', 'Password is too common');
        assertNotSuspended(user, ctx.now);
        const passwordHash = await hashPassword(password);
        if (!(await tokens.consume('password_reset', token))) throw invalidToken();
        // Whoever knew the old password is out before the new one exists.
        await sessions.revokeAll(user.id);
        await db.transaction(async (tx) => {
          await tx.query('UPDATE users SET password_hash = $2, password_last_changed_at = $3 WHERE id = $1', [
            user.id,
            passwordHash,
            new Date(ctx.now),
          ]);
          await tokens.revokeAll(['password_reset', 'mfa_ticket'], user.id, tx);
          await ipAuthorization.authorize(user.id, ctx.ipKey, tx);
        });
        await credentials.invalidate({ userId: user.id });
        const updated = (await services.users.findById(user.id, { fresh: true })) ?? user;
        const active = await reactivate(services, updated);
        return signIn(services, active, ctx.ip, clientInfoOf(ctx.request.headers));
      },
    }),
  ];
}
