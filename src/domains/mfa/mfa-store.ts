import type { Config } from '../../config/config.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import { OneTimeTokens } from '../auth/one-time-tokens.ts';
import { BackupCodes, looksLikeBackupCode } from './backup-codes.ts';
import { MfaAttempts } from './mfa-attempts.ts';
import type { AssertionPurpose, MfaFactors, MfaStatus, VerifyOptions } from './mfa-factors.ts';
import { MfaTickets } from './mfa-tickets.ts';
import { TotpFactor } from './totp-factor.ts';
import { WebAuthnCredentials } from './webauthn.ts';

export interface MfaStoreDeps {
  clock: Clock;
  ids: SnowflakeGenerator;
  config: Pick<Config, 'webauthnRpId' | 'webauthnOrigins'>;
  /** The server's MFA secret (`Secrets.mfa`): TOTP secrets are sealed under a key derived from it. */
  secret: string;
}

/** Second factors of accounts: TOTP, backup codes and WebAuthn, plus the failure allowance they share. */
export class MfaStore implements MfaFactors {
  readonly totp: TotpFactor;
  readonly backupCodes: BackupCodes;
  readonly webauthn: WebAuthnCredentials;
  readonly attempts: MfaAttempts;
  readonly tickets: MfaTickets;

  constructor(
    readonly db: Database,
    deps: MfaStoreDeps,
  ) {
    const tokens = new OneTimeTokens(db, deps.clock);
    this.totp = new TotpFactor(db, deps.secret);
    this.backupCodes = new BackupCodes(deps.secret);
    this.webauthn = new WebAuthnCredentials(db, tokens, deps.ids, deps.config);
    this.attempts = new MfaAttempts(db);
    this.tickets = new MfaTickets(tokens);
  }

  async status(userId: string): Promise<MfaStatus> {
    const [row] = await this.db.query<{ totp: boolean; webauthn: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM mfa_totp WHERE user_id = $1) AS totp,
              EXISTS (SELECT 1 FROM webauthn_credentials WHERE user_id = $1) AS webauthn`,
      [userId],
    );
    return { totp: row?.totp === true, webauthn: row?.webauthn === true };
  }

  async verifyCode(user: UserRecord, code: string, now: number, options: VerifyOptions = {}): Promise<boolean> {
    const strict = options.strict ?? true;
    return this.charged(user.id, now, strict, async () => {
      const trimmed = code.trim();
      if (/^\d{6}$/.test(trimmed)) return this.totp.verify(user.id, trimmed, now, strict);
      if (!looksLikeBackupCode(trimmed) || !(await this.totp.isEnabled(user.id))) return false;
      return this.backupCodes.consume(this.db, user.id, trimmed, now);
    });
  }

  async verifyWebAuthn(
    user: UserRecord,
    response: unknown,
    challenge: string,
    now: number,
    options: VerifyOptions & { purpose?: AssertionPurpose } = {},
  ): Promise<boolean> {
    return this.charged(user.id, now, options.strict ?? true, async () => {
      const proven = await this.webauthn.verifyAssertion(user.id, response, challenge, options.purpose ?? 'sudo', now);
      return proven === user.id;
    });
  }

  async removeAllFactors(userId: string, db: Queryable = this.db): Promise<void> {
    await this.totp.disable(db, userId);
    await this.backupCodes.removeAll(db, userId);
    await this.webauthn.removeAll(db, userId);
  }

  /** Runs a check under the account's failure allowance (relaxed test-mode requests skip the allowance). */
  private async charged(userId: string, now: number, strict: boolean, check: () => Promise<boolean>): Promise<boolean> {
    if (!strict) return check();
    const refund = await this.attempts.reserve(userId, now);
    const ok = await check();
    if (ok) await refund();
    return ok;
  }
}
