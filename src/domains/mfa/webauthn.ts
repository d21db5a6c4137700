import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Config } from '../../config/config.ts';
import { ApiError } from '../../http/errors.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import type { OneTimeTokens } from '../auth/one-time-tokens.ts';
import type { AssertionPurpose } from './mfa-factors.ts';

/**
 * @simplewebauthn/server and its certificate parsers are loaded at the first WebAuthn request, not at start
 * (they were the largest part of the start-up module graph; docs/performance.md#start-up).
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => {
  library ??= import('@simplewebauthn/server');
  return library;
};

export const WEBAUTHN_CREDENTIAL_LIMIT = 10;
/** Single-use challenges live 5 minutes (docs/mfa-and-sudo.md); the browser timeout says the same. */
export const WEBAUTHN_CHALLENGE_TTL_MS = 5 * 60_000;
/** EdDSA, ES256, RS256. */
const ALGORITHMS = [-8, -7, -257];
const RP_NAME = 'Hearth';

/** `passkey` = discoverable sign-in without an account in hand; the others are bound to one account. */
export type ChallengeKind = 'registration' | AssertionPurpose | 'passkey';

interface CredentialRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Uint8Array;
  sign_count: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export interface CredentialView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

type WebAuthnConfig = Pick<Config, 'webauthnRpId' | 'webauthnOrigins'>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The outer shape every WebAuthn response shares; the library checks the rest and throws on garbage. */
function asResponse<T>(value: unknown): T | undefined {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.rawId !== 'string') return undefined;
  if (value.type !== 'public-key' || !isObject(value.response)) return undefined;
  return { clientExtensionResults: {}, ...value } as T;
}

/** WebAuthn credentials (passkeys and security keys) with @simplewebauthn/server doing the cryptography. */
export class WebAuthnCredentials {
  constructor(
    private readonly db: Database,
    private readonly tokens: OneTimeTokens,
    private readonly ids: SnowflakeGenerator,
    private readonly config: WebAuthnConfig,
  ) {}

  async count(userId: string, db: Queryable = this.db): Promise<number> {
    const [row] = await db.query<{ count: string }>(
      'SELECT count(*) AS count FROM webauthn_credentials WHERE user_id = $1',
      [userId],
    );
    return Number(row?.count ?? 0);
  }

  async list(userId: string): Promise<CredentialView[]> {
    const rows = await this.db.query<CredentialRow>(
      'SELECT * FROM webauthn_credentials WHERE user_id = $1 ORDER BY id',
      [userId],
    );
    // The WebAuthn credential id (base64url) is the public id, as the platform's clients expect.
    return rows.map((row) => ({
      id: row.credential_id,
      name: row.name,
      created_at: new Date(row.created_at).toISOString(),
      last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    }));
  }

