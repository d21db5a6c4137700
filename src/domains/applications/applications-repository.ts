import type { Database, Queryable } from '../../platform/db/database.ts';

/** An application row as the rest of the code sees it; secrets exist here only as digests. */
export interface ApplicationRecord {
  id: string;
  ownerId: string | null;
  name: string;
  icon: string | null;
  description: string | null;
  redirectUris: string[];
  botPublic: boolean;
  botRequireCodeGrant: boolean;
  clientSecretHash: string;
  /** A public OAuth2 client: no secret at the token endpoint, PKCE S256 required. */
  publicClient: boolean;
  botUserId: string | null;
  isAdminBuiltin: boolean;
  flags: number;
  createdAt: Date;
  /** Hex of the Ed25519 public key; null for applications from before keys existed (made when needed). */
  verifyKey: string | null;
  /** Where interactions go, signed, instead of the gateway (docs/bots.md). */
  interactionsEndpointUrl: string | null;
}

interface ApplicationRow {
  id: string;
  owner_id: string | null;
  name: string;
  icon: string | null;
  description: string | null;
  redirect_uris: string[];
  bot_public: boolean;
  bot_require_code_grant: boolean;
  client_secret_hash: string;
  public_client: boolean;
  bot_user_id: string | null;
  is_admin_builtin: boolean;
  flags: number;
  created_at: Date;
  verify_key: string | null;
  interactions_endpoint_url: string | null;
}

function toRecord(row: ApplicationRow): ApplicationRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    icon: row.icon,
    description: row.description,
    redirectUris: row.redirect_uris,
    botPublic: row.bot_public,
    botRequireCodeGrant: row.bot_require_code_grant,
    clientSecretHash: row.client_secret_hash,
    publicClient: row.public_client,
    botUserId: row.bot_user_id,
    isAdminBuiltin: row.is_admin_builtin,
    flags: row.flags,
    createdAt: row.created_at,
    verifyKey: row.verify_key,
    interactionsEndpointUrl: row.interactions_endpoint_url,
  };
}

const COLUMNS =
  'id, owner_id, name, icon, description, redirect_uris, bot_public, bot_require_code_grant, client_secret_hash, public_client, bot_user_id, is_admin_builtin, flags, created_at, verify_key, interactions_endpoint_url';

export interface NewApplication {
  id: string;
  ownerId: string;
  name: string;
  redirectUris: string[];
  botPublic: boolean;
  botRequireCodeGrant: boolean;
  publicClient: boolean;
  clientSecretHash: string;
  botUsername: string;
  botTokenHash: string;
  createdAt: Date;
  /** The Ed25519 pair (`InteractionKeys.newPair`). */
  verifyKey: string;
  sealedPrivateKey: string;
}

export interface ApplicationChanges {
  name?: string;
  redirectUris?: string[];
  botPublic?: boolean;
  botRequireCodeGrant?: boolean;
  publicClient?: boolean;
  description?: string | null;
  interactionsEndpointUrl?: string | null;
}

export const MAX_APPLICATIONS_PER_OWNER = 25;

/** Storage of applications and their bot users. */
export class ApplicationsRepository {
  constructor(private readonly db: Database) {}

