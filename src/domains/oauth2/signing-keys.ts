import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { deriveKey, openWithKey, sealWithKey } from '../../platform/crypto/sealed-box.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';

/** The one signing algorithm: ECDSA P-256 with SHA-256 (small keys, fast signatures, every OIDC library). */
export const ID_TOKEN_ALG = 'ES256';
/** ID tokens live one hour. */
export const ID_TOKEN_TTL_MS = 3600_000;
/** A new signing key is made once the newest one is this old. */
export const KEY_ROTATION_MS = 30 * 24 * 3600_000;
/**
 * How long a replaced key stays in the JWKS after its successor started signing: the ID-token lifetime (its
 * last tokens are then expired) plus the same again for processes that still held it in memory.
 */
export const RETIRED_KEY_PUBLISHED_MS = 2 * ID_TOKEN_TTL_MS;

/** HKDF `info` of the key that seals private signing keys at rest: no other data is sealed under it. */
const SEAL_INFO = 'hearth oidc signing key v1';
const sealContext = (kid: string) => `oidc_signing_keys:${kid}`;

interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: JWK;
  private_jwk_sealed: string;
  created_at: Date;
}

interface SigningKey {
  kid: string;
  createdAt: number;
  key: CryptoKey;
}

/** The keys a JWKS document publishes at `now`: the newest, and older ones while their tokens may live. */
function publishedRows(rows: readonly KeyRow[], now: number): KeyRow[] {
  const newestFirst = [...rows].sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
  return newestFirst.filter(
    (_row, index) =>
      index === 0 || (newestFirst[index - 1] as KeyRow).created_at.getTime() + RETIRED_KEY_PUBLISHED_MS > now,
  );
}

/**
 * ID-token signing keys (`oidc_signing_keys`): made on first use, rotated after `KEY_ROTATION_MS`, published
 * as a JWKS. The private JWK is sealed under a key derived from the server's MFA secret and bound to its
 * `kid`; a key that no longer opens (the secret changed) is replaced by a new one rather than failing. One
 * instance per process caches the current key; rotation takes a table lock so that two processes rotating at
 * once make one key.
 */
export class SigningKeys {
  private readonly sealKey: Buffer;
  private current: SigningKey | undefined;

  constructor(
    private readonly db: Database,
    /** The server's MFA secret (`Secrets.mfa`). */
    secret: string,
  ) {
    this.sealKey = deriveKey(secret, SEAL_INFO);
  }

  /** Signs `claims` as a JWT with the current key (`typ: JWT`, `kid` in the header). */
  async sign(claims: Record<string, unknown>, now: number): Promise<string> {
    const key = await this.signingKey(now);
    return new SignJWT(claims).setProtectedHeader({ alg: ID_TOKEN_ALG, typ: 'JWT', kid: key.kid }).sign(key.key);
  }

  /** The public keys to publish at `now` (RFC 7517 JWK Set). */
  async jwks(now: number): Promise<{ keys: JWK[] }> {
    // The current key exists (and is rotated if due) before anyone can be handed a token signed by it.
    await this.signingKey(now);
    // Every request reads the table: another process may have rotated, and the rows are few.
    const rows = await this.db.query<KeyRow>(
      'SELECT kid, alg, public_jwk, private_jwk_sealed, created_at FROM oidc_signing_keys',
    );
    return {
      keys: publishedRows(rows, now).map((row) => ({ ...row.public_jwk, kid: row.kid, alg: row.alg, use: 'sig' })),
    };
  }

  private async signingKey(now: number): Promise<SigningKey> {
    if (this.current && now - this.current.createdAt < KEY_ROTATION_MS) return this.current;
    this.current = await this.db.transaction(async (tx) => {
      // Serialises rotation across processes; readers (the JWKS) are not blocked by this mode.
      await tx.query('LOCK TABLE oidc_signing_keys IN SHARE ROW EXCLUSIVE MODE');
      const [newest] = await tx.query<KeyRow>(
        `SELECT kid, alg, public_jwk, private_jwk_sealed, created_at FROM oidc_signing_keys
          ORDER BY created_at DESC, kid DESC LIMIT 1`,
      );
      if (newest && now - newest.created_at.getTime() < KEY_ROTATION_MS) {
        const opened = await this.open(newest);
        if (opened) return opened;
      }
      return this.create(tx, now);
    });
    return this.current;
  }

  private async open(row: KeyRow): Promise<SigningKey | undefined> {
    if (row.alg !== ID_TOKEN_ALG) return undefined;
    const json = openWithKey(this.sealKey, row.private_jwk_sealed, sealContext(row.kid));
    if (json === undefined) return undefined;
    const key = await importJWK(JSON.parse(json) as JWK, ID_TOKEN_ALG);
    if (!(key instanceof CryptoKey)) return undefined;
    return { kid: row.kid, createdAt: row.created_at.getTime(), key };
  }

  private async create(tx: Queryable, now: number): Promise<SigningKey> {
    const pair = await generateKeyPair(ID_TOKEN_ALG, { extractable: true });
    const publicJwk = await exportJWK(pair.publicKey);
    const privateJwk = await exportJWK(pair.privateKey);
    // The RFC 7638 thumbprint: stable, derived from the public key, unique per key.
    const kid = await calculateJwkThumbprint(publicJwk);
    await tx.query(
      `INSERT INTO oidc_signing_keys (kid, alg, public_jwk, private_jwk_sealed, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [
        kid,
        ID_TOKEN_ALG,
        JSON.stringify(publicJwk),
        sealWithKey(this.sealKey, JSON.stringify(privateJwk), sealContext(kid)),
        new Date(now),
      ],
    );
    // Keys whose tokens have all expired leave the table (and so the JWKS) for good.
    const rows = await tx.query<KeyRow>(
      'SELECT kid, alg, public_jwk, private_jwk_sealed, created_at FROM oidc_signing_keys',
    );
    const keep = new Set(publishedRows(rows, now).map((row) => row.kid));
    const drop = rows.filter((row) => !keep.has(row.kid)).map((row) => row.kid);
    if (drop.length > 0) await tx.query('DELETE FROM oidc_signing_keys WHERE kid = ANY($1::text[])', [drop]);
    return { kid, createdAt: now, key: pair.privateKey };
  }
}
