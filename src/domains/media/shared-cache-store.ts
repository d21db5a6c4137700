import type { Database, Queryable } from '../../platform/db/database.ts';

/** Old entries looked at per query when making room. */
const EVICTION_BATCH = 100;

/**
 * The rows behind the media proxy's shared byte budget (migrations 0210, 0211; docs/media.md#external-media-cache):
 * one per stored object `{bucket}/{key}` in `external_cache_entries` (its size, when it was stored, when it
 * expires) and their total in the one row of `external_cache_usage`. Every change locks that row first, so two
 * processes storing at once see each other's bytes. Answers name objects as `{bucket}/{key}`.
 */
export class SharedCacheStore {
  constructor(private readonly db: Database) {}

  /**
   * Counts `bytes` for `{bucket}/{key}` (replacing its previous row), first removing the oldest stored rows until
   * the total fits `budgetBytes`; answers the objects whose rows went.
   */
  reserve(
    bucket: string,
    key: string,
    bytes: number,
    budgetBytes: number,
    storedAt: number,
    expiresAt: number,
  ): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      let total = (await lockUsage(tx)) - (await deleteEntry(tx, bucket, key));
      const gone: string[] = [];
      while (total + bytes > budgetBytes) {
        const oldest = await tx.query<{ bucket: string; key: string; bytes: unknown }>(
          'SELECT bucket, key, bytes FROM external_cache_entries ORDER BY stored_at, key LIMIT $1',
          [EVICTION_BATCH],
        );
        if (oldest.length === 0) {
          // Nothing left to remove: the total was off (it cannot be while every change goes through here).
          total = 0;
          break;
        }
        const chosen: string[] = [];
        for (const row of oldest) {
          if (total + bytes <= budgetBytes) break;
          chosen.push(`${row.bucket}/${row.key}`);
          total -= Number(row.bytes);
        }
        await tx.query("DELETE FROM external_cache_entries WHERE bucket || '/' || key = ANY($1::text[])", [chosen]);
        gone.push(...chosen);
      }
      await tx.query(
        'INSERT INTO external_cache_entries (bucket, key, bytes, stored_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [bucket, key, bytes, new Date(storedAt), new Date(expiresAt)],
      );
      await setUsage(tx, total + bytes);
      return gone;
    });
  }

  /** Gives back what `{bucket}/{key}` counted (its object could not be written). */
  release(bucket: string, key: string): Promise<void> {
    return this.db.transaction(async (tx) => {
      const total = await lockUsage(tx);
      await setUsage(tx, Math.max(0, total - (await deleteEntry(tx, bucket, key))));
    });
  }

  /** Removes up to `limit` rows whose time is up, soonest first, and their bytes from the total; answers their objects. */
  deleteExpired(now: number, limit: number): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      const usage = await lockUsage(tx);
      const rows = await tx.query<{ bucket: string; key: string; bytes: unknown }>(
        `DELETE FROM external_cache_entries WHERE (bucket, key) IN (
           SELECT bucket, key FROM external_cache_entries WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
         ) RETURNING bucket, key, bytes`,
        [new Date(now), limit],
      );
      if (rows.length > 0) await setUsage(tx, Math.max(0, usage - sumBytes(rows)));
      return rows.map((row) => `${row.bucket}/${row.key}`);
    });
  }
}

/** Locks the one row holding the entries' total and returns it. */
async function lockUsage(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ bytes: unknown }>('SELECT bytes FROM external_cache_usage WHERE id = 1 FOR UPDATE');
  return Number(row?.bytes ?? 0);
}

function setUsage(tx: Queryable, bytes: number): Promise<unknown> {
  return tx.query('UPDATE external_cache_usage SET bytes = $1 WHERE id = 1', [bytes]);
}

/** Deletes the row of `{bucket}/{key}` if any; answers the bytes it counted. */
async function deleteEntry(tx: Queryable, bucket: string, key: string): Promise<number> {
  return sumBytes(
    await tx.query('DELETE FROM external_cache_entries WHERE bucket = $1 AND key = $2 RETURNING bytes', [bucket, key]),
  );
}

function sumBytes(rows: { bytes?: unknown }[]): number {
  return rows.reduce((sum, row) => sum + Number(row.bytes), 0);
}
