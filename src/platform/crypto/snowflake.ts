/** Discord's epoch (2015-01-01Z), so that Discord-style libraries decode our timestamps correctly. */
export const SNOWFLAKE_EPOCH_MS = 1420070400000n;
const MAX_SNOWFLAKE = (1n << 63n) - 1n;

/**
 * Snowflakes: bits 62–22 milliseconds since the epoch, 21–12 worker, 11–0 sequence; never decreasing per worker.
 */
export class SnowflakeGenerator {
  private lastMs = 0n;
  private sequence = 0n;
  private readonly worker: bigint;

  constructor(
    workerId: number,
    private readonly now: () => number = Date.now,
  ) {
    this.worker = BigInt(workerId & 0x3ff);
  }

  next(): string {
    let ms = BigInt(this.now()) - SNOWFLAKE_EPOCH_MS;
    if (ms < this.lastMs) ms = this.lastMs;
    if (ms === this.lastMs) {
      this.sequence = (this.sequence + 1n) & 0xfffn;
      if (this.sequence === 0n) ms = this.lastMs + 1n;
    } else {
      this.sequence = 0n;
    }
    this.lastMs = ms;
    return ((ms << 22n) | (this.worker << 12n) | this.sequence).toString();
  }

  /** The smallest snowflake at a moment: used for back-dated seeds and time-based cursors. */
  static atTime(ms: number, sequence = 0): string {
    return (((BigInt(ms) - SNOWFLAKE_EPOCH_MS) << 22n) | BigInt(sequence & 0xfff)).toString();
  }
}

export function snowflakeTimestamp(id: string): number {
  return Number((BigInt(id) >> 22n) + SNOWFLAKE_EPOCH_MS);
}

export type SnowflakeCheck = { ok: true; value: string } | { ok: false; reason: 'format' | 'range' };

/** True for a decimal id that fits a snowflake (≤ 2^63−1): the check every id takes before it reaches SQL. */
export function isSnowflake(text: string): boolean {
  return parseSnowflake(text).ok;
}

/** Accepts a digit string or a JSON integer, as docs/conventions.md#ids-and-time allows. */
export function parseSnowflake(input: unknown): SnowflakeCheck {
  let text: string;
  if (typeof input === 'string') text = input;
  else if (typeof input === 'number' && Number.isInteger(input) && input >= 0) text = String(input);
  else return { ok: false, reason: 'format' };
  if (!/^\d+$/.test(text)) return { ok: false, reason: 'format' };
  // A number of any length is well formed; past 19 significant digits it is past 2^63−1 without converting it.
  const digits = text.replace(/^0+(?=\d)/, '');
  if (digits.length > 19) return { ok: false, reason: 'range' };
  const value = BigInt(digits);
  if (value > MAX_SNOWFLAKE) return { ok: false, reason: 'range' };
  return { ok: true, value: value.toString() };
}
