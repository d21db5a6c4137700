import type { CredentialResolver } from '../../http/auth/credential-resolver.ts';
import type { UserRow } from '../../identity/user-record.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { TokenCheck } from '../../platform/crypto/token-check.ts';
import { digest } from '../../platform/crypto/tokens.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { SessionUseBatch } from './session-use.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'credentials.revoked': CredentialsRevoked;
  }
}

/** Published whenever credentials stop working; the gateway closes the matching connections. */
export const CREDENTIALS_REVOKED_TOPIC = 'credentials.revoked';
export type CredentialsRevoked =
  | { kind: 'sessions'; userId: string; sessionIdHashes: string[] }
  | { kind: 'user'; userId: string }
  | { kind: 'bot'; userId: string; applicationId: string };

export interface IssuedSession {
  token: string;
  idHash: string;
  sessionId: string;
}

export interface ClientInfo {
  os?: string;
  platform?: string;
  location?: string;
}

/**
 * The session a token digest names, with its account row: a cold session is usually a new login or a gateway
 * identify, which needs the account next, so one join saves a second round trip (the session credential kind,
 * session-credential.ts, reads it).
 */
export async function findSessionWithUser(
  db: Queryable,
  tokenHash: string,
): Promise<(UserRow & { session_id: string }) | undefined> {
  const [row] = await db.query<UserRow & { session_id: string }>(
    'SELECT s.id AS session_id, u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1',
    [tokenHash],
  );
  return row;
}

export class SessionService {
  constructor(
    private readonly db: Database,
    private readonly ids: SnowflakeGenerator,
    private readonly clock: Clock,
    private readonly credentials: CredentialResolver,
    private readonly bus: EventBus,
    private readonly tokenCheck: TokenCheck,
    private readonly sessionUse: SessionUseBatch,
  ) {}

  async issue(
    userId: string,
    ip: string,
    clientInfo: ClientInfo = {},
    db: Queryable = this.db,
  ): Promise<IssuedSession> {
    const token = this.tokenCheck.newSessionToken();
    const idHash = digest(token);
    const sessionId = this.ids.next();
    const now = new Date(this.clock.now());
    await db.query(
      'INSERT INTO sessions (id, user_id, token_hash, client_info, ip, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $6)',
      [sessionId, userId, idHash, JSON.stringify(clientInfo), ip, now],
    );
    await db.query('UPDATE users SET last_active_at = $2, last_active_ip = $3 WHERE id = $1', [userId, now, ip]);
    return { token, idHash, sessionId };
  }

  /** A user's sessions, newest first, with last-used times made current (they are written in batches). */
  async list(
    userId: string,
  ): Promise<
    { token_hash: string; client_info: ClientInfo; ip: string | null; created_at: Date; last_used_at: Date }[]
  > {
    await this.sessionUse.flush();
    return this.db.query(
      'SELECT token_hash, client_info, ip, created_at, last_used_at FROM sessions WHERE user_id = $1 ORDER BY created_at DESC, id DESC',
      [userId],
    );
  }

  /** Revokes the named sessions of one user; unknown hashes are ignored. */
  async revoke(userId: string, idHashes: readonly string[]): Promise<void> {
    if (idHashes.length === 0) return;
    const rows = await this.db.query<{ token_hash: string }>(
      'DELETE FROM sessions WHERE user_id = $1 AND token_hash = ANY($2::text[]) RETURNING token_hash',
      [userId, [...idHashes]],
    );
    const revoked = rows.map((r) => r.token_hash);
    if (revoked.length === 0) return;
    for (const hash of revoked) await this.credentials.invalidate({ tokenHash: hash });
    await this.bus.publish(CREDENTIALS_REVOKED_TOPIC, {
      kind: 'sessions',
      userId,
      sessionIdHashes: revoked,
    });
  }

  /** Ends every session of a user (password change or reset, disable, delete, admin action). */
  async revokeAll(userId: string, db: Queryable = this.db): Promise<void> {
    await db.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
    await this.credentials.invalidate({ userId });
    await this.bus.publish(CREDENTIALS_REVOKED_TOPIC, { kind: 'user', userId });
  }
}
