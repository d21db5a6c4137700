import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { enforceAllowance } from '../../http/allowance.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { CLEARED_BY_EMAIL_VERIFICATION } from '../../identity/flags.ts';
import { announceUserUpdate, type UserUpdateDeps } from '../users/user-updates.ts';
import { accountFor } from './account-guards.ts';

const tokenBody = z.object({ token: z.string().max(256) });

const invalidToken = () =>
  fieldError('token', 'INVALID_OR_EXPIRED_VERIFICATION_TOKEN', 'Invalid or expired verification token');

export const VERIFICATION_TTL_MS = 24 * 3600_000;

/**
 * A new verification link for the account's current address; earlier links stop working. The one sender
 * of verification links: registration and resend both come through here.
 */
export async function sendVerification(
  services: Pick<AppServices, 'emails' | 'tokens'>,
  user: { id: string; email: string },
): Promise<void> {
  await services.tokens.revokeAll('email_verification', user.id);
  const token = await services.tokens.issue('email_verification', user.id, VERIFICATION_TTL_MS, { email: user.email });
  await services.emails.sendLink('email_verification', user.email, token, { user_id: user.id });
}

/**
 * Marks the address verified and drops every suspicious-activity requirement a verified (or freshly
 * re-verified) email meets, so the gate lets the account through on its next request.
 */
export async function markEmailVerified(
  services: Pick<AppServices, 'credentials' | 'db'> & UserUpdateDeps,
  userId: string,
  email: string,
): Promise<boolean> {
  const rows = await services.db.query(
    `UPDATE users SET email_verified = true, suspicious_activity_flags = suspicious_activity_flags & ~($3::integer)
      WHERE id = $1 AND lower(email) = lower($2) RETURNING id`,
    [userId, email, CLEARED_BY_EMAIL_VERIFICATION],
  );
  await services.credentials.invalidate({ userId });
  if (rows.length > 0) await announceUserUpdate(services, userId);
  return rows.length > 0;
}

/** What `emailVerificationRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type EmailVerificationRoutesDeps = UserUpdateDeps &
  Pick<AppServices, 'credentials' | 'db' | 'emails' | 'rateLimiter' | 'tokens' | 'users'>;

/** `POST /auth/verify` and `POST /auth/verify/resend` (docs/accounts.md). */
export function emailVerificationRoutes(services: EmailVerificationRoutesDeps): AnyRoute[] {
  const { tokens, rateLimiter } = services;
  return [
    route({
      method: 'POST',
      path: '/auth/verify',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:verify', limit: 10, windowSeconds: 60 },
      body: tokenBody,
      async handler(ctx) {
        const live = await tokens.peek<{ email: string }>('email_verification', ctx.body.token);
        if (!live) throw invalidToken();
        const user = await accountFor(services, live.userId, invalidToken);
        // A link for an address the account no longer has proves nothing.
        if (!user.email || user.email.toLowerCase() !== live.data.email.toLowerCase()) throw invalidToken();
        if (!(await tokens.consume('email_verification', ctx.body.token))) throw invalidToken();
        await markEmailVerified(services, user.id, live.data.email);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/auth/verify/resend',
      policy: 'user-only',
      admitsSuspicious: true,
      localAuth: true,
      rateLimit: { bucket: 'auth:verify_resend', limit: 10, windowSeconds: 60 },
      async handler(ctx) {
        const user = ctx.user;
        if (!user.email) throw new ApiError('BAD_REQUEST', { message: 'The account has no email address' });
        await enforceAllowance(rateLimiter, ctx, `verify-resend:${user.id}`, 3, 15 * 60_000);
        await sendVerification(services, { id: user.id, email: user.email });
        return undefined;
      },
    }),
  ];
}
