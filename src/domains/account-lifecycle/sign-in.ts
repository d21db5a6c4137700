import type { AppServices } from '../../app-services.ts';
import { MFA_TICKET_TTL_MS } from '../auth/login-mfa.ts';
import { hasMfa } from '../mfa/mfa-factors.ts';
import type { UserRecord } from '../users/user-record.ts';
import { tokenResponse } from '../users/views.ts';

/**
 * Ends a flow that signs the account in (password reset): the login's MFA challenge when the account has
 * a second factor, otherwise a new session and TR. Same shape as `POST /auth/login`.
 */
export async function signIn(services: AppServices, user: UserRecord, ip: string): Promise<Record<string, unknown>> {
  const status = await services.mfa.status(user.id);
  if (hasMfa(status)) {
    const ticket = await services.tokens.issue('mfa_ticket', user.id, MFA_TICKET_TTL_MS, { failures: 0 });
    return {
      mfa: true,
      ticket,
      allowed_methods: [...(status.totp ? ['totp'] : []), ...(status.webauthn ? ['webauthn'] : [])],
      totp: status.totp,
      webauthn: status.webauthn,
      sms: false,
    };
  }
  const session = await services.sessions.issue(user.id, ip);
  return tokenResponse(services, user, session.token);
}
