import { deriveKey, openWithKey, sealWithKey } from '../../platform/crypto/sealed-box.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { decodeBase32, matchTotp } from './totp.ts';

/** HKDF `info` of the key that seals TOTP secrets: no other data is ever sealed under it. */
const TOTP_KEY_INFO = 'hearth mfa_totp.secret v1';
/**
 * Marks a sealed value (and the key generation): base32 never contains a dot, so a stored value is either
 * sealed (`v1.` + iv.tag.ciphertext) or a plain secret from before encryption, which start-up seals.
 */
const SEALED_PREFIX = 'v1.';

/** A secret shorter than 80 bits is guessable offline; longer than 512 bits is not a real authenticator. */
const MIN_SECRET_BYTES = 10;
const MAX_SECRET_BYTES = 64;

export function parseTotpSecret(secret: string): Buffer | undefined {
  const key = decodeBase32(secret);
  if (!key || key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) return undefined;
  return key;
}

/**
 * The TOTP factor of accounts: one secret per account and the step of the last accepted code. Codes are
 * computed from the secret, so it cannot be a digest; it is stored AES-256-GCM sealed under a key derived
 * from the server's MFA secret and bound to the account id, so a database copy alone computes no codes and
 * a sealed secret copied onto another account does not open.
 */
export class TotpFactor {
  private readonly key: Buffer;

  constructor(
    private readonly db: Queryable,
    serverSecret: string,
  ) {
    this.key = deriveKey(serverSecret, TOTP_KEY_INFO);
  }

  private seal(userId: string, secret: string): string {
    return SEALED_PREFIX + sealWithKey(this.key, secret, `mfa_totp:${userId}`);
  }

  /** The secret, or undefined for anything that does not open (tampered, other key, other account, plain). */
  private open(userId: string, stored: string): string | undefined {
    if (!stored.startsWith(SEALED_PREFIX)) return undefined;
    return openWithKey(this.key, stored.slice(SEALED_PREFIX.length), `mfa_totp:${userId}`);
  }

  /**
   * Seals secrets stored in plain text before encryption existed (development databases); run at start.
   * The conditional UPDATE leaves a row alone that another process sealed or replaced meanwhile.
   */
  async sealPlainSecrets(): Promise<number> {
    const rows = await this.db.query<{ user_id: string; secret: string }>(
      "SELECT user_id, secret FROM mfa_totp WHERE secret NOT LIKE 'v1.%'",
    );
    let sealed = 0;
    for (const row of rows) {
      const updated = await this.db.query(
        'UPDATE mfa_totp SET secret = $3 WHERE user_id = $1 AND secret = $2 RETURNING 1',
        [row.user_id, row.secret, this.seal(row.user_id, row.secret)],
      );
      sealed += updated.length;
    }
    return sealed;
  }

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
      [userId, this.seal(userId, secret), step, new Date(now)],
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
    // Fails closed: a secret that does not open is a factor that cannot be satisfied, not an error.
    const secret = this.open(userId, row.secret);
    const key = secret === undefined ? undefined : decodeBase32(secret);
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
