/** The outcome of `SlotStore.acquire`: `evicted` names the idle member that made room, if one had to. */
export type SlotDecision = { admitted: true; evicted?: string } | { admitted: false };

export interface SlotRef {
  key: string;
  member: string;
}

/**
 * Bounded sets counted across every process (gateway sockets per address, sessions per account,
 * docs/gateway.md#across-nodes). A member holds its slot until released, or until its lease lapses without
 * being renewed (the process that held it died). A held slot may be marked idle (a gateway session without a
 * socket): an acquire at the limit may then evict the member idle the longest instead of refusing.
 * Every operation is atomic in both backends. Times are Unix ms supplied by the caller.
 */
export interface SlotStore {
  /** Takes a slot for `member` unless `limit` are held; taking one's own slot again renews it and ends idling. */
  acquire(key: string, member: string, limit: number, options: SlotOptions): Promise<SlotDecision>;
  release(key: string, member: string): Promise<void>;
  /** Marks a held slot idle since `since` (only compared with other members' `since`). */
  idle(key: string, member: string, since: number, options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<void>;
  /** Ends idling and renews; false when the slot is no longer held (evicted, lapsed or released). */
  busy(key: string, member: string, options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<boolean>;
  /** Renews the leases of the slots still held among `slots` (the others stay gone). */
  renew(slots: readonly SlotRef[], options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<void>;
  /** Slots held in `key` at `now`. */
  count(key: string, now: number): Promise<number>;
  /** Forgets every slot (test harness). */
  reset(): Promise<void>;
}

export interface SlotOptions {
  now: number;
  /** The slot lapses this long after its last acquire, busy or renew. */
  leaseMs: number;
  /** At the limit, evict the member idle the longest instead of refusing. */
  evictIdle?: boolean;
}

interface Held {
  expiresAt: number;
  idleSince: number | undefined;
}

export class InProcessSlotStore implements SlotStore {
  private readonly sets = new Map<string, Map<string, Held>>();

  /** The key's unlapsed slots (a new empty set is only stored by `acquire`). */
  private live(key: string, now: number): Map<string, Held> {
    const set = this.sets.get(key);
    if (!set) return new Map();
    for (const [member, held] of set) if (held.expiresAt <= now) set.delete(member);
    if (set.size === 0) this.sets.delete(key);
    return set;
  }

  async acquire(key: string, member: string, limit: number, options: SlotOptions): Promise<SlotDecision> {
    const set = this.live(key, options.now);
    let evicted: string | undefined;
    if (!set.has(member) && set.size >= limit) {
      if (!options.evictIdle) return { admitted: false };
      let oldest: [string, number] | undefined;
      for (const [other, held] of set)
        if (held.idleSince !== undefined && (!oldest || held.idleSince < oldest[1])) oldest = [other, held.idleSince];
      if (!oldest) return { admitted: false };
      set.delete(oldest[0]);
      evicted = oldest[0];
    }
    set.set(member, { expiresAt: options.now + options.leaseMs, idleSince: undefined });
    this.sets.set(key, set);
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  async release(key: string, member: string): Promise<void> {
    const set = this.sets.get(key);
    if (!set) return;
    set.delete(member);
    if (set.size === 0) this.sets.delete(key);
  }

  async idle(key: string, member: string, since: number, options: Pick<SlotOptions, 'now'>): Promise<void> {
    const held = this.live(key, options.now).get(member);
    if (held) held.idleSince = since;
  }

  async busy(key: string, member: string, options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<boolean> {
    const held = this.live(key, options.now).get(member);
    if (!held) return false;
    held.idleSince = undefined;
    held.expiresAt = options.now + options.leaseMs;
    return true;
  }

  async renew(slots: readonly SlotRef[], options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<void> {
    for (const { key, member } of slots) {
      const held = this.sets.get(key)?.get(member);
      if (held && held.expiresAt > options.now) held.expiresAt = options.now + options.leaseMs;
    }
  }

  async count(key: string, now: number): Promise<number> {
    return this.live(key, now).size;
  }

  async reset(): Promise<void> {
    this.sets.clear();
  }
}
