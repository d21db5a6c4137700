import type { Config } from '../../config/config.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { digest, randomBase64Url } from '../../platform/crypto/tokens.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import { writeInstanceConfig } from '../instance/instance-settings.ts';

export const ADMIN_APPLICATION_ID_KEY = 'admin_oauth2_application_id';
/** `config` (from HEARTH_ADMIN_OAUTH2_CLIENT_SECRET), `generated` (shown once by the CLI) or `unissued`. */
const SECRET_SOURCE_KEY = 'admin_oauth2_client_secret_source';
type SecretSource = 'config' | 'generated' | 'unissued';

const ADMIN_APPLICATION_NAME = 'Hearth Admin';
const SYSTEM_USERNAME = 'hearth_system';
/** Serialises first starts of several processes against one PostgreSQL database. */
const BOOTSTRAP_LOCK_KEY = 7_243_118_040;

export interface AdminApplicationDeps {
  db: Database;
  ids: SnowflakeGenerator;
  config: Pick<Config, 'adminOAuth2ClientSecret' | 'adminOAuth2RedirectUris'>;
  now: number;
}

async function readConfigValue<T>(db: Queryable, key: string): Promise<T | undefined> {
  const [row] = await db.query<{ value: T }>('SELECT value FROM instance_config WHERE key = $1', [key]);
  return row?.value;
}

async function withBootstrapLock<T>(db: Database, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    return work(tx);
  });
}

/** The system account that owns built-in objects; created once, never able to sign in. */
export async function ensureSystemUser(tx: Queryable, ids: SnowflakeGenerator, now: number): Promise<string> {
  const [existing] = await tx.query<{ id: string }>('SELECT id FROM users WHERE is_system ORDER BY id LIMIT 1');
  if (existing) return existing.id;
  const id = ids.next();
  await tx.query(
    `INSERT INTO users (id, username, global_name, is_system, email_verified, avatar_color, created_at)
     VALUES ($1, $2, $3, true, false, 0, $4)`,
    [id, SYSTEM_USERNAME, 'Hearth', new Date(now)],
  );
  return id;
}

/**
 * Creates the built-in Admin OAuth2 application on first start (docs/admin.md) and keeps its redirect URIs
 * and configured secret in step with the configuration on every later start. Without a configured
 * secret the application starts with an unusable one until the bootstrap CLI issues a real one.
 */
export async function ensureAdminApplication(deps: AdminApplicationDeps): Promise<string> {
  const { db, ids, config, now } = deps;
  return withBootstrapLock(db, async (tx) => {
    const storedId = await readConfigValue<string>(tx, ADMIN_APPLICATION_ID_KEY);
    const [app] = storedId
      ? await tx.query<{ id: string }>('SELECT id FROM applications WHERE id = $1 AND is_admin_builtin', [storedId])
      : [];
    const configured = config.adminOAuth2ClientSecret;
    if (app) {
      await tx.query('UPDATE applications SET redirect_uris = $2 WHERE id = $1', [
        app.id,
        config.adminOAuth2RedirectUris,
      ]);
      if (configured) {
        await tx.query('UPDATE applications SET client_secret_hash = $2 WHERE id = $1', [app.id, digest(configured)]);
        await writeInstanceConfig(tx, SECRET_SOURCE_KEY, 'config' satisfies SecretSource, now);
      }
      return app.id;
    }
    const ownerId = await ensureSystemUser(tx, ids, now);
    const id = ids.next();
    // Nobody knows the placeholder: the application is unusable until a secret is configured or issued.
    const secretHash = digest(configured ?? randomBase64Url(32));
    await tx.query(
      `INSERT INTO applications (id, owner_id, name, redirect_uris, bot_public, bot_require_code_grant,
                                 client_secret_hash, bot_user_id, is_admin_builtin, created_at)
       VALUES ($1, $2, $3, $4, false, false, $5, NULL, true, $6)`,
      [id, ownerId, ADMIN_APPLICATION_NAME, config.adminOAuth2RedirectUris, secretHash, new Date(now)],
    );
    await writeInstanceConfig(tx, ADMIN_APPLICATION_ID_KEY, id, now);
    await writeInstanceConfig(tx, SECRET_SOURCE_KEY, (configured ? 'config' : 'unissued') satisfies SecretSource, now);
    return id;
  });
}

/**
 * Issues the Admin application's client secret if none was ever configured or issued: the caller shows it
 * once. `clientSecret` is undefined when a secret already exists, so running the CLI again changes nothing.
 */
export async function issueAdminClientSecretIfUnissued(
  deps: AdminApplicationDeps,
): Promise<{ applicationId: string; clientSecret: string | undefined }> {
  const applicationId = await ensureAdminApplication(deps);
  const clientSecret = await withBootstrapLock(deps.db, async (tx) => {
    const source = await readConfigValue<SecretSource>(tx, SECRET_SOURCE_KEY);
    if (source !== 'unissued') return undefined;
    const secret = randomBase64Url(32);
    await tx.query('UPDATE applications SET client_secret_hash = $2 WHERE id = $1', [applicationId, digest(secret)]);
    await writeInstanceConfig(tx, SECRET_SOURCE_KEY, 'generated' satisfies SecretSource, deps.now);
    return secret;
  });
  return { applicationId, clientSecret };
}
