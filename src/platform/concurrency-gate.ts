/**
 * Bounds work held in memory at once (uploads being buffered, media-proxy fetches): at most `total` at a
 * time in this process and at most `perKey` for one caller. `tryEnter` never waits; a caller over either
 * bound is refused, so a burst cannot queue up unbounded work.
 */
export class ConcurrencyGate {
  private active = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    readonly total: number,
    readonly perKey: number,
  ) {}

  /** A release function (call it exactly once), or `undefined` when a bound is reached. */
  tryEnter(key: string): (() => void) | undefined {
    const mine = this.byKey.get(key) ?? 0;
    if (this.active >= this.total || mine >= this.perKey) return undefined;
    this.active++;
    this.byKey.set(key, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const left = (this.byKey.get(key) ?? 1) - 1;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
    };
  }

  get inUse(): number {
    return this.active;
  }
}
