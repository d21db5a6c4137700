import type { Clock } from '../../platform/clock.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';

export type TokenPurpose =
  | 'email_verification'
  | 'password_reset'
  | 'email_revert'
  | 'ip_authorization_ticket'
  | 'ip_authorization_token'
  | 'mfa_ticket'
  | 'email_change_ticket'
  | 'email_change_proof'
  | 'email_change_token'
  | 'webauthn_challenge'
  | 'sso_state'
  | 'handoff';

export interface OneTimeToken<D = Record<string, unknown>> {
  userId: string | null;
  data: D;
  expiresAt: Date;
  createdAt: Date;
}

/**
 * Single-use tokens (emailed links, tickets, challenges): 64 base62 characters, stored only as SHA-256,
 * consumed with one conditional UPDATE so two concurrent uses cannot both succeed.
 */
export class OneTimeTokens {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async issue(
    purpose: TokenPurpose,
    userId: string | null,
    ttlMs: number,
    data: Record<string, unknown> = {},
    options: { token?: string; db?: Queryable; createdAt?: number } = {},
  ): Promise<string> {
    const token = options.token ?? randomBase62(64);
    const created = options.createdAt ?? this.clock.now();
    await (options.db ?? this.db).query(
      `INSERT INTO one_time_tokens (token_hash, purpose, user_id, data, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (token_hash) DO UPDATE SET purpose = EXCLUDED.purpose, user_id = EXCLUDED.user_id, data = EXCLUDED.data,
         expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at, consumed_at = NULL`,
      [digest(token), purpose, userId, JSON.stringify(data), new Date(created + ttlMs), new Date(created)],
    );
    return token;
  }

  /** Reads a live token without consuming it. */
  async peek<D = Record<string, unknown>>(purpose: TokenPurpose, token: string): Promise<OneTimeToken<D> | undefined> {
    const [row] = await this.db.query<{ user_id: string | null; data: D; expires_at: Date; created_at: Date }>(
      `SELECT user_id, data, expires_at, created_at FROM one_time_tokens
        WHERE token_hash = $1 AND purpose = $2 AND consumed_at IS NULL AND expires_at > $3`,
      [digest(token), purpose, new Date(this.clock.now())],
    );
    return row
      ? { userId: row.user_id, data: row.data, expiresAt: row.expires_at, createdAt: row.created_at }
      : undefined;
  }

  /** Consumes a live token exactly once; a second or concurrent use gets `undefined`. */
  async consume<D = Record<string, unknown>>(
    purpose: TokenPurpose,
    token: string,
    db: Queryable = this.db,
  ): Promise<OneTimeToken<D> | undefined> {
    const [row] = await db.query<{ user_id: string | null; data: D; expires_at: Date; created_at: Date }>(
      `UPDATE one_time_tokens SET consumed_at = $3
        WHERE token_hash = $1 AND purpose = $2 AND consumed_at IS NULL AND expires_at > $3
        RETURNING user_id, data, expires_at, created_at`,
      [digest(token), purpose, new Date(this.clock.now())],
    );
    return row
      ? { userId: row.user_id, data: row.data, expiresAt: row.expires_at, createdAt: row.created_at }
      : undefined;
  }

  /**
   * Marks a live, unused token as claimed (`data.claimed`) in one conditional UPDATE, so that of two
   * concurrent claims exactly one gets the token back; the other, and any later one, gets `undefined`.
   */
  async claim<D = Record<string, unknown>>(purpose: TokenPurpose, token: string): Promise<OneTimeToken<D> | undefined> {
    const now = new Date(this.clock.now());
    const [row] = await this.db.query<{ user_id: string | null; data: D; expires_at: Date; created_at: Date }>(
      `UPDATE one_time_tokens SET data = jsonb_set(data, '{claimed}', 'true'::jsonb)
        WHERE token_hash = $1 AND purpose = $2 AND consumed_at IS NULL AND expires_at > $3 AND NOT (data ? 'claimed')
        RETURNING user_id, data, expires_at, created_at`,
      [digest(token), purpose, now],
    );
    return row
      ? { userId: row.user_id, data: row.data, expiresAt: row.expires_at, createdAt: row.created_at }
      : undefined;
  }

