import type { Principal } from '../../identity/principal.ts';
import type { UserRecord, UserSnapshots } from '../../identity/user-record.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Clock } from '../../platform/clock.ts';
import { digest } from '../../platform/crypto/tokens.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { ParsedCredential } from './authorization.ts';
import type { CredentialBinding, CredentialKind, CredentialKinds, PresentedCredential } from './credential-kind.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'auth.invalidate': AuthInvalidation;
  }
}

/** A binding and the principal last built from it (reused while the user snapshot is the same object). */
type CachedBinding = { readonly binding: CredentialBinding; principal: Principal | undefined; touchedAt: number };

/** Last-used times are advisory: written at most this often per credential. */
const TOUCH_INTERVAL_MS = 60_000;

const UNKNOWN = Symbol('unknown credential');

export const AUTH_INVALIDATION_TOPIC = 'auth.invalidate';
export type AuthInvalidation = { userId?: string; tokenHash?: string; all?: boolean };

/**
 * Turns a parsed credential into a `Principal` through the kind registered for its form
 * (docs/architecture.md#credential-kinds). A warm hit costs two map look-ups; unknown tokens are remembered
 * briefly so the 401 path does not reach the database either. Revocations call `invalidate`, which is
 * broadcast on the event bus so every process drops the entry at once.
 */
export class CredentialResolver {
  private readonly bindings: TtlCache<string, CachedBinding | typeof UNKNOWN>;
  /** The cache-key prefixes of every kind: a revoked digest is dropped under each. */
  private readonly forms: readonly string[];

  constructor(
    private readonly kinds: CredentialKinds,
    private readonly users: UserSnapshots,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {
    this.forms = Object.keys(kinds);
    this.bindings = new TtlCache(100_000, 60_000, () => Date.now());
    bus.subscribe(AUTH_INVALIDATION_TOPIC, (message) => this.dropLocal(message));
    // Invalidations may have been lost (a Redis reconnect, a skipped number): forget every credential and user.
    bus.onGap(AUTH_INVALIDATION_TOPIC, () => this.dropLocal({ all: true }));
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
    if (message.tokenHash) for (const form of this.forms) this.bindings.delete(`${form}:${message.tokenHash}`);
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
      const kind = this.kindFor(credential);
      // A token whose check part is wrong was never issued here: refused without a read (unless it is one of
      // the tokens issued before check parts existed).
      if (!kind.plausible(credential, tokenHash)) return undefined;
      return this.loadThenResolve(kind, credential, tokenHash, cacheKey);
    }
    return this.principalOf(entry);
  }

  /** The registry is keyed by form, so the kind found takes exactly this form of credential. */
  private kindFor<C extends PresentedCredential>(credential: C): CredentialKind<C> {
    return this.kinds[credential.kind] as CredentialKind<C>;
  }

  private async loadThenResolve<C extends PresentedCredential>(
    kind: CredentialKind<C>,
    credential: C,
    tokenHash: string,
    cacheKey: string,
  ): Promise<Principal | undefined> {
    const seenBindings = this.bindings.version;
    const seenUsers = this.users.version;
    const found = await kind.lookup(credential, tokenHash);
    const entry: CachedBinding | typeof UNKNOWN = found
      ? { binding: found.binding, principal: undefined, touchedAt: Number.NEGATIVE_INFINITY }
      : UNKNOWN;
    // A revocation that arrived while the row was read must not be undone by caching what was read.
    this.bindings.setIfUnchanged(cacheKey, entry, seenBindings, entry === UNKNOWN ? 5_000 : 60_000);
    if (found?.userRow) this.users.remember(found.userRow, seenUsers);
    return this.principalOf(entry);
  }

  private principalOf(entry: CachedBinding | typeof UNKNOWN): Principal | undefined | Promise<Principal | undefined> {
    if (entry === UNKNOWN) return undefined;
    const binding = entry.binding;
    const now = this.clock.now();
    if (binding.expiresAt !== null && binding.expiresAt <= now) return undefined;
    if (now - entry.touchedAt >= TOUCH_INTERVAL_MS) {
      entry.touchedAt = now;
      binding.touch(now);
    }
    const user = this.users.cached(binding.userId);
    if (user) return this.principalFor(entry, user);
    return this.users.findById(binding.userId).then((found) => (found ? this.principalFor(entry, found) : undefined));
  }

  /** One principal object per (credential, user snapshot): rebuilt only when the user snapshot changes. */
  private principalFor(entry: CachedBinding, user: UserRecord): Principal {
    if (entry.principal?.user !== user) entry.principal = entry.binding.principal(user);
    return entry.principal;
  }
}
