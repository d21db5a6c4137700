import type { AppServices } from '../../app-services.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { ClientInfo } from '../auth/session-store.ts';
import { type MfaLoginChallenge, mfaChallenge } from '../mfa/login-challenge.ts';
import { type TokenResponse, tokenResponse } from '../users/views.ts';

/**
 * Ends a flow that signs the account in (password reset): the login's MFA challenge when the account has
 * a second factor, otherwise a new session and TR. Same shape as `POST /auth/login`.
 */
export async function signIn(
  services: Pick<AppServices, 'mfa' | 'mfaView' | 'sessions'>,
  user: UserRecord,
  ip: string,
  client: ClientInfo = {},
): Promise<MfaLoginChallenge | TokenResponse> {
  const challenge = await mfaChallenge(services.mfa, user.id);
  if (challenge) return challenge;
  const session = await services.sessions.issue(user.id, ip, client);
  return tokenResponse(services, user, session.token);
}
