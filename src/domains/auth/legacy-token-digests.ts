import type { Queryable } from '../../platform/db/database.ts';

/**
 * Digests of the session and bot tokens issued before keyed check parts existed (migration 0091,
 * docs/accounts.md#token-check): those tokens have no check part to prove them, so the session and bot credential kinds
 * let these through to the database. Read once at start.
 */
export class LegacyTokenDigests {
  private digests: ReadonlySet<string> = new Set();

  constructor(private readonly db: Queryable) {}

  async load(): Promise<void> {
    const rows = await this.db.query<{ token_hash: string }>('SELECT token_hash FROM legacy_token_digests');
    this.digests = new Set(rows.map((row) => row.token_hash));
  }

  has(tokenHash: string): boolean {
    return this.digests.has(tokenHash);
  }
}
