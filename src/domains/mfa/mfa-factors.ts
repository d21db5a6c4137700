import type { UserRecord } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';

export interface MfaStatus {
  totp: boolean;
  webauthn: boolean;
}

/**
 * `strict` is false only for test-mode requests without `X-Test-Strict: true`: the TOTP replay guard and the
 * per-account failure allowance are then off (docs/accounts.md#test-harness-test-mode-only). Production requests are always strict.
 */
export interface VerifyOptions {
  strict?: boolean;
}

/** What a WebAuthn challenge was issued for; an assertion only counts for the purpose it was asked for. */
export type AssertionPurpose = 'sudo' | 'mfa_login';

/** What sudo mode and login need to know about an account's second factors. */
export interface MfaFactors {
  status(userId: string): Promise<MfaStatus>;
  /**
   * A TOTP code or an unused backup code (consumed atomically on success). Throws 429 `RATE_LIMITED` once the
   * account has used up its failure allowance (10 per 15 min).
   */
  verifyCode(user: UserRecord, code: string, now: number, options?: VerifyOptions): Promise<boolean>;
  /** A WebAuthn assertion against a single-use challenge issued to this account for `purpose` (default sudo). */
  verifyWebAuthn(
    user: UserRecord,
    response: unknown,
    challenge: string,
    now: number,
    options?: VerifyOptions & { purpose?: AssertionPurpose },
  ): Promise<boolean>;
  /** Drops TOTP, backup codes and passkeys (email revert, admin MFA reset, unclaim). */
  removeAllFactors(userId: string, db?: Queryable): Promise<void>;
}

export function hasMfa(status: MfaStatus): boolean {
  return status.totp || status.webauthn;
}

export function authenticatorTypes(status: MfaStatus): number[] {
  return [...(status.totp ? [0] : []), ...(status.webauthn ? [2] : [])];
}
