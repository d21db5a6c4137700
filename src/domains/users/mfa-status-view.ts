import { AUTH_INVALIDATION_TOPIC, type AuthInvalidation } from '../../http/auth/credential-resolver.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { MfaFactors, MfaStatus } from '../mfa/mfa-factors.ts';

/** Topic every module publishes after changing a user (profile, MFA factors): `{userId}`. */
export const USER_UPDATED_TOPIC = 'user.updated';

/**
 * MFA status for *displaying* a user (`mfa_enabled`, `authenticator_types` in the private user view), cached
 * so that `GET /users/@me` does not query the database on every call. Dropped on `user.updated` and on
 * credential invalidation for the user, which every factor change publishes; the TTL bounds any miss.
 * Security decisions (login MFA, sudo) keep asking `MfaFactors.status` directly.
 */
export class MfaStatusView {
  private readonly cache = new TtlCache<string, MfaStatus>(50_000, 30_000);
  /** Bumped on every invalidation, so a read that raced a change never caches the old answer. */
  private readonly generations = new Map<string, number>();
  private generationAll = 0;

  constructor(
    private readonly mfa: Pick<MfaFactors, 'status'>,
    bus: EventBus,
  ) {
    bus.subscribe<{ userId?: string }>(USER_UPDATED_TOPIC, (m) => this.forget(m?.userId));
    bus.subscribe<AuthInvalidation>(AUTH_INVALIDATION_TOPIC, (m) =>
      m?.all ? this.forgetAll() : this.forget(m?.userId),
    );
  }

  /** Synchronous on a hit, so `GET /users/@me` pays no promise on its hot path. */
  status(userId: string): MfaStatus | Promise<MfaStatus> {
    return this.cache.get(userId) ?? this.load(userId);
  }

  private async load(userId: string): Promise<MfaStatus> {
    const generation = this.generation(userId);
    const status = await this.mfa.status(userId);
    if (this.generation(userId) === generation) this.cache.set(userId, status);
    return status;
  }

  private generation(userId: string): string {
    return `${this.generationAll}:${this.generations.get(userId) ?? 0}`;
  }

  private forget(userId: string | undefined): void {
    if (!userId) return;
    this.cache.delete(userId);
    this.generations.set(userId, (this.generations.get(userId) ?? 0) + 1);
    // The counters only need to outlive reads in flight; drop them before they grow without bound.
    if (this.generations.size > 100_000) {
      this.generations.clear();
      this.generationAll += 1;
    }
  }

  private forgetAll(): void {
    this.cache.clear();
    this.generationAll += 1;
  }
}
