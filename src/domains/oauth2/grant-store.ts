import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { digest, randomBase64Url } from '../../platform/crypto/tokens.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import { unionScopes } from './scopes.ts';

/** Lifetimes of docs/conventions.md#credentials. */
export const CODE_TTL_MS = 10 * 60_000;
export const ACCESS_TOKEN_TTL_MS = 7 * 24 * 3600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;

/** Codes and tokens: 32 random bytes, 43 base64url characters, stored only as digests. */
const newSecret = () => randomBase64Url(32);

export interface GrantRow {
  id: string;
  userId: string;
  applicationId: string;
  scopes: string[];
  createdAt: Date;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  scopes: string[];
  /** When the user signed in for the authorization these tokens descend from (OpenID `auth_time`). */
  authTime: Date | null;
}

export type CodeRedemption =
  | {
      status: 'ok';
      grantId: string;
      userId: string;
      redirectUri: string;
      scopes: string[];
      codeChallenge: string | null;
      nonce: string | null;
      authTime: Date | null;
    }
  /** Unknown, expired, or issued to another client: all the same `invalid_grant`. */
  | { status: 'unknown' }
  /** A second use of a redeemed code: the grant it belongs to is compromised. */
  | { status: 'reused'; grantId: string };

export type RefreshRedemption =
  | { status: 'ok'; grantId: string; userId: string; scopes: string[]; authTime: Date | null }
  | { status: 'unknown' }
  | { status: 'reused'; grantId: string };

export interface TokenInfo {
  kind: 'access' | 'refresh';
  applicationId: string;
  userId: string;
  username: string;
  scopes: string[];
  expiresAt: Date;
  createdAt: Date;
  usedAt: Date | null;
}

/**
 * Grants (one per user and application), their authorisation codes and their tokens. Redemption is a single
 * conditional UPDATE, so two concurrent uses of one code or refresh token cannot both succeed.
 */
export interface AccessTokenGrant {
  userId: string;
  applicationId: string;
  grantId: string;
  /** The scopes stored with the token itself. */
  scopes: string[];
  expiresAt: Date;
  /** Issued to the built-in Admin application (docs/admin.md#the-built-in-admin-oauth2-application). */
  isAdminApplication: boolean;
}

export class GrantStore {
  constructor(
    private readonly db: Database,
    private readonly ids: SnowflakeGenerator,
  ) {}

  async findGrant(userId: string, applicationId: string): Promise<GrantRow | undefined> {
    const [row] = await this.db.query<{ id: string; scopes: string[]; created_at: Date }>(
      'SELECT id, scopes, created_at FROM oauth2_grants WHERE user_id = $1 AND application_id = $2',
      [userId, applicationId],
    );
    return row ? { id: row.id, userId, applicationId, scopes: row.scopes, createdAt: row.created_at } : undefined;
  }

  /** Records consent: creates the grant or widens its scopes. */
  async upsertGrant(userId: string, applicationId: string, scopes: readonly string[], now: number): Promise<string> {
    return this.db.transaction(async (tx) => {
      const [existing] = await tx.query<{ id: string; scopes: string[] }>(
        'SELECT id, scopes FROM oauth2_grants WHERE user_id = $1 AND application_id = $2 FOR UPDATE',
        [userId, applicationId],
      );
      if (existing) {
        await tx.query('UPDATE oauth2_grants SET scopes = $2 WHERE id = $1', [
          existing.id,
          unionScopes(existing.scopes, scopes),
        ]);
        return existing.id;
      }
      const id = this.ids.next();
      const [row] = await tx.query<{ id: string }>(
        `INSERT INTO oauth2_grants (id, user_id, application_id, scopes, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, application_id) DO UPDATE SET scopes = EXCLUDED.scopes RETURNING id`,
        [id, userId, applicationId, unionScopes([], scopes), new Date(now)],
      );
      return row?.id ?? id;
    });
  }