  /** Any application, the built-in Admin one included (the OAuth2 provider serves it too). */
  async findById(id: string, db: Queryable = this.db): Promise<ApplicationRecord | undefined> {
    const [row] = await db.query<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE id = $1`, [id]);
    return row ? toRecord(row) : undefined;
  }

  /** Several applications in one query, keyed by id; unknown ids are absent. */
  async findByIds(ids: readonly string[]): Promise<Map<string, ApplicationRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.query<ApplicationRow>(
      `SELECT ${COLUMNS} FROM applications WHERE id = ANY($1::bigint[])`,
      [[...new Set(ids)]],
    );
    return new Map(rows.map((row) => [row.id, toRecord(row)]));
  }

  /** The applications a user manages; the built-in Admin application is never listed. */
  async listByOwner(ownerId: string): Promise<ApplicationRecord[]> {
    const rows = await this.db.query<ApplicationRow>(
      `SELECT ${COLUMNS} FROM applications WHERE owner_id = $1 AND NOT is_admin_builtin ORDER BY id`,
      [ownerId],
    );
    return rows.map(toRecord);
  }

  /**
   * Creates the application and its bot user in one transaction. The owner row is locked first so that two
   * concurrent creations cannot both pass the per-owner limit. Returns false when the limit is reached.
   */
  async create(app: NewApplication): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [app.ownerId]);
      const [count] = await tx.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM applications WHERE owner_id = $1 AND NOT is_admin_builtin',
        [app.ownerId],
      );
      if ((count?.n ?? 0) >= MAX_APPLICATIONS_PER_OWNER) return false;
      await tx.query('INSERT INTO users (id, username, is_bot, created_at) VALUES ($1, $2, true, $3)', [
        app.id,
        app.botUsername,
        app.createdAt,
      ]);
      await tx.query(
        `INSERT INTO applications (id, owner_id, name, redirect_uris, bot_public, bot_require_code_grant,
           client_secret_hash, bot_user_id, bot_token_hash, created_at, public_client, verify_key, interactions_private_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $1, $8, $9, $10, $11, $12)`,
        [
          app.id,
          app.ownerId,
          app.name,
          app.redirectUris,
          app.botPublic,
          app.botRequireCodeGrant,
          app.clientSecretHash,
          app.botTokenHash,
          app.createdAt,
          app.publicClient,
          app.verifyKey,
          app.sealedPrivateKey,
        ],
      );
      return true;
    });
  }

  async update(id: string, changes: ApplicationChanges): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.redirectUris !== undefined) set('redirect_uris', changes.redirectUris);
    if (changes.botPublic !== undefined) set('bot_public', changes.botPublic);
    if (changes.botRequireCodeGrant !== undefined) set('bot_require_code_grant', changes.botRequireCodeGrant);
    if (changes.publicClient !== undefined) set('public_client', changes.publicClient);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.interactionsEndpointUrl !== undefined)
      set('interactions_endpoint_url', changes.interactionsEndpointUrl);
    if (sets.length === 0) return;
    await this.db.query(`UPDATE applications SET ${sets.join(', ')} WHERE id = $1`, values);
  }

  /** What a `Bot` credential is checked against; the built-in Admin application has no bot. */
  async botToken(applicationId: string): Promise<{ botUserId: string; botTokenHash: string } | undefined> {
    const [row] = await this.db.query<{ bot_user_id: string | null; bot_token_hash: string | null }>(
      'SELECT bot_user_id, bot_token_hash FROM applications WHERE id = $1 AND NOT is_admin_builtin',
      [applicationId],
    );
    if (!row?.bot_user_id || !row.bot_token_hash) return undefined;
    return { botUserId: row.bot_user_id, botTokenHash: row.bot_token_hash };
  }

  async setBotTokenHash(id: string, hash: string): Promise<void> {
    await this.db.query('UPDATE applications SET bot_token_hash = $2 WHERE id = $1', [id, hash]);
  }

  async setClientSecretHash(id: string, hash: string): Promise<void> {
    await this.db.query('UPDATE applications SET client_secret_hash = $2 WHERE id = $1', [id, hash]);
  }

  /**
   * Deletes the application (grants, tokens and codes cascade) and retires its bot user. The bot row stays,
   * flagged deleted, because chat history may still name it as an author. Returns the users whose OAuth2
   * grants disappeared, so their cached credentials can be dropped.
   */
  async delete(app: ApplicationRecord, deletedFlag: bigint): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      const grants = await tx.query<{ user_id: string }>(
        'SELECT DISTINCT user_id FROM oauth2_grants WHERE application_id = $1',
        [app.id],
      );
      await tx.query('DELETE FROM applications WHERE id = $1', [app.id]);
      if (app.botUserId) {
        await tx.query('UPDATE users SET flags = flags | $2::bigint WHERE id = $1', [
          app.botUserId,
          deletedFlag.toString(),
        ]);
      }
      return grants.map((g) => g.user_id);
    });
  }
}
