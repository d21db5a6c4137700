/**
 * The time every expiry is measured against. Test mode can shift it (`POST /test/clock`) so that
 * JWTs, tickets, tokens, bans and buckets can be expired without waiting.
 */
export interface Clock {
  now(): number;
}

export class ShiftableClock implements Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  setOffset(offsetMs: number): void {
    this.offsetMs = offsetMs;
  }
}
