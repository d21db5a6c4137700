import { randomBytes } from 'node:crypto';
import { digest } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';

export const BACKUP_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of 36 below 256: bytes at or above it are rejected so every character is equally likely. */
const REJECT_FROM = 252;

export interface BackupCodeView {
  code: string;
  consumed: boolean;
}

/** `xxxx-xxxx` from the CSPRNG (api.md §1.4). */
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

/** Salted with the account id so one precomputed table cannot serve every account. */
function codeHash(userId: string, code: string): string {
  return digest(`${userId}:${normaliseBackupCode(code)}`);
}

/** Backup codes of an account, stored only as digests. */
export class BackupCodes {
  /** Replaces the account's codes with a fresh set and returns it (the only time the codes are readable). */
  async regenerate(db: Queryable, userId: string, now: number): Promise<BackupCodeView[]> {
    const codes = new Set<string>();
    while (codes.size < BACKUP_CODE_COUNT) codes.add(newBackupCode());
    await this.removeAll(db, userId);
    await db.query(
      'INSERT INTO mfa_backup_codes (user_id, code_hash, created_at) SELECT $1::bigint, h, $3::timestamptz FROM unnest($2::text[]) AS h',
      [userId, [...codes].map((code) => codeHash(userId, code)), new Date(now)],
    );
    return [...codes].map((code) => ({ code, consumed: false }));
  }

  /** One conditional UPDATE: of two concurrent uses of one code, exactly one sees a row come back. */
  async consume(db: Queryable, userId: string, code: string, now: number): Promise<boolean> {
    if (!looksLikeBackupCode(code)) return false;
    const rows = await db.query(
      `UPDATE mfa_backup_codes SET consumed_at = $3
        WHERE user_id = $1 AND code_hash = $2 AND consumed_at IS NULL RETURNING 1`,
      [userId, codeHash(userId, code), new Date(now)],
    );
    return rows.length === 1;
  }

  async removeAll(db: Queryable, userId: string): Promise<void> {
    await db.query('DELETE FROM mfa_backup_codes WHERE user_id = $1', [userId]);
  }
}
