import type { CredentialResolver } from '../../http/auth/credential-resolver.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { TokenCheck } from '../../platform/crypto/token-check.ts';
import { digest } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { ClientInfo, SessionListing, SessionStore } from './session-store.ts';
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

export class SessionService {
  constructor(
    private readonly store: SessionStore,
    private readonly ids: SnowflakeGenerator,
    private readonly clock: Clock,
    private readonly credentials: CredentialResolver,
    private readonly bus: EventBus,
    private readonly tokenCheck: TokenCheck,
    private readonly sessionUse: SessionUseBatch,
  ) {}

  async issue(userId: string, ip: string, clientInfo: ClientInfo = {}, db?: Queryable): Promise<IssuedSession> {
    const token = this.tokenCheck.newSessionToken();
    const idHash = digest(token);
    const sessionId = this.ids.next();
    const at = new Date(this.clock.now());
    await this.store.insert({ id: sessionId, userId, tokenHash: idHash, clientInfo, ip, at }, db);
    return { token, idHash, sessionId };
  }

  /** A user's sessions, newest first, with last-used times made current (they are written in batches). */
  async list(userId: string): Promise<SessionListing[]> {
    await this.sessionUse.flush();
    return this.store.listOf(userId);
  }

  /** Revokes the named sessions of one user; unknown hashes are ignored. */
  async revoke(userId: string, idHashes: readonly string[]): Promise<void> {
    if (idHashes.length === 0) return;
    const revoked = await this.store.deleteNamed(userId, idHashes);
    if (revoked.length === 0) return;
    for (const hash of revoked) await this.credentials.invalidate({ tokenHash: hash });
    await this.bus.publish(CREDENTIALS_REVOKED_TOPIC, {
      kind: 'sessions',
      userId,
      sessionIdHashes: revoked,
    });
  }

  /** Ends every session of a user (password change or reset, disable, delete, admin action). */
  async revokeAll(userId: string, db?: Queryable): Promise<void> {
    await this.store.deleteAllOf(userId, db);
    await this.credentials.invalidate({ userId });
    await this.bus.publish(CREDENTIALS_REVOKED_TOPIC, { kind: 'user', userId });
  }
}
