export interface IpBan {
  ip: string;
  kind: 'manual' | 'automatic';
  /** Unix ms; null = until removed. */
  expiresAt: number | null;
}

/**
 * Authentication-failure counting and automatic bans, shared by every process.
 * Manual bans are durable and live in the database (admin module); this store keeps the automatic ones.
 */
export interface IpBanStore {
  /** Adds a failure to the sliding window and returns the count inside it, atomically. */
  recordFailure(ipKey: string, now: number, windowMs: number): Promise<number>;
  ban(ban: IpBan): Promise<void>;
  /** Asked on every request: an in-process store answers synchronously, so the hot path pays no promise. */
  find(ipKey: string, now: number): IpBan | undefined | Promise<IpBan | undefined>;
  remove(ipKey: string): Promise<void>;
  list(now: number): Promise<IpBan[]>;
  /** Clears failure counters and automatic bans (test harness). */
  reset(): Promise<void>;
}

export class InProcessIpBanStore implements IpBanStore {
  private readonly failures = new Map<string, number[]>();
  private readonly bans = new Map<string, IpBan>();

  async recordFailure(ipKey: string, now: number, windowMs: number): Promise<number> {
    const since = now - windowMs;
    const times = (this.failures.get(ipKey) ?? []).filter((t) => t > since);
    times.push(now);
    this.failures.set(ipKey, times);
    return times.length;
  }

  async ban(ban: IpBan): Promise<void> {
    this.bans.set(ban.ip, ban);
  }

  find(ipKey: string, now: number): IpBan | undefined {
    const ban = this.bans.get(ipKey);
    if (ban && ban.expiresAt !== null && ban.expiresAt <= now) {
      this.bans.delete(ipKey);
      return undefined;
    }
    return ban;
  }

  async remove(ipKey: string): Promise<void> {
    this.bans.delete(ipKey);
    this.failures.delete(ipKey);
  }

  async list(now: number): Promise<IpBan[]> {
    return [...this.bans.values()].filter((ban) => ban.expiresAt === null || ban.expiresAt > now);
  }

  async reset(): Promise<void> {
    this.failures.clear();
    this.bans.clear();
  }
}
