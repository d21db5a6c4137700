import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { CLEARED_BY_EMAIL_VERIFICATION } from '../../identity/flags.ts';
import { hashPassword } from '../../platform/crypto/passwords.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { isCommonPassword, passwordField } from '../auth/account-rules.ts';
import { clientInfoOf } from '../auth/client-info.ts';
import type { TokenPurpose } from '../auth/one-time-tokens.ts';
import { tokenResponse } from '../users/views.ts';
import { accountFor } from './account-guards.ts';
import type { RevertData } from './email-change.ts';

const invalidToken = () => fieldError('token', 'INVALID_OR_EXPIRED_REVERT_TOKEN', 'Invalid or expired revert token');

/** Every pending token that someone who took over the account could still hold. */
const TAKEOVER_TOKENS: readonly TokenPurpose[] = [
  'email_verification',
  'password_reset',
  'email_change_ticket',
  'email_change_token',
  'mfa_ticket',
  'ip_authorization_ticket',
  'ip_authorization_token',
];

/** What `emailRevertRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type EmailRevertRoutesDeps = Pick<
  AppServices,
  'db' | 'ipAuthorization' | 'mfa' | 'mfaView' | 'sessions' | 'tokens' | 'users'
>;

/**
 * `POST /auth/email-revert` (docs/accounts.md): the holder of the old address takes the account back. The
 * old address returns (verified), the password is replaced, every second factor and session is dropped
 * and only the requester's address stays authorised.
 */
export function emailRevertRoutes(services: EmailRevertRoutesDeps): AnyRoute[] {
  const { tokens, db, sessions, mfa } = services;
  const { ipAuthorization } = services;
  return [
    route({
      method: 'POST',
      path: '/auth/email-revert',
      policy: 'none',
      localAuth: true,
      rateLimit: { bucket: 'auth:email_revert', limit: 10, windowSeconds: 60 },
      body: z.object({ token: z.string().max(256), password: passwordField }),
      async handler(ctx) {
        const { token, password } = ctx.body;
        const live = await tokens.peek<RevertData>('email_revert', token);
        if (!live) throw invalidToken();
        const user = await accountFor(services, live.userId, invalidToken);
        if (isCommonPassword(password))
          throw fieldError('password', 'PASSWORD_IS_TOO_COMMON', 'Password is too common');
        const passwordHash = await hashPassword(password);
        try {
          await db.transaction(async (tx) => {
            if (!(await tokens.consume('email_revert', token, tx))) throw invalidToken();
            await tx.query(
              `UPDATE users SET email = $2, email_verified = true, password_hash = $3, password_last_changed_at = $4,
                      suspicious_activity_flags = suspicious_activity_flags & ~($5::integer)
                WHERE id = $1`,
              [user.id, live.data.old_email, passwordHash, new Date(ctx.now), CLEARED_BY_EMAIL_VERIFICATION],
            );
            await tokens.revokeAll(TAKEOVER_TOKENS, user.id, tx);
            await ipAuthorization.replaceAll(user.id, ctx.ipKey, tx);
            await mfa.removeAllFactors(user.id, tx);
          });
        } catch (error) {
          if (isUniqueViolation(error))
            throw fieldError('token', 'EMAIL_ALREADY_IN_USE', 'Email is already registered');
          throw error;
        }
        await sessions.revokeAll(user.id);
        const restored = (await services.users.findById(user.id, { fresh: true })) ?? user;
        const session = await sessions.issue(user.id, ctx.ip, clientInfoOf(ctx.request.headers));
        return tokenResponse(services, restored, session.token);
      },
    }),
  ];
}
