import type { Database } from '../../platform/db/database.ts';
import type { UserRecord } from '../users/user-record.ts';
import type { MfaFactors, MfaStatus } from './mfa-factors.ts';

/** Second factors of accounts; TOTP, backup codes and WebAuthn arrive with the MFA module. */
export class MfaStore implements MfaFactors {
  constructor(readonly db: Database) {}

  async status(_userId: string): Promise<MfaStatus> {
    return { totp: false, webauthn: false };
  }

  async verifyCode(_user: UserRecord, _code: string, _now: number): Promise<boolean> {
    return false;
  }

  async verifyWebAuthn(_user: UserRecord, _response: unknown, _challenge: string, _now: number): Promise<boolean> {
    return false;
  }
}
