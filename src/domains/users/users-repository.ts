import { toUserRecord, type UserRecord, type UserRow, type UserSnapshots } from '../../identity/user-record.ts';
import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Queryable } from '../../platform/db/database.ts';

/**
 * Reads users by id through a short-lived cache (the auth hot path); every write goes through `forget`
 * (via `CredentialResolver.invalidate`) so a cached snapshot never outlives a change by more than the bus delay.
 */
export class UsersRepository implements UserSnapshots {
  private readonly cache = new TtlCache<string, UserRecord>(50_000, 30_000);

  constructor(private readonly db: Queryable) {}

  async findById(id: string, options: { fresh?: boolean } = {}): Promise<UserRecord | undefined> {
    if (!options.fresh) {
      const hit = this.cache.get(id);
      if (hit) return hit;
    }
    const seen = this.version;
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    return row ? this.remember(row, seen) : undefined;
  }

  /** Counts invalidations; note it before reading a user row that `remember` may cache. */
  get version(): number {
    return this.cache.version;
  }

  /** A user row read by any query (the session look-up joins it), cached unless a change raced the read. */
  remember(row: UserRow, seenVersion: number): UserRecord {
    const user = toUserRecord(row);
    this.cache.setIfUnchanged(user.id, user, seenVersion);
    return user;
  }

  /** The cached snapshot only, without a query: lets the credential hot path stay synchronous on a hit. */
  cached(id: string): UserRecord | undefined {
    return this.cache.get(id);
  }

  async findByEmail(email: string, db: Queryable = this.db): Promise<UserRecord | undefined> {
    const [row] = await db.query<UserRow>('SELECT * FROM users WHERE lower(email) = lower($1)', [email]);
    return row ? toUserRecord(row) : undefined;
  }

  forget(id: string): void {
    this.cache.delete(id);
  }

  forgetAll(): void {
    this.cache.clear();
  }
}
