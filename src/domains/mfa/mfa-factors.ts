import type { UserRecord } from '../users/user-record.ts';

export interface MfaStatus {
  totp: boolean;
  webauthn: boolean;
}

/** What sudo mode and login need to know about an account's second factors. */
export interface MfaFactors {
  status(userId: string): Promise<MfaStatus>;
  /** A TOTP code or an unused backup code (consumed atomically on success). */
  verifyCode(user: UserRecord, code: string, now: number): Promise<boolean>;
  /** A WebAuthn assertion against a challenge issued for sudo or login. */
  verifyWebAuthn(user: UserRecord, response: unknown, challenge: string, now: number): Promise<boolean>;
}

export function hasMfa(status: MfaStatus): boolean {
  return status.totp || status.webauthn;
}

export function authenticatorTypes(status: MfaStatus): number[] {
  return [...(status.totp ? [0] : []), ...(status.webauthn ? [2] : [])];
}
