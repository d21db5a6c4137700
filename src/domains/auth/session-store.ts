import type { UserRow } from '../../identity/user-record.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';

/** Where a session was started from, as its client told (`GET /auth/sessions`, docs/accounts.md). */
export interface ClientInfo {
  os?: string;
  platform?: string;
  location?: string;
}

/** A session as its user's session list shows it. */
export interface SessionListing {
  token_hash: string;
  client_info: ClientInfo;
  ip: string | null;
  created_at: Date;
  last_used_at: Date;
}

/**
 * The SQL of `sessions`: what `SessionService` issues, lists and revokes, and what the session credential kind
 * (session-credential.ts) reads, as the other credential kinds read their own domain's store
 * (docs/architecture.md#credential-kinds).
 */
export class SessionStore {
  constructor(private readonly db: Database) {}

  /**
   * The session a token digest names, with its account row: a cold session is usually a new login or a gateway
   * identify, which needs the account next, so one join saves a second round trip.
   */
  async findWithUser(tokenHash: string): Promise<(UserRow & { session_id: string }) | undefined> {
    const [row] = await this.db.query<UserRow & { session_id: string }>(
      'SELECT s.id AS session_id, u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1',
      [tokenHash],
    );
    return row;
  }

  /** A new session, and the account's last activity with it. */
  async insert(
    session: { id: string; userId: string; tokenHash: string; clientInfo: ClientInfo; ip: string; at: Date },
    db: Queryable = this.db,
  ): Promise<void> {
    await db.query(
      'INSERT INTO sessions (id, user_id, token_hash, client_info, ip, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $6)',
      [session.id, session.userId, session.tokenHash, JSON.stringify(session.clientInfo), session.ip, session.at],
    );
    await db.query('UPDATE users SET last_active_at = $2, last_active_ip = $3 WHERE id = $1', [
      session.userId,
      session.at,
      session.ip,
    ]);
  }

  /** A user's sessions, newest first. */
  listOf(userId: string): Promise<SessionListing[]> {
    return this.db.query<SessionListing>(
      'SELECT token_hash, client_info, ip, created_at, last_used_at FROM sessions WHERE user_id = $1 ORDER BY created_at DESC, id DESC',
      [userId],
    );
  }

  /** Deletes the named sessions of one user; returns the digests that were there. */
  async deleteNamed(userId: string, tokenHashes: readonly string[]): Promise<string[]> {
    const rows = await this.db.query<{ token_hash: string }>(
      'DELETE FROM sessions WHERE user_id = $1 AND token_hash = ANY($2::text[]) RETURNING token_hash',
      [userId, [...tokenHashes]],
    );
    return rows.map((r) => r.token_hash);
  }

  async deleteAllOf(userId: string, db: Queryable = this.db): Promise<void> {
    await db.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
  }
}
