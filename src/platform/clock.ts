/**
 * The time every expiry is measured against. Test mode can shift it (`POST /test/clock`) so that
 * JWTs, tickets, tokens, bans and buckets can be expired without waiting.
 */
export interface Clock {
  now(): number;
}

export class ShiftableClock implements Clock {
  private offsetMs = 0;
  /** Set while frozen: the instant `now()` keeps answering (tests that must not depend on machine load). */
  private frozenAt: number | undefined;

  now(): number {
    return this.frozenAt ?? Date.now() + this.offsetMs;
  }

  /** Shifts the clock; `frozen` stops it at the shifted instant until a call without it. */
  setOffset(offsetMs: number, frozen = false): void {
    this.offsetMs = offsetMs;
    this.frozenAt = frozen ? Date.now() + offsetMs : undefined;
  }
}