  async registrationOptions(user: UserRecord): Promise<unknown> {
    const existing = await this.db.query<Pick<CredentialRow, 'credential_id' | 'transports'>>(
      'SELECT credential_id, transports FROM webauthn_credentials WHERE user_id = $1',
      [user.id],
    );
    if (existing.length >= WEBAUTHN_CREDENTIAL_LIMIT) throw new ApiError('WEBAUTHN_CREDENTIAL_LIMIT_REACHED');
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: this.config.webauthnRpId,
      userName: user.username,
      userDisplayName: user.globalName ?? user.username,
      userID: new TextEncoder().encode(user.id),
      timeout: WEBAUTHN_CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((c) => ({ id: c.credential_id, transports: c.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await this.issueChallenge(options.challenge, user.id, 'registration');
    return options;
  }

  /** Verifies a registration against its single-use challenge and stores the credential. */
  async register(user: UserRecord, response: unknown, challenge: string, name: string, now: number): Promise<void> {
    const invalid = () => new ApiError('INVALID_WEBAUTHN_CREDENTIAL');
    if (!(await this.takeChallenge(challenge, user.id, 'registration'))) throw invalid();
    const parsed = asResponse<RegistrationResponseJSON>(response);
    if (!parsed) throw invalid();
    let info: Awaited<
      ReturnType<typeof import('@simplewebauthn/server').verifyRegistrationResponse>
    >['registrationInfo'];
    try {
      const result = await (await webauthn()).verifyRegistrationResponse({
        response: parsed,
        expectedChallenge: challenge,
        expectedOrigin: this.config.webauthnOrigins,
        expectedRPID: this.config.webauthnRpId,
        requireUserVerification: false,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      info = result.verified ? result.registrationInfo : undefined;
    } catch {
      info = undefined;
    }
    if (!info) throw invalid();
    const credential = info.credential;
    try {
      await this.db.transaction(async (tx) => {
        // Lock the account row so two parallel registrations cannot both pass the limit.
        await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [user.id]);
        if ((await this.count(user.id, tx)) >= WEBAUTHN_CREDENTIAL_LIMIT)
          throw new ApiError('WEBAUTHN_CREDENTIAL_LIMIT_REACHED');
        await tx.query(
          `INSERT INTO webauthn_credentials (id, user_id, credential_id, public_key, sign_count, transports, name, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            this.ids.next(),
            user.id,
            credential.id,
            Buffer.from(credential.publicKey),
            credential.counter,
            credential.transports ?? [],
            name,
            new Date(now),
          ],
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw invalid();
      throw error;
    }
  }

  async rename(userId: string, id: string, name: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE webauthn_credentials SET name = $3 WHERE user_id = $1 AND (credential_id = $2 OR id::text = $2)
       RETURNING 1`,
      [userId, id, name],
    );
    return rows.length === 1;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(
      'DELETE FROM webauthn_credentials WHERE user_id = $1 AND (credential_id = $2 OR id::text = $2) RETURNING 1',
      [userId, id],
    );
    return rows.length === 1;
  }

  async removeAll(db: Queryable, userId: string): Promise<void> {
    await db.query('DELETE FROM webauthn_credentials WHERE user_id = $1', [userId]);
  }

  /**
   * Request options for an assertion: bound to one account (sudo, login second step) with its credentials
   * allowed, or discoverable (`passkey`, `userId` null).
   */
  async authenticationOptions(userId: string | null, kind: Exclude<ChallengeKind, 'registration'>): Promise<unknown> {
    let allow: { id: string; transports?: string[] }[] | undefined;
    if (userId !== null) {
      const rows = await this.db.query<Pick<CredentialRow, 'credential_id' | 'transports'>>(
        'SELECT credential_id, transports FROM webauthn_credentials WHERE user_id = $1',
        [userId],
      );
      if (rows.length === 0) throw new ApiError('NO_PASSKEYS_REGISTERED');
      allow = rows.map((r) => ({ id: r.credential_id, transports: r.transports }));
    }
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: this.config.webauthnRpId,
      timeout: WEBAUTHN_CHALLENGE_TTL_MS,
      userVerification: kind === 'passkey' ? 'required' : 'preferred',
      ...(allow ? { allowCredentials: allow as { id: string }[] } : {}),
    });
    await this.issueChallenge(options.challenge, userId, kind);
    return options;
  }

  /**
   * Checks an assertion against a single-use challenge of the given kind. Returns the account it proves, or
   * undefined; never throws on malformed input. A passkey sign-in needs user verification, since it stands
   * in for both password and second factor.
   */
  async verifyAssertion(
    expectedUserId: string | null,
    response: unknown,
    challenge: string,
    kind: Exclude<ChallengeKind, 'registration'>,
    now: number,
  ): Promise<string | undefined> {
    if (!(await this.takeChallenge(challenge, expectedUserId, kind))) return undefined;
    const parsed = asResponse<AuthenticationResponseJSON>(response);
    if (!parsed) return undefined;
    const [row] = await this.db.query<CredentialRow>('SELECT * FROM webauthn_credentials WHERE credential_id = $1', [
      parsed.id,
    ]);
    if (!row) return undefined;
    if (expectedUserId !== null && row.user_id !== expectedUserId) return undefined;
    if (kind === 'passkey' && !this.userHandleMatches(parsed, row.user_id)) return undefined;
    let newCounter: number;
    try {
      const result = await (await webauthn()).verifyAuthenticationResponse({
        response: parsed,
        expectedChallenge: challenge,
        expectedOrigin: this.config.webauthnOrigins,
        expectedRPID: this.config.webauthnRpId,
        credential: {
          id: row.credential_id,
          publicKey: new Uint8Array(row.public_key),
          counter: Number(row.sign_count),
          transports: row.transports as never,
        },
        requireUserVerification: kind === 'passkey',
      });
      if (!result.verified) return undefined;
      newCounter = result.authenticationInfo.newCounter;
    } catch {
      return undefined;
    }
    await this.db.query('UPDATE webauthn_credentials SET sign_count = $2, last_used_at = $3 WHERE id = $1', [
      row.id,
      newCounter,
      new Date(now),
    ]);
    return row.user_id;
  }

  /** A discoverable credential names its account; it must be the one the credential was registered to. */
  private userHandleMatches(response: AuthenticationResponseJSON, userId: string): boolean {
    const handle = response.response.userHandle;
    if (handle === undefined || handle === null) return true;
    try {
      return Buffer.from(handle, 'base64url').toString('utf8') === userId;
    } catch {
      return false;
    }
  }

  private async issueChallenge(challenge: string, userId: string | null, kind: ChallengeKind): Promise<void> {
    await this.tokens.issue('webauthn_challenge', userId, WEBAUTHN_CHALLENGE_TTL_MS, { kind }, { token: challenge });
  }

  /** Consumes the challenge (whatever happens next, it cannot be used twice) and checks what it was for. */
  private async takeChallenge(challenge: string, userId: string | null, kind: ChallengeKind): Promise<boolean> {
    if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 512) return false;
    const token = await this.tokens.consume<{ kind?: string }>('webauthn_challenge', challenge);
    if (!token || token.data.kind !== kind) return false;
    return userId === null ? token.userId === null : token.userId === userId;
  }
}
