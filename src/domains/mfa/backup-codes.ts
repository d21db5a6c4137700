import { randomBytes } from 'node:crypto';
import { deriveKey, openWithKey, sealWithKey } from '../../platform/crypto/sealed-box.ts';
import { digest, hmacSha256 } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';

export const BACKUP_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of 36 below 256: bytes at or above it are rejected so every character is equally likely. */
const REJECT_FROM = 252;

export interface BackupCodeView {
  code: string;
  consumed: boolean;
}

/** `xxxx-xxxx` from the CSPRNG (docs/conventions.md#credentials). */
export function newBackupCode(): string {
  let out = '';
  while (out.length < 8) {
    for (const byte of randomBytes(16)) {
      if (byte >= REJECT_FROM) continue;
      out += ALPHABET[byte % 36];
      if (out.length === 8) break;
    }
  }
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

/** Comparison ignores case and anything that is not a letter or digit. */
export function normaliseBackupCode(code: string): string {
  return code.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function looksLikeBackupCode(code: string): boolean {
  return normaliseBackupCode(code).length === 8;
}

/** Digests from before keyed digests: salted with the account id only; still accepted until replaced. */
function legacyCodeHash(userId: string, code: string): string {
  return digest(`${userId}:${normaliseBackupCode(code)}`);
}

const KEYED_PREFIX = 'k1.';

/**
 * Backup codes of an account. Each is stored as an HMAC keyed by the server's MFA secret (a database dump
 * alone cannot be brute-forced: 41 bits per code would take minutes unkeyed) and sealed (AES-256-GCM, bound
 * to the account) so the owner can see the current set again under sudo mode.
 */
export class BackupCodes {
  private readonly digestKey: Buffer;
  private readonly sealKey: Buffer;

  constructor(secret: string) {
    this.digestKey = deriveKey(secret, 'hearth backup-code digests v1');
    this.sealKey = deriveKey(secret, 'hearth backup-code seal v1');
  }

  private codeHash(userId: string, code: string): string {
    return KEYED_PREFIX + hmacSha256(this.digestKey, `${userId}:${normaliseBackupCode(code)}`).toString('base64url');
  }

  /** Replaces the account's codes with a fresh set and returns it. */
  async regenerate(db: Queryable, userId: string, now: number): Promise<BackupCodeView[]> {
    const codes = new Set<string>();
    while (codes.size < BACKUP_CODE_COUNT) codes.add(newBackupCode());
    await this.removeAll(db, userId);
    const list = [...codes].sort();
    await db.query(
      `INSERT INTO mfa_backup_codes (user_id, code_hash, code_sealed, created_at)
       SELECT $1::bigint, h, s, $4::timestamptz FROM unnest($2::text[], $3::text[]) AS t(h, s)`,
      [
        userId,
        list.map((code) => this.codeHash(userId, code)),
        list.map((code) => sealWithKey(this.sealKey, code, `mfa_backup_code:${userId}`)),
        new Date(now),
      ],
    );
    return list.map((code) => ({ code, consumed: false }));
  }

  /**
   * The current set, sorted like a fresh one, or `undefined` when it cannot be shown (none, or a set from
   * before sealed copies, which the caller replaces).
   */
  async current(db: Queryable, userId: string): Promise<BackupCodeView[] | undefined> {
    const rows = await db.query<{ code_sealed: string | null; consumed: boolean }>(
      `SELECT code_sealed, consumed_at IS NOT NULL AS consumed FROM mfa_backup_codes
        WHERE user_id = $1`,
      [userId],
    );
    if (rows.length === 0) return undefined;
    const views: BackupCodeView[] = [];
    for (const row of rows) {
      const code = row.code_sealed
        ? openWithKey(this.sealKey, row.code_sealed, `mfa_backup_code:${userId}`)
        : undefined;
      if (code === undefined) return undefined;
      views.push({ code, consumed: row.consumed });
    }
    return views.sort((a, b) => (a.code < b.code ? -1 : 1));
  }

  /** One conditional UPDATE: of two concurrent uses of one code, exactly one sees a row come back. */
  async consume(db: Queryable, userId: string, code: string, now: number): Promise<boolean> {
    if (!looksLikeBackupCode(code)) return false;
    const rows = await db.query(
      `UPDATE mfa_backup_codes SET consumed_at = $3
        WHERE user_id = $1 AND code_hash = ANY($2::text[]) AND consumed_at IS NULL RETURNING 1`,
      [userId, [this.codeHash(userId, code), legacyCodeHash(userId, code)], new Date(now)],
    );
    return rows.length === 1;
  }

  async removeAll(db: Queryable, userId: string): Promise<void> {
    await db.query('DELETE FROM mfa_backup_codes WHERE user_id = $1', [userId]);
  }
}
