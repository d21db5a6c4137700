import { TtlCache } from '../../platform/cache/ttl-cache.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { toUserRecord, type UserRecord, type UserRow } from './user-record.ts';

/**
 * Reads users by id through a short-lived cache (the auth hot path); every write goes through `forget`
 * (via `CredentialResolver.invalidate`) so a cached snapshot never outlives a change by more than the bus delay.
 */
export class UsersRepository {
  private readonly cache = new TtlCache<string, UserRecord>(50_000, 30_000);
  /** Bumped by every `forget`: a read that raced a change is answered but not cached. */
  private generation = 0;

  constructor(private readonly db: Queryable) {}

  async findById(id: string, options: { fresh?: boolean } = {}): Promise<UserRecord | undefined> {
    if (!options.fresh) {
      const hit = this.cache.get(id);
      if (hit) return hit;
    }
    const seen = this.generation;
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    if (!row) return undefined;
    return seen === this.generation ? this.remember(row) : toUserRecord(row);
  }

  /** Caches a user row read by another query (the session look-up joins it); the caller checked for races. */
  remember(row: UserRow): UserRecord {
    const user = toUserRecord(row);
    this.cache.set(user.id, user);
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
    this.generation += 1;
    this.cache.delete(id);
  }

  forgetAll(): void {
    this.generation += 1;
    this.cache.clear();
  }
}
