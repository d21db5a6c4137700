import { createHash } from 'node:crypto';
import type { UserRecord } from '../../identity/user-record.ts';
import { ID_TOKEN_TTL_MS, type SigningKeys } from './signing-keys.ts';

/** The standard claims Hearth can state about a user (OpenID Connect Core §5.1), for discovery. */
export const OIDC_CLAIMS = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'azp',
  'at_hash',
  'preferred_username',
  'name',
  'email',
  'email_verified',
] as const;

/** The user claims of an ID token and of `/oauth2/userinfo` (`userClaims`): each only when its scope allows. */
export type UserClaims = {
  preferred_username?: string;
  name?: string;
  email?: string;
  email_verified?: boolean;
};

/**
 * The user claims a scope set allows: `preferred_username` and `name` with `profile` or `identify`, `email`
 * and `email_verified` with `email` (and only when the account has an address).
 */
export function userClaims(user: UserRecord, scopes: readonly string[]): UserClaims {
  const claims: UserClaims = {};
  if (scopes.includes('profile') || scopes.includes('identify')) {
    claims.preferred_username = user.username;
    claims.name = user.globalName ?? user.username;
  }
  if (scopes.includes('email') && user.email !== null) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  return claims;
}

export interface IdTokenInput {
  issuer: string;
  clientId: string;
  user: UserRecord;
  scopes: readonly string[];
  /** When the user signed in (the session's creation); absent for grants from before it was recorded. */
  authTime: Date | null;
  /** The `nonce` of the authorization request; never on an ID token from a refresh. */
  nonce: string | null;
  /** The access token issued beside it: its `at_hash` is stated. */
  accessToken: string;
  now: number;
}

/**
 * `at_hash` (OpenID Connect Core §3.1.3.6 and §3.3.2.11): the left half of the hash of the access token's ASCII
 * bytes, base64url. The hash is the ID token's algorithm's: SHA-256 for ES256.
 */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/**
 * Builds and signs an ID token (OpenID Connect Core §2). `aud` is the client alone, so `azp` equals it. Only the
 * code flow exists (`response_type=code`), so ID tokens come from the token endpoint with their access token:
 * `at_hash` is always stated and `c_hash` (hybrid flow only) never applies.
 */
export function issueIdToken(keys: SigningKeys, input: IdTokenInput): Promise<string> {
  const iat = Math.floor(input.now / 1000);
  return keys.sign(
    {
      iss: input.issuer,
      sub: input.user.id,
      aud: input.clientId,
      azp: input.clientId,
      iat,
      exp: iat + ID_TOKEN_TTL_MS / 1000,
      ...(input.authTime ? { auth_time: Math.floor(input.authTime.getTime() / 1000) } : {}),
      ...(input.nonce !== null ? { nonce: input.nonce } : {}),
      at_hash: accessTokenHash(input.accessToken),
      ...userClaims(input.user, input.scopes),
    },
    input.now,
  );
}
