import type { AppServices } from '../../app-services.ts';
import type { Config } from '../../config/config.ts';
import type { Principal } from '../../identity/principal.ts';
import { sha256Hex } from '../../platform/crypto/tokens.ts';
import { rateLimited } from '../errors.ts';
import type { AnyRoute } from '../route.ts';

export interface RateLimitDeps extends Pick<AppServices, 'rateLimiter'> {
  config: Pick<Config, 'rateLimitOverrides'>;
}

export const GLOBAL_LIMIT = 50;
export const HIGH_GLOBAL_LIMIT = 1200;
const RATE_LIMIT_BYPASS = 1n << 47n;
const HIGH_GLOBAL_RATE_LIMIT = 1n << 33n;

/** Who a bucket counts: the user and credential kind (and the application for a bearer), else the client address key. */
export function rateLimitIdentity(principal: Principal | undefined, ipKey: string): string {
  return principal
    ? `${principal.kind}:${principal.user.id}${principal.kind === 'bearer' ? `:${principal.applicationId}` : ''}`
    : `ip:${ipKey}`;
}

/** The key of a route's own bucket: per resource when it names key params (shared by every caller), else per identity. */
export function routeBucketKey(
  spec: NonNullable<AnyRoute['rateLimit']>,
  params: Record<string, string>,
  identity: string,
): string {
  const keyPart = (spec.keyParams ?? []).map((p) => params[p] ?? '').join(':');
  return `${spec.bucket}:${keyPart}:${spec.keyParams?.length ? '' : identity}`;
}

/**
 * Step 4 (docs/conventions.md#rate-limits): the global bucket (50/s per identity, 1200/s with the high-limit
 * flag), then the route's bucket. Throws the 429; returns the `X-RateLimit-*` headers the caller shows (bots,
 * and shared credential-free buckets), else undefined.
 */
export async function rateLimit(
  deps: RateLimitDeps,
  spec: Pick<AnyRoute, 'rateLimit' | 'policy'>,
  params: Record<string, string>,
  principal: Principal | undefined,
  ipKey: string,
  now: number,
  /** A self-parsing route (`/gateway/bot`, `/applications/@me`) called with a `Bot` credential: it shows them too. */
  selfParsedBot = false,
): Promise<Record<string, string> | undefined> {
  const flags = principal?.user.flags ?? 0n;
  if ((flags & RATE_LIMIT_BYPASS) !== 0n) return undefined;
  const identity = rateLimitIdentity(principal, ipKey);
  if (!spec.rateLimit?.exemptFromGlobal && spec.policy !== 'credential-free') {
    const limit = (flags & HIGH_GLOBAL_RATE_LIMIT) !== 0n ? HIGH_GLOBAL_LIMIT : GLOBAL_LIMIT;
    const decision = await deps.rateLimiter.consume(`global:${identity}`, limit, 1000, now);
    if (!decision.allowed) {
      throw rateLimited(decision.retryAfterMs, true, {
        'X-RateLimit-Global': 'true',
        'X-RateLimit-Scope': 'global',
      });
    }
  }
  const rl = spec.rateLimit;
  if (!rl) return undefined;
  const override = deps.config.rateLimitOverrides[rl.bucket];
  const limit = override?.limit ?? rl.limit;
  const windowMs = (override?.windowSeconds ?? rl.windowSeconds) * 1000;
  const decision = await deps.rateLimiter.consume(routeBucketKey(rl, params, identity), limit, windowMs, now);
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(Math.ceil((now + decision.resetAfterMs) / 1000)),
    'X-RateLimit-Reset-After': (decision.resetAfterMs / 1000).toFixed(3),
    'X-RateLimit-Bucket': sha256Hex(rl.bucket).slice(0, 16),
  };
  if (!decision.allowed) {
    throw rateLimited(decision.retryAfterMs, false, {
      ...headers,
      'X-RateLimit-Remaining': '0',
      // `shared`: one bucket for every caller of a resource (webhook execute); otherwise per requester.
      'X-RateLimit-Scope': rl.keyParams?.length ? 'shared' : 'user',
    });
  }
  if (principal?.kind === 'bot' || selfParsedBot || (spec.policy === 'credential-free' && rl.keyParams?.length))
    return headers;
  return undefined;
}
