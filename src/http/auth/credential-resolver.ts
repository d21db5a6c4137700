import type { Principal } from '../../identity/principal.ts';
import type { UserRecord, UserRow, UserSnapshots } from '../../identity/user-record.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import type { TokenCheck } from '../../platform/crypto/token-check.ts';
import { constantTimeEqual, digest, SESSION_TOKEN_PATTERN } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { ADMIN_API_KEY_PATTERN, type ParsedCredential } from './authorization.ts';
import { SessionUseBatch } from './session-use.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'auth.invalidate': AuthInvalidation;
  }
}

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

/** A binding and the principal last built from it (reused while the user snapshot is the same object). */
type CachedBinding = { readonly binding: CredentialBinding; principal: Principal | undefined; touchedAt: number };

/** Last-used times are advisory: written at most this often per credential. */
const TOUCH_INTERVAL_MS = 60_000;

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
  private readonly bindings: TtlCache<string, CachedBinding | typeof UNKNOWN>;

  constructor(
    private readonly db: Database,
    private readonly users: UserSnapshots,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly tokenCheck: TokenCheck,
    private readonly sessionUse: SessionUseBatch = new SessionUseBatch(db),
  ) {
    this.bindings = new TtlCache(100_000, 60_000, () => Date.now());
    bus.subscribe(AUTH_INVALIDATION_TOPIC, (message) => this.dropLocal(message));
    // Invalidations may have been lost (a Redis reconnect, a skipped number): forget every credential and user.
    bus.onGap(AUTH_INVALIDATION_TOPIC, () => this.dropLocal({ all: true }));
  }

  /** Writes pending last-used times (shutdown, and before a list shows them). */
  flushUse(): Promise<void> {
    return this.sessionUse.flush();
  }

  close(): Promise<void> {
    return this.sessionUse.close();
  }

  /** Revocation: forget a credential (by token digest) or everything that belongs to a user. */
  async invalidate(message: AuthInvalidation): Promise<void> {
    this.dropLocal(message);
    await this.bus.publish(AUTH_INVALIDATION_TOPIC, message);
  }

  /** Forgets every cached credential and user in this process (revocations may have been lost). */
  forgetAll(): void {
    this.dropLocal({ all: true });
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
      this.bindings.deleteWhere((entry) => entry !== UNKNOWN && entry.binding.userId === userId);
      this.users.forget(userId);
    }
  }

  /**
   * Synchronous on a warm hit (binding and user both cached), so the hot path pays no promise; a miss
   * returns a promise that loads what is missing.
   */
  resolve(credential: ParsedCredential): Principal | undefined | Promise<Principal | undefined> {
    if (credential.kind === 'none' || credential.kind === 'invalid') return undefined;
    const tokenHash = digest(credential.token);
    const cacheKey = `${credential.kind}:${tokenHash}`;
    const entry = this.bindings.get(cacheKey);
    if (entry === undefined) {
      // A token whose check part is wrong was never issued here: refused without a read (unless it is one of
      // the tokens issued before check parts existed).
      if (!this.plausible(credential, tokenHash)) return undefined;
      return this.loadThenResolve(credential, tokenHash, cacheKey);
    }
    return this.principalOf(entry);
  }

  /** Digests of session and bot tokens issued before check parts (migration 0091); read once at start. */
  private legacyDigests: ReadonlySet<string> = new Set();

  async loadLegacyDigests(): Promise<void> {
    const rows = await this.db.query<{ token_hash: string }>('SELECT token_hash FROM legacy_token_digests');
    this.legacyDigests = new Set(rows.map((row) => row.token_hash));
  }

  private plausible(credential: Exclude<ParsedCredential, { kind: 'none' | 'invalid' }>, tokenHash: string): boolean {
    if (credential.kind === 'session') {
      return (
        (SESSION_TOKEN_PATTERN.test(credential.token) && this.tokenCheck.sessionChecks(credential.token)) ||
        this.legacyDigests.has(tokenHash)
      );
    }
    if (credential.kind === 'bot') {
      return this.tokenCheck.botChecks(credential.token, credential.applicationId) || this.legacyDigests.has(tokenHash);
    }
    return true;
  }

  private async loadThenResolve(
    credential: Exclude<ParsedCredential, { kind: 'none' | 'invalid' }>,
    tokenHash: string,
    cacheKey: string,
  ): Promise<Principal | undefined> {
    const seenBindings = this.bindings.version;
    const seenUsers = this.users.version;
    const loaded = await this.load(credential, tokenHash);
    const entry: CachedBinding | typeof UNKNOWN = loaded
      ? { binding: loaded.binding, principal: undefined, touchedAt: Number.NEGATIVE_INFINITY }
      : UNKNOWN;
    // A revocation that arrived while the row was read must not be undone by caching what was read.
    this.bindings.setIfUnchanged(cacheKey, entry, seenBindings, entry === UNKNOWN ? 5_000 : 60_000);
    if (loaded?.userRow) this.users.remember(loaded.userRow, seenUsers);
    return this.principalOf(entry);
  }

  private principalOf(entry: CachedBinding | typeof UNKNOWN): Principal | undefined | Promise<Principal | undefined> {
    if (entry === UNKNOWN) return undefined;
    const binding = entry.binding;
    const now = this.clock.now();
    if (
      (binding.kind === 'bearer' && binding.expiresAt <= now) ||
      (binding.kind === 'admin_key' && binding.expiresAt !== null && binding.expiresAt <= now)
    )
      return undefined;
    if (now - entry.touchedAt >= TOUCH_INTERVAL_MS) {
      entry.touchedAt = now;
      this.touch(binding, now);
    }
    const user = this.users.cached(binding.userId);
    if (user) return this.principalFor(entry, user);
    return this.users.findById(binding.userId).then((found) => (found ? this.principalFor(entry, found) : undefined));
  }

  /** One principal object per (credential, user snapshot): rebuilt only when the user snapshot changes. */
  private principalFor(entry: CachedBinding, user: UserRecord): Principal {
    if (entry.principal?.user !== user) entry.principal = toPrincipal(entry.binding, user);
    return entry.principal;
  }

  private async load(
    credential: Exclude<ParsedCredential, { kind: 'none' | 'invalid' }>,
    tokenHash: string,
  ): Promise<{ binding: CredentialBinding; userRow?: UserRow } | undefined> {
    switch (credential.kind) {
      case 'session': {
        // The account row comes along (a cold session is usually a new login or a gateway identify, which
        // needs it next), saving a second round trip.
        const [row] = await this.db.query<UserRow & { session_id: string }>(
          'SELECT s.id AS session_id, u.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1',
          [tokenHash],
        );
        if (!row) return undefined;
        const { session_id: sessionId, ...userRow } = row;
        return {
          binding: { kind: 'session', userId: row.id, sessionId, sessionIdHash: tokenHash },
          userRow,
        };
      }
      case 'bot': {
        const [row] = await this.db.query<{ bot_user_id: string | null; bot_token_hash: string | null }>(
          'SELECT bot_user_id, bot_token_hash FROM applications WHERE id = $1 AND NOT is_admin_builtin',
          [credential.applicationId],
        );
        if (!row?.bot_user_id || !row.bot_token_hash || !constantTimeEqual(row.bot_token_hash, tokenHash))
          return undefined;
        return { binding: { kind: 'bot', userId: row.bot_user_id, applicationId: credential.applicationId } };
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
          binding: {
            kind: 'bearer',
            userId: row.user_id,
            applicationId: row.application_id,
            grantId: row.grant_id,
            scopes: new Set(row.scopes),
            isAdminApplication: row.is_admin_builtin,
            expiresAt: row.expires_at.getTime(),
          },
        };
      }
      case 'admin': {
        const match = ADMIN_API_KEY_PATTERN.exec(credential.token);
        if (!match || !isSnowflake(match[1] as string)) return undefined;
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
          binding: {
            kind: 'admin_key',
            userId: row.owner_id,
            keyId: match[1] as string,
            keyAcls: row.acls,
            expiresAt: row.expires_at?.getTime() ?? null,
          },
        };
      }
    }
  }

  /** Records when a session or Admin API key was last used; never awaited, failures ignored. */
  private touch(binding: CredentialBinding, now: number): void {
    const at = new Date(now);
    if (binding.kind === 'session') {
      this.sessionUse.record(binding.sessionId, at);
    } else if (binding.kind === 'admin_key') {
      this.db
        .query('UPDATE admin_api_keys SET last_used_at = $2 WHERE key_id = $1', [binding.keyId, at])
        .catch(() => {});
    }
  }
}

function toPrincipal(binding: CredentialBinding, user: UserRecord): Principal {
  switch (binding.kind) {
    case 'session':
      return { kind: 'session', user, sessionId: binding.sessionId, sessionIdHash: binding.sessionIdHash };
    case 'bot':
      return { kind: 'bot', user, applicationId: binding.applicationId };
    case 'bearer':
      return {
        kind: 'bearer',
        user,
        applicationId: binding.applicationId,
        scopes: binding.scopes,
        grantId: binding.grantId,
        isAdminApplication: binding.isAdminApplication,
      };
    case 'admin_key':
      return { kind: 'admin_key', user, keyId: binding.keyId, keyAcls: binding.keyAcls };
  }
}