  /** Replaces a token's data; with `expiresBy`, the token also ends by then if it was to live longer. */
  async update(
    purpose: TokenPurpose,
    token: string,
    data: Record<string, unknown>,
    options: { expiresBy?: number } = {},
  ): Promise<void> {
    if (options.expiresBy === undefined) {
      await this.db.query('UPDATE one_time_tokens SET data = $3 WHERE token_hash = $1 AND purpose = $2', [
        digest(token),
        purpose,
        JSON.stringify(data),
      ]);
      return;
    }
    await this.db.query(
      `UPDATE one_time_tokens SET data = $3, expires_at = LEAST(expires_at, $4)
        WHERE token_hash = $1 AND purpose = $2`,
      [digest(token), purpose, JSON.stringify(data), new Date(options.expiresBy)],
    );
  }

  /**
   * Charges one failure to a live token's `data.failures` in one conditional UPDATE, so parallel attempts
   * cannot go past `max`. Returns the new count, or `undefined` when the token is unknown, expired, used or
   * already at `max`. With `expireAtMax`, the charge that reaches `max` also ends the token.
   */
  async chargeFailure(
    purpose: TokenPurpose,
    token: string,
    max: number,
    options: { expireAtMax?: boolean } = {},
  ): Promise<number | undefined> {
    const now = this.clock.now();
    const [row] = await this.db.query<{ failures: number }>(
      `UPDATE one_time_tokens
          SET data = jsonb_set(data, '{failures}', to_jsonb(COALESCE((data->>'failures')::int, 0) + 1)),
              expires_at = CASE WHEN $4::boolean AND COALESCE((data->>'failures')::int, 0) + 1 >= $3
                                THEN $6 ELSE expires_at END
        WHERE token_hash = $1 AND purpose = $2 AND consumed_at IS NULL AND expires_at > $5
          AND COALESCE((data->>'failures')::int, 0) < $3
        RETURNING (data->>'failures')::int AS failures`,
      [digest(token), purpose, max, options.expireAtMax ?? false, new Date(now), new Date(now - 1)],
    );
    return row?.failures;
  }

  async expire(purpose: TokenPurpose, token: string): Promise<void> {
    await this.db.query('UPDATE one_time_tokens SET expires_at = $3 WHERE token_hash = $1 AND purpose = $2', [
      digest(token),
      purpose,
      new Date(this.clock.now() - 1),
    ]);
  }

  /** Ends now every token of a purpose whose `data[key]` is `value`, used or not. */
  async expireByData(purpose: TokenPurpose, key: string, value: string): Promise<void> {
    await this.db.query('UPDATE one_time_tokens SET expires_at = $4 WHERE purpose = $1 AND data->>$2::text = $3', [
      purpose,
      key,
      value,
      new Date(this.clock.now() - 1),
    ]);
  }

  /** Invalidates a user's live tokens of a purpose whose `data[key]` is `value`. */
  async revokeByData(purpose: TokenPurpose, userId: string, key: string, value: string): Promise<void> {
    await this.db.query(
      `UPDATE one_time_tokens SET consumed_at = $5
        WHERE purpose = $1 AND user_id = $2 AND data->>$3::text = $4 AND consumed_at IS NULL`,
      [purpose, userId, key, value, new Date(this.clock.now())],
    );
  }

  /**
   * Invalidates every live token of the given purpose(s) for a user (a new reset link kills the old ones),
   * in one UPDATE however many purposes are named.
   */
  async revokeAll(
    purposes: TokenPurpose | readonly TokenPurpose[],
    userId: string,
    db: Queryable = this.db,
  ): Promise<void> {
    await db.query(
      'UPDATE one_time_tokens SET consumed_at = $3 WHERE user_id = $1 AND purpose = ANY($2::text[]) AND consumed_at IS NULL',
      [userId, typeof purposes === 'string' ? [purposes] : [...purposes], new Date(this.clock.now())],
    );
  }
}
