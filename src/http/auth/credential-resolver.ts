import type { UsersRepository } from '../../domains/users/users-repository.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { ADMIN_API_KEY_PATTERN, type ParsedCredential } from './authorization.ts';
import type { Principal } from './principal.ts';

/** What a credential names, without the user snapshot (that comes from the user cache). */
type CredentialBinding =
  | { kind: 'session'; userId: string; sessionId: string; sessionIdHash: string }
  | { kind: 'bot'; userId: string; applicationId: string }
  | {
      kind: 'bearer';
      userId: string;
      applicationId: string;
      scopes: ReadonlySet<string>;
      grantId: string;
      isAdminApplication: boolean;
      expiresAt: number;
    }
  | { kind: 'admin_key'; userId: string; keyId: string; keyAcls: readonly string[]; expiresAt: number | null };

const UNKNOWN = Symbol('unknown credential');
const CREDENTIAL_KINDS = ['session', 'bot', 'bearer', 'admin'] as const;

export const AUTH_INVALIDATION_TOPIC = 'auth.invalidate';
export type AuthInvalidation = { userId?: string; tokenHash?: string; all?: boolean };

/**
 * Turns a parsed credential into a `Principal`. A warm hit costs two map look-ups; unknown tokens are
 * remembered briefly so the 401 path does not reach the database either. Revocations call `invalidate`,
 * which is broadcast on the event bus so every process drops the entry at once.
 */
export class CredentialResolver {
  private readonly bindings: TtlCache<string, CredentialBinding | typeof UNKNOWN>;
  private readonly lastTouched = new TtlCache<string, true>(100_000, 60_000);

  constructor(
    private readonly db: Database,
    private readonly users: UsersRepository,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {
    this.bindings = new TtlCache(100_000, 60_000, () => Date.now());
    bus.subscribe<AuthInvalidation>(AUTH_INVALIDATION_TOPIC, (message) => this.dropLocal(message));
  }

  /** Revocation: forget a credential (by token digest) or everything that belongs to a user. */
  async invalidate(message: AuthInvalidation): Promise<void> {
    this.dropLocal(message);
    await this.bus.publish(AUTH_INVALIDATION_TOPIC, message);
  }

  private dropLocal(message: AuthInvalidation): void {
    if (message.all) {
      this.bindings.clear();
      this.users.forgetAll();
      return;
    }
    if (message.tokenHash) for (const kind of CREDENTIAL_KINDS) this.bindings.delete(`${kind}:${message.tokenHash}`);
    if (message.userId) {
      const userId = message.userId;
      this.bindings.deleteWhere((binding) => binding !== UNKNOWN && binding.userId === userId);
      this.users.forget(userId);
    }
  }

  async resolve(credential: ParsedCredential): Promise<Principal | undefined> {
    if (credential.kind === 'none' || credential.kind === 'invalid') return undefined;
    const tokenHash = digest(credential.token);
    const cacheKey = `${credential.kind}:${tokenHash}`;
    let binding = this.bindings.get(cacheKey);
    if (binding === undefined) {
      binding = (await this.load(credential, tokenHash)) ?? UNKNOWN;
      this.bindings.set(cacheKey, binding, binding === UNKNOWN ? 5_000 : 60_000);
    }
    if (binding === UNKNOWN) return undefined;
    const now = this.clock.now();
    if (
      (binding.kind === 'bearer' && binding.expiresAt <= now) ||
      (binding.kind === 'admin_key' && binding.expiresAt !== null && binding.expiresAt <= now)
    )
      return undefined;
    const user = await this.users.findById(binding.userId);
    if (!user) return undefined;
    if (binding.kind === 'session') this.touchSession(binding.sessionId);
    if (binding.kind === 'admin_key') this.touchAdminKey(binding.keyId);
    const { userId: _userId, ...rest } = binding;
    if (rest.kind === 'bearer') {
      const { expiresAt: _e, ...bearer } = rest;
      return { ...bearer, user };
    }
    if (rest.kind === 'admin_key') {
      const { expiresAt: _e, ...key } = rest;
      return { ...key, user };
    }
    return { ...rest, user };
  }

  private async load(
    credential: Exclude<ParsedCredential, { kind: 'none' | 'invalid' }>,
    tokenHash: string,
  ): Promise<CredentialBinding | undefined> {
    switch (credential.kind) {
      case 'session': {
        const [row] = await this.db.query<{ id: string; user_id: string }>(
          'SELECT id, user_id FROM sessions WHERE token_hash = $1',
          [tokenHash],
        );
        return row ? { kind: 'session', userId: row.user_id, sessionId: row.id, sessionIdHash: tokenHash } : undefined;
      }
      case 'bot': {
        const [row] = await this.db.query<{ bot_user_id: string | null; bot_token_hash: string | null }>(
          'SELECT bot_user_id, bot_token_hash FROM applications WHERE id = $1 AND NOT is_admin_builtin',
          [credential.applicationId],
        );
        if (!row?.bot_user_id || !row.bot_token_hash || !constantTimeEqual(row.bot_token_hash, tokenHash))
          return undefined;
        return { kind: 'bot', userId: row.bot_user_id, applicationId: credential.applicationId };
      }
      case 'bearer': {
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
          kind: 'bearer',
          userId: row.user_id,
          applicationId: row.application_id,
          grantId: row.grant_id,
          scopes: new Set(row.scopes),
          isAdminApplication: row.is_admin_builtin,
          expiresAt: row.expires_at.getTime(),
        };
      }
      case 'admin': {
        const match = ADMIN_API_KEY_PATTERN.exec(credential.token);
        if (!match) return undefined;
        const [row] = await this.db.query<{
          owner_id: string;
          secret_hash: string;
          acls: string[];
          expires_at: Date | null;
        }>(
          'SELECT owner_id, secret_hash, acls, expires_at FROM admin_api_keys WHERE key_id = $1 AND revoked_at IS NULL',
          [match[1]],
        );
        if (!row || !constantTimeEqual(row.secret_hash, tokenHash)) return undefined;
        return {
          kind: 'admin_key',
          userId: row.owner_id,
          keyId: match[1] as string,
          keyAcls: row.acls,
          expiresAt: row.expires_at?.getTime() ?? null,
        };
      }
    }
  }

  /** Last-used times are advisory: written at most once a minute per credential, never awaited. */
  private touchSession(sessionId: string): void {
    if (this.lastTouched.get(`s:${sessionId}`)) return;
    this.lastTouched.set(`s:${sessionId}`, true);
    this.db
      .query('UPDATE sessions SET last_used_at = $2 WHERE id = $1', [sessionId, new Date(this.clock.now())])
      .catch(() => {});
  }

  private touchAdminKey(keyId: string): void {
    if (this.lastTouched.get(`k:${keyId}`)) return;
    this.lastTouched.set(`k:${keyId}`, true);
    this.db
      .query('UPDATE admin_api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, new Date(this.clock.now())])
      .catch(() => {});
  }
}
