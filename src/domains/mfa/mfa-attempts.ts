import { allowanceExceeded } from '../../http/errors.ts';
import type { Database } from '../../platform/db/database.ts';

/** Failed MFA: 10 per account per 15 min, shared by login steps and sudo verification (docs/mfa-and-sudo.md#failure-allowance). */
export const MFA_FAILURE_LIMIT = 10;
export const MFA_FAILURE_WINDOW_MS = 15 * 60_000;

/**
 * The per-account MFA failure allowance. An attempt is charged before the code is checked and refunded on
 * success, so concurrent guesses cannot slip past the limit between a check and a write.
 */
export class MfaAttempts {
  constructor(private readonly db: Database) {}

  /** Forgets every account's attempts (`POST /test/rate-limits/reset` resets failure counters). */
  async reset(): Promise<void> {
    await this.db.query('DELETE FROM mfa_attempts');
  }

  /** Charges one attempt; throws 429 `RATE_LIMITED` when the allowance is used up. Returns the refund. */
  async reserve(userId: string, now: number): Promise<() => Promise<void>> {
    const windowStart = new Date(now - MFA_FAILURE_WINDOW_MS);
    await this.db.query('DELETE FROM mfa_attempts WHERE user_id = $1 AND attempted_at <= $2', [userId, windowStart]);
    const [mine] = await this.db.query<{ id: string }>(
      'INSERT INTO mfa_attempts (user_id, attempted_at) VALUES ($1, $2) RETURNING id',
      [userId, new Date(now)],
    );
    const id = mine?.id;
    const refund = async () => {
      await this.db.query('DELETE FROM mfa_attempts WHERE id = $1', [id]);
    };
    const [row] = await this.db.query<{ count: string; oldest: Date }>(
      'SELECT count(*) AS count, min(attempted_at) AS oldest FROM mfa_attempts WHERE user_id = $1 AND attempted_at > $2',
      [userId, windowStart],
    );
    if (Number(row?.count ?? 0) > MFA_FAILURE_LIMIT) {
      await refund();
      const oldest = row?.oldest ? new Date(row.oldest).getTime() : now;
      const retryAfterMs = Math.max(1, oldest + MFA_FAILURE_WINDOW_MS - now);
      // The newest counted failure leaves the window last: about a whole window from now.
      throw allowanceExceeded(MFA_FAILURE_LIMIT, retryAfterMs, MFA_FAILURE_WINDOW_MS, now);
    }
    return refund;
  }
}
