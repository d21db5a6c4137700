import { WILDCARD_ACL } from '../../http/auth/acl-names.ts';
import { defaultAvatarColor } from '../../identity/user-record.ts';
import { hashPassword } from '../../platform/crypto/passwords.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import { AdminApiKeys } from './admin-api-keys.ts';

export interface FirstAdminInput {
  email: string;
  password?: string | undefined;
  username?: string | undefined;
  keyName?: string | undefined;
}

export interface FirstAdminResult {
  userId: string;
  created: boolean;
  /** True when the account did not hold the wildcard before. */
  promoted: boolean;
  /** Set when a new account was created without a password: shown once. */
  generatedPassword?: string;
  /** A freshly minted key (shown once), or the id of the live key that already had this name. */
  key?: { keyId: string; key?: string; existed: boolean };
}

/** `[A-Za-z0-9_]{1,32}` from an email's local part, as registration would accept it. */
function usernameFromEmail(email: string): string {
  const local = (email.split('@')[0] ?? '').replace(/[^A-Za-z0-9_]/g, '_').slice(0, 32);
  return local.length > 0 ? local : 'admin';
}

/**
 * Creates the first administrator, or promotes an existing account, to the wildcard ACL (docs/admin.md
 * bootstrap). Idempotent: the account is found by email, and a live key with the same name is not minted again.
 */
export async function createOrPromoteFirstAdmin(
  deps: { db: Database; ids: SnowflakeGenerator; now: number },
  input: FirstAdminInput,
): Promise<FirstAdminResult> {
  const { db, ids, now } = deps;
  const generatedPassword = input.password === undefined ? randomBase62(20) : undefined;
  // Hashing is slow and happens off the transaction; it is only used when the account is new.
  const passwordHash = await hashPassword(input.password ?? (generatedPassword as string));
  const keys = new AdminApiKeys(ids);

  return db.transaction(async (tx) => {
    const [existing] = await tx.query<{ id: string; acls: string[] }>(
      'SELECT id, acls FROM users WHERE lower(email) = lower($1) FOR UPDATE',
      [input.email],
    );
    let userId: string;
    let created = false;
    let promoted = false;
    if (existing) {
      userId = existing.id;
      if (!existing.acls.includes(WILDCARD_ACL)) {
        promoted = true;
        await tx.query('UPDATE users SET acls = array_append(acls, $2) WHERE id = $1', [userId, WILDCARD_ACL]);
      }
    } else {
      userId = ids.next();
      created = true;
      promoted = true;
      await tx.query(
        `INSERT INTO users (id, username, email, email_verified, password_hash, password_last_changed_at, acls,
                            avatar_color, created_at)
         VALUES ($1, $2, $3, true, $4, $5, $6, $7, $5)`,
        [
          userId,
          input.username ?? usernameFromEmail(input.email),
          input.email,
          passwordHash,
          new Date(now),
          [WILDCARD_ACL],
          defaultAvatarColor(userId),
        ],
      );
    }

    const result: FirstAdminResult = { userId, created, promoted };
    if (created && generatedPassword) result.generatedPassword = generatedPassword;
    if (input.keyName !== undefined) {
      const live = await keys.findLiveByName(tx, userId, input.keyName, now);
      if (live) {
        result.key = { keyId: live.key_id, existed: true };
      } else {
        const minted = await keys.create(tx, { ownerId: userId, name: input.keyName, acls: [WILDCARD_ACL], now });
        result.key = { keyId: minted.keyId, key: minted.key, existed: false };
      }
    }
    return result;
  });
}
