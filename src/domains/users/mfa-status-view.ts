import { AUTH_INVALIDATION_TOPIC } from '../../http/auth/credential-resolver.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { MfaFactors, MfaStatus } from '../mfa/mfa-factors.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'user.updated': { userId?: string };
  }
}

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

  constructor(
    private readonly mfa: Pick<MfaFactors, 'status'>,
    bus: EventBus,
  ) {
    bus.subscribe(USER_UPDATED_TOPIC, (m) => this.forget(m?.userId));
    bus.subscribe(AUTH_INVALIDATION_TOPIC, (m) => (m?.all ? this.forgetAll() : this.forget(m?.userId)));
    bus.onGap(USER_UPDATED_TOPIC, () => this.forgetAll());
    bus.onGap(AUTH_INVALIDATION_TOPIC, () => this.forgetAll());
  }

  /** Synchronous on a hit, so `GET /users/@me` pays no promise on its hot path. */
  status(userId: string): MfaStatus | Promise<MfaStatus> {
    return this.cache.get(userId) ?? this.load(userId);
  }

  private async load(userId: string): Promise<MfaStatus> {
    const seen = this.cache.version;
    const status = await this.mfa.status(userId);
    this.cache.setIfUnchanged(userId, status, seen);
    return status;
  }

  private forget(userId: string | undefined): void {
    if (userId) this.cache.delete(userId);
  }

  private forgetAll(): void {
    this.cache.clear();
  }
}