  async issueCode(input: {
    grantId: string;
    redirectUri: string;
    scopes: readonly string[];
    codeChallenge: string | null;
    nonce: string | null;
    authTime: Date | null;
    now: number;
  }): Promise<string> {
    const code = newSecret();
    await this.db.query(
      `INSERT INTO oauth2_codes
         (code_hash, grant_id, redirect_uri, scopes, code_challenge, nonce, auth_time, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        digest(code),
        input.grantId,
        input.redirectUri,
        [...input.scopes],
        input.codeChallenge,
        input.nonce,
        input.authTime,
        new Date(input.now + CODE_TTL_MS),
        new Date(input.now),
      ],
    );
    return code;
  }

  /** Redeems a code issued to `applicationId` (a code of another client is simply unknown to it). */
  async redeemCode(code: string, applicationId: string, now: number, db: Queryable = this.db): Promise<CodeRedemption> {
    const hash = digest(code);
    const [row] = await db.query<{
      grant_id: string;
      user_id: string;
      redirect_uri: string;
      scopes: string[];
      code_challenge: string | null;
      nonce: string | null;
      auth_time: Date | null;
    }>(
      `UPDATE oauth2_codes c SET consumed_at = $3 FROM oauth2_grants g
        WHERE c.code_hash = $1 AND c.consumed_at IS NULL AND c.expires_at > $3
          AND g.id = c.grant_id AND g.application_id = $2
        RETURNING c.grant_id, g.user_id, c.redirect_uri, c.scopes, c.code_challenge, c.nonce, c.auth_time`,
      [hash, applicationId, new Date(now)],
    );
    if (row) {
      return {
        status: 'ok',
        grantId: row.grant_id,
        userId: row.user_id,
        redirectUri: row.redirect_uri,
        scopes: row.scopes,
        codeChallenge: row.code_challenge,
        nonce: row.nonce,
        authTime: row.auth_time,
      };
    }
    const [spent] = await db.query<{ grant_id: string }>(
      `SELECT c.grant_id FROM oauth2_codes c JOIN oauth2_grants g ON g.id = c.grant_id
        WHERE c.code_hash = $1 AND c.consumed_at IS NOT NULL AND g.application_id = $2`,
      [hash, applicationId],
    );
    return spent ? { status: 'reused', grantId: spent.grant_id } : { status: 'unknown' };
  }

  /** Marks a refresh token used (rotation): it never works again, and a later use is a reuse. */
  async redeemRefreshToken(
    token: string,
    applicationId: string,
    now: number,
    db: Queryable = this.db,
  ): Promise<RefreshRedemption> {
    const hash = digest(token);
    const [row] = await db.query<{ grant_id: string; user_id: string; scopes: string[]; auth_time: Date | null }>(
      `UPDATE oauth2_tokens t SET used_at = $3 FROM oauth2_grants g
        WHERE t.token_hash = $1 AND t.kind = 'refresh' AND t.used_at IS NULL AND t.expires_at > $3
          AND g.id = t.grant_id AND g.application_id = $2
        RETURNING t.grant_id, g.user_id, t.scopes, t.auth_time`,
      [hash, applicationId, new Date(now)],
    );
    if (row)
      return { status: 'ok', grantId: row.grant_id, userId: row.user_id, scopes: row.scopes, authTime: row.auth_time };
    const [spent] = await db.query<{ grant_id: string }>(
      `SELECT t.grant_id FROM oauth2_tokens t JOIN oauth2_grants g ON g.id = t.grant_id
        WHERE t.token_hash = $1 AND t.kind = 'refresh' AND t.used_at IS NOT NULL AND g.application_id = $2`,
      [hash, applicationId],
    );
    return spent ? { status: 'reused', grantId: spent.grant_id } : { status: 'unknown' };
  }

  async issueTokens(
    grantId: string,
    scopes: readonly string[],
    authTime: Date | null,
    now: number,
    db: Queryable = this.db,
  ): Promise<IssuedTokens> {
    const accessToken = newSecret();
    const refreshToken = newSecret();
    const insert = `INSERT INTO oauth2_tokens (token_hash, grant_id, kind, scopes, expires_at, created_at, auth_time)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)`;
    await db.query(insert, [
      digest(accessToken),
      grantId,
      'access',
      [...scopes],
      new Date(now + ACCESS_TOKEN_TTL_MS),
      new Date(now),
      authTime,
    ]);
    await db.query(insert, [
      digest(refreshToken),
      grantId,
      'refresh',
      [...scopes],
      new Date(now + REFRESH_TOKEN_TTL_MS),
      new Date(now),
      authTime,
    ]);
    return { accessToken, refreshToken, scopes: [...scopes], authTime };
  }

  /** Deletes a grant with its codes and tokens; returns the user it belonged to. */
  async revokeGrant(grantId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ user_id: string }>(
      'DELETE FROM oauth2_grants WHERE id = $1 RETURNING user_id',
      [grantId],
    );
    return row?.user_id;
  }

  async revokeGrantsOf(userId: string, applicationIds: readonly string[]): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      'DELETE FROM oauth2_grants WHERE user_id = $1 AND application_id = ANY($2::bigint[]) RETURNING id',
      [userId, [...applicationIds]],
    );
    return rows.length;
  }

  /** Looks up an access or refresh token by value (introspection, revocation). */
  async findToken(token: string): Promise<(TokenInfo & { grantId: string }) | undefined> {
    const [row] = await this.db.query<{
      kind: 'access' | 'refresh';
      grant_id: string;
      application_id: string;
      user_id: string;
      username: string;
      scopes: string[];
      expires_at: Date;
      created_at: Date;
      used_at: Date | null;
    }>(
      `SELECT t.kind, t.grant_id, g.application_id, g.user_id, u.username, t.scopes, t.expires_at, t.created_at, t.used_at
         FROM oauth2_tokens t JOIN oauth2_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id
        WHERE t.token_hash = $1`,
      [digest(token)],
    );
    if (!row) return undefined;
    return {
      kind: row.kind,
      grantId: row.grant_id,
      applicationId: row.application_id,
      userId: row.user_id,
      username: row.username,
      scopes: row.scopes,
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      usedAt: row.used_at,
    };
  }

  /** The grant an access token stands for, by the token's digest (how a `Bearer` credential is read). */
  async accessTokenGrant(tokenHash: string): Promise<AccessTokenGrant | undefined> {
    const [row] = await this.db.query<{
      user_id: string;
      application_id: string;
      grant_id: string;
      scopes: string[];
      expires_at: Date;
      is_admin_builtin: boolean;
    }>(
      `SELECT g.user_id, g.application_id, g.id AS grant_id, t.scopes, t.expires_at, a.is_admin_builtin
         FROM oauth2_tokens t JOIN oauth2_grants g ON g.id = t.grant_id JOIN applications a ON a.id = g.application_id
        WHERE t.token_hash = $1 AND t.kind = 'access'`,
      [tokenHash],
    );
    if (!row) return undefined;
    return {
      userId: row.user_id,
      applicationId: row.application_id,
      grantId: row.grant_id,
      scopes: row.scopes,
      expiresAt: row.expires_at,
      isAdminApplication: row.is_admin_builtin,
    };
  }

  async accessTokenExpiry(token: string): Promise<Date | undefined> {
    const [row] = await this.db.query<{ expires_at: Date }>(
      "SELECT expires_at FROM oauth2_tokens WHERE token_hash = $1 AND kind = 'access'",
      [digest(token)],
    );
    return row?.expires_at;
  }

  async listGrants(userId: string): Promise<GrantRow[]> {
    const rows = await this.db.query<{ id: string; application_id: string; scopes: string[]; created_at: Date }>(
      'SELECT id, application_id, scopes, created_at FROM oauth2_grants WHERE user_id = $1 ORDER BY created_at, id',
      [userId],
    );
    return rows.map((r) => ({
      id: r.id,
      userId,
      applicationId: r.application_id,
      scopes: r.scopes,
      createdAt: r.created_at,
    }));
  }
}
