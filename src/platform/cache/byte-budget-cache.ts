/**
 * A least-recently-used map of byte payloads held within a byte budget: an entry above `maxEntryBytes` is not
 * kept, the least recently used go first when the budget is passed, and an entry may carry an expiry after which
 * it is dropped on read (the media proxy's derived images and fetched external media, docs/media.md).
 */
export class ByteBudgetCache<V extends { bytes: Buffer }> {
  /** Insertion order is recency: a read moves an entry to the end. */
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private held = 0;

  constructor(
    readonly budgetBytes: number,
    readonly maxEntryBytes: number,
  ) {}

  /** Bytes held. */
  get size(): number {
    return this.held;
  }

  /** The entry for `key` unless it has expired at `now` (then it is dropped). */
  get(key: string, now = 0): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) {
      this.held -= entry.value.bytes.length;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` until `expiresAt` (for good by default), replacing an earlier one, evicting the oldest. */
  set(key: string, value: V, expiresAt = Number.POSITIVE_INFINITY): void {
    if (value.bytes.length > this.maxEntryBytes) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.held -= previous.value.bytes.length;
    }
    this.entries.set(key, { value, expiresAt });
    this.held += value.bytes.length;
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.held -= entry.value.bytes.length;
    }
  }
}
