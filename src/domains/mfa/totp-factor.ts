import type { Queryable } from '../../platform/db/database.ts';
import { decodeBase32, matchTotp } from './totp.ts';

/** A secret shorter than 80 bits is guessable offline; longer than 512 bits is not a real authenticator. */
const MIN_SECRET_BYTES = 10;
const MAX_SECRET_BYTES = 64;

export function parseTotpSecret(secret: string): Buffer | undefined {
  const key = decodeBase32(secret);
  if (!key || key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) return undefined;
  return key;
}

/** The TOTP factor of accounts: one secret per account and the step of the last accepted code. */
export class TotpFactor {
  constructor(private readonly db: Queryable) {}

  async isEnabled(userId: string, db: Queryable = this.db): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM mfa_totp WHERE user_id = $1', [userId]);
    return rows.length > 0;
  }

  /**
   * Stores the secret once `code` proves the client holds it; the proving code's step counts as used.
   * Returns false when the account already has TOTP (the caller answers) or the code does not match.
   */
  async enable(
    db: Queryable,
    userId: string,
    key: Buffer,
    secret: string,
    code: string,
    now: number,
  ): Promise<boolean> {
    const step = matchTotp(key, code, now);
    if (step === undefined) return false;
    const rows = await db.query(
      `INSERT INTO mfa_totp (user_id, secret, last_step, enabled_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO NOTHING RETURNING 1`,
      [userId, secret, step, new Date(now)],
    );
    return rows.length === 1;
  }

  /**
   * Checks a code and records its step in one conditional UPDATE, so a code (or an older one) is refused
   * again for as long as it stays valid (90 s), even when two requests race with it. `replayGuard` is off
   * only for relaxed test-mode requests.
   */
  async verify(userId: string, code: string, now: number, replayGuard: boolean): Promise<boolean> {
    const [row] = await this.db.query<{ secret: string }>('SELECT secret FROM mfa_totp WHERE user_id = $1', [userId]);
    if (!row) return false;
    const key = decodeBase32(row.secret);
    if (!key) return false;
    const step = matchTotp(key, code, now);
    if (step === undefined) return false;
    const guard = replayGuard ? 'AND (last_step IS NULL OR last_step < $2)' : '';
    const updated = await this.db.query(
      `UPDATE mfa_totp SET last_step = GREATEST(COALESCE(last_step, $2), $2) WHERE user_id = $1 ${guard} RETURNING 1`,
      [userId, step],
    );
    return updated.length === 1;
  }

  async disable(db: Queryable, userId: string): Promise<boolean> {
    const rows = await db.query('DELETE FROM mfa_totp WHERE user_id = $1 RETURNING 1', [userId]);
    return rows.length === 1;
  }
}
