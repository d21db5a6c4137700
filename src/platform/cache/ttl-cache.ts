/** A bounded map whose entries expire; the oldest entries go first when it is full. */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  private removals = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V, ttlMs = this.ttlMs): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  /**
   * Counts invalidations (`delete`, `deleteWhere`, `clear`). A loader notes it before reading the source and
   * caches with `setIfUnchanged`, so a read that raced an invalidation is answered but never cached.
   */
  get version(): number {
    return this.removals;
  }

  setIfUnchanged(key: K, value: V, seenVersion: number, ttlMs = this.ttlMs): void {
    if (seenVersion === this.removals) this.set(key, value, ttlMs);
  }

  delete(key: K): void {
    this.removals += 1;
    this.entries.delete(key);
  }

  deleteWhere(predicate: (value: V, key: K) => boolean): void {
    this.removals += 1;
    for (const [key, entry] of this.entries) if (predicate(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.removals += 1;
    this.entries.clear();
  }
}
