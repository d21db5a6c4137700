import type { RateLimiter } from '../platform/state/rate-limiter.ts';
import { allowanceExceeded } from './errors.ts';
import type { RequestContext } from './route.ts';

/**
 * Handler-level allowances (docs/conventions.md#rate-limits: per email, per IP, per account). Same 429 body as the route
 * buckets, without `X-RateLimit-Bucket`; off in test mode unless the request asks for strict behaviour.
 */
export async function enforceAllowance(
  limiter: RateLimiter,
  ctx: Pick<RequestContext, 'request' | 'now'>,
  key: string,
  limit: number,
  windowMs: number,
): Promise<void> {
  if (!ctx.request.hearth.strict) return;
  const decision = await limiter.consume(`allowance:${key}`, limit, windowMs, ctx.now);
  if (!decision.allowed) throw allowanceExceeded(limit, decision.retryAfterMs, decision.resetAfterMs, ctx.now);
}
