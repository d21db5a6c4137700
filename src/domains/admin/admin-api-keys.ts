import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';

export interface AdminApiKeyRow {
  key_id: string;
  owner_id: string;
  secret_hash: string;
  name: string;
  acls: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface NewAdminApiKey {
  keyId: string;
  /** `fa_<key_id>_<32 alphanumerics>` (docs/conventions.md#credentials): returned once, stored only as its digest. */
  key: string;
  row: AdminApiKeyRow;
}

const DAY_MS = 86_400_000;

/** An Admin API key as the list and get routes show it (`adminApiKeyView`). */
export type AdminApiKeyView = {
  key_id: string;
  name: string;
  acls: string[];
  created_by_user_id: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
};

/** The list and get shape (docs/admin.md): never the secret or its digest. */
export function adminApiKeyView(row: AdminApiKeyRow): AdminApiKeyView {
  return {
    key_id: row.key_id,
    name: row.name,
    acls: row.acls,
    created_by_user_id: row.owner_id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
  };
}

/** Storage of Admin API keys; admin-key-credential.ts authenticates them through `findUnrevoked`. */
export class AdminApiKeys {
  constructor(private readonly ids: SnowflakeGenerator) {}

  async create(
    db: Queryable,
    input: { ownerId: string; name: string; acls: string[]; expiresInDays?: number | undefined; now: number },
  ): Promise<NewAdminApiKey> {
    const keyId = this.ids.next();
    const key = `fa_${keyId}_${randomBase62(32)}`;
    const expiresAt = input.expiresInDays === undefined ? null : new Date(input.now + input.expiresInDays * DAY_MS);
    const [row] = await db.query<AdminApiKeyRow>(
      `INSERT INTO admin_api_keys (key_id, owner_id, secret_hash, name, acls, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [keyId, input.ownerId, digest(key), input.name, input.acls, new Date(input.now), expiresAt],
    );
    return { keyId, key, row: row as AdminApiKeyRow };
  }

  /** Live keys of one owner, newest first: revoked and expired keys are gone from the owner's view. */
  async listLive(db: Queryable, ownerId: string, now: number): Promise<AdminApiKeyRow[]> {
    return db.query<AdminApiKeyRow>(
      `SELECT * FROM admin_api_keys
        WHERE owner_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
        ORDER BY key_id DESC`,
      [ownerId, new Date(now)],
    );
  }

  /** One live key of this owner; another owner's key is indistinguishable from a missing one. */
  async findLive(db: Queryable, ownerId: string, keyId: string, now: number): Promise<AdminApiKeyRow | undefined> {
    const [row] = await db.query<AdminApiKeyRow>(
      `SELECT * FROM admin_api_keys
        WHERE key_id = $1 AND owner_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
        FOR UPDATE`,
      [keyId, ownerId, new Date(now)],
    );
    return row;
  }

  /** A key not revoked, whoever owns it and whether or not it expired (expiry is checked at every use). */
  async findUnrevoked(
    db: Queryable,
    keyId: string,
  ): Promise<Pick<AdminApiKeyRow, 'owner_id' | 'secret_hash' | 'acls' | 'expires_at'> | undefined> {
    const [row] = await db.query<Pick<AdminApiKeyRow, 'owner_id' | 'secret_hash' | 'acls' | 'expires_at'>>(
      'SELECT owner_id, secret_hash, acls, expires_at FROM admin_api_keys WHERE key_id = $1 AND revoked_at IS NULL',
      [keyId],
    );
    return row;
  }

  async recordUse(db: Queryable, keyId: string, at: Date): Promise<void> {
    await db.query('UPDATE admin_api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, at]);
  }

  async update(db: Queryable, keyId: string, changes: { name?: string; acls?: string[] }): Promise<AdminApiKeyRow> {
    const [row] = await db.query<AdminApiKeyRow>(
      'UPDATE admin_api_keys SET name = COALESCE($2, name), acls = COALESCE($3, acls) WHERE key_id = $1 RETURNING *',
      [keyId, changes.name ?? null, changes.acls ?? null],
    );
    return row as AdminApiKeyRow;
  }

  async revoke(db: Queryable, keyId: string, now: number): Promise<void> {
    await db.query('UPDATE admin_api_keys SET revoked_at = $2 WHERE key_id = $1', [keyId, new Date(now)]);
  }

  /** The live key an owner already has under this name (the bootstrap CLI stays idempotent with it). */
  async findLiveByName(db: Queryable, ownerId: string, name: string, now: number): Promise<AdminApiKeyRow | undefined> {
    const [row] = await db.query<AdminApiKeyRow>(
      `SELECT * FROM admin_api_keys
        WHERE owner_id = $1 AND name = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
        ORDER BY key_id DESC LIMIT 1`,
      [ownerId, name, new Date(now)],
    );
    return row;
  }
}
