import { hasMfa } from './mfa-factors.ts';
import type { MfaStore } from './mfa-store.ts';

export type MfaLoginChallenge = {
  mfa: true;
  ticket: string;
  allowed_methods: string[];
  totp: boolean;
  webauthn: boolean;
  sms: false;
};

/**
 * The reply of a login that needs a second factor (docs/conventions.md#credentials): a new ticket and the methods the account
 * has. `undefined` when the account has no second factor and the login goes on to a session. The login's
 * `invite_code` is kept with the ticket, for the step that completes the login.
 */
export async function mfaChallenge(
  mfa: Pick<MfaStore, 'status' | 'tickets'>,
  userId: string,
  inviteCode?: string | null,
): Promise<MfaLoginChallenge | undefined> {
  const status = await mfa.status(userId);
  if (!hasMfa(status)) return undefined;
  const ticket = await mfa.tickets.issue(userId, inviteCode ? { inviteCode } : {});
  return {
    mfa: true,
    ticket,
    allowed_methods: [...(status.totp ? ['totp'] : []), ...(status.webauthn ? ['webauthn'] : [])],
    totp: status.totp,
    webauthn: status.webauthn,
    sms: false,
  };
}
