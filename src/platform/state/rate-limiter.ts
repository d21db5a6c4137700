/** One decision of a leaky bucket (GCRA): atomic, no read-then-write race in either backend. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until a denied request could pass. */
  retryAfterMs: number;
  /** Milliseconds until the bucket is fully drained. */
  resetAfterMs: number;
}

export interface RateLimiter {
  consume(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision>;
  reset(): Promise<void>;
}

/**
 * Below this, a request "early" by the sum of `limit` intervals is rounding, not a burst: with a window that
 * `limit` does not divide (15 in 10 s), `limit` intervals added to an epoch time in milliseconds (about 1.7e12,
 * where one step of a double is 0.24 µs) come to a hair over the window, and the last request of a full burst
 * was refused, `retry_after` 0.001 s. 10 µs is far below any interval a route uses.
 */
export const GCRA_ROUNDING_MS = 0.01;

/** Pure GCRA step shared by the in-process backend and mirrored by the Redis script. */
export function gcra(storedTat: number | undefined, limit: number, windowMs: number, now: number) {
  const interval = windowMs / limit;
  const tat = Math.max(storedTat ?? now, now);
  const newTat = tat + interval;
  const allowAt = newTat - windowMs;
  if (allowAt - now > GCRA_ROUNDING_MS) {
    return {
      tat,
      decision: { allowed: false, limit, remaining: 0, retryAfterMs: allowAt - now, resetAfterMs: tat - now },
    };
  }
  const remaining = Math.max(0, Math.floor((windowMs - (newTat - now)) / interval + GCRA_ROUNDING_MS));
  return { tat: newTat, decision: { allowed: true, limit, remaining, retryAfterMs: 0, resetAfterMs: newTat - now } };
}

export class InProcessRateLimiter implements RateLimiter {
  private readonly tats = new Map<string, number>();
  private sweepAt = 0;

  async consume(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    this.sweep(now);
    const { tat, decision } = gcra(this.tats.get(key), limit, windowMs, now);
    this.tats.set(key, tat);
    return decision;
  }

  async reset(): Promise<void> {
    this.tats.clear();
  }

  /** Drained buckets carry no information; dropping them bounds memory. */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 60_000;
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}
