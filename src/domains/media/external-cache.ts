import { ByteBudgetCache } from '../../platform/cache/byte-budget-cache.ts';
import { sha256Hex } from '../../platform/crypto/tokens.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import { type ObjectStore, readBounded } from '../../platform/storage/object-store.ts';
import { EXTERNAL_CACHE_BUCKET } from './buckets.ts';

/**
 * Fetched external media kept for a while (docs/media.md#external-media-cache), so a popular embed image is
 * fetched from its upstream once rather than on every request: in each process's memory (bounded in bytes) and
 * in the object store every node shares, each entry for as long as the upstream's `Cache-Control` allows, clamped.
 */

/** What the proxy answers with for one target: the bytes, the sniffed type and the validators it derived. */
export interface ExternalMedia {
  bytes: Buffer;
  /** The sniffed type, or undefined when the bytes are no known image (served as a download). */
  sniffedType: string | undefined;
  etag: string;
  lastModified: number | undefined;
}

/** The shortest and longest time an entry is kept, whatever the upstream says (a positive max-age). */
export const MIN_KEEP_MS = 5 * 60_000;
export const MAX_KEEP_MS = 24 * 60 * 60_000;
/** How long an answer without a freshness directive is kept (RFC 9111 §4.2.2 allows such a heuristic). */
export const DEFAULT_KEEP_MS = 60 * 60_000;

/**
 * How long a shared cache may keep an answer with this `Cache-Control`, in ms, or 0 for not at all:
 * `no-store`, `private` (meant for one user's cache, not a proxy's), `no-cache` (to be revalidated every time)
 * and a zero age are not kept; `s-maxage` (for shared caches) wins over `max-age`; a positive age is clamped to
 * 5 min – 1 day; none of them → 1 hour. A malformed age counts as absent.
 */
export function keepFor(cacheControl: string | undefined): number {
  let maxAge: number | undefined;
  let sharedMaxAge: number | undefined;
  for (const part of (cacheControl ?? '').split(',')) {
    const [rawName, ...rest] = part.split('=');
    const name = (rawName ?? '').trim().toLowerCase();
    const value = rest
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (name === 'no-store' || name === 'private' || name === 'no-cache') return 0;
    if (name === 'max-age' || name === 's-maxage') {
      if (!/^\d{1,10}$/.test(value)) continue;
      if (name === 'max-age') maxAge = Number(value);
      else sharedMaxAge = Number(value);
    }
  }
  const seconds = sharedMaxAge ?? maxAge;
  if (seconds === undefined) return DEFAULT_KEEP_MS;
  if (seconds === 0) return 0;
  return Math.min(MAX_KEEP_MS, Math.max(MIN_KEEP_MS, seconds * 1000));
}

/** Fetched media by target URL, least recently used first out within a byte budget; entries expire. */
export class ExternalMediaCache {
  private readonly entries: ByteBudgetCache<ExternalMedia>;

  constructor(budgetBytes: number, maxEntryBytes: number) {
    this.entries = new ByteBudgetCache(budgetBytes, maxEntryBytes);
  }

  /** Bytes held. */
  get size(): number {
    return this.entries.size;
  }

  get(url: string, now: number): ExternalMedia | undefined {
    return this.entries.get(url, now);
  }

  /** Keeps `media` for `keepMs` (nothing when 0 or when it is above the entry bound), evicting the oldest. */
  set(url: string, media: ExternalMedia, keepMs: number, now: number): void {
    if (keepMs > 0) this.entries.set(url, media, now + keepMs);
  }
}

/** The metadata line before the bytes of a stored entry; at most this long. */
const MAX_HEADER_BYTES = 4096;

/**
 * Entries every node shares through the object store: `external-cache/<SHA-256 of the URL>`, one JSON line
 * (`url`, `expires_at`, `etag`, `type`, `last_modified`) then the bytes. An entry past its `expires_at` is ignored
 * and deleted when read. Their total size is bounded by a byte budget kept in the database (one row per entry in
 * `external_cache_entries`, the total in `external_cache_usage`): storing an entry removes the oldest stored
 * ones until it fits; an entry above the budget is not stored. `sweepExpiredExternalMedia` (the janitor) removes
 * expired entries, and the janitor deletes whatever object was written more than a day ago (the longest keep).
 */
export class StoredExternalMedia {
  constructor(
    private readonly objects: ObjectStore,
    private readonly budget: SharedCacheBudget,
    readonly maxEntryBytes: number,
  ) {}

  private keyOf(url: string): string {
    return `${EXTERNAL_CACHE_BUCKET}/${sha256Hex(url)}`;
  }

  /** The stored entry for `url` and when it expires, or undefined (none, expired, or unreadable). */
  async get(url: string, now: number): Promise<{ media: ExternalMedia; expiresAt: number } | undefined> {
    const key = this.keyOf(url);
    const info = await this.objects.stat(key);
    if (!info || info.size > this.maxEntryBytes + MAX_HEADER_BYTES) return undefined;
    const stream = await this.objects.readStream(key);
    if (!stream) return undefined;
    const raw = await readBounded(stream, this.maxEntryBytes + MAX_HEADER_BYTES);
    const end = raw.subarray(0, MAX_HEADER_BYTES).indexOf(0x0a);
    if (end < 0) return undefined;
    let header: unknown;
    try {
      header = JSON.parse(raw.subarray(0, end).toString('utf8'));
    } catch {
      return undefined;
    }
    const entry = header as {
      url?: unknown;
      expires_at?: unknown;
      etag?: unknown;
      type?: unknown;
      last_modified?: unknown;
    };
    if (
      entry.url !== url ||
      typeof entry.expires_at !== 'number' ||
      typeof entry.etag !== 'string' ||
      (entry.type !== null && typeof entry.type !== 'string') ||
      (entry.last_modified !== null && typeof entry.last_modified !== 'number')
    )
      return undefined;
    if (entry.expires_at <= now) {
      await this.objects.delete(key);
      return undefined;
    }
    return {
      media: {
        bytes: raw.subarray(end + 1),
        sniffedType: entry.type ?? undefined,
        etag: entry.etag,
        lastModified: entry.last_modified ?? undefined,
      },
      expiresAt: entry.expires_at,
    };
  }

  /**
   * Stores `media` for `url` until `expiresAt` (nothing above the entry bound or the budget). Its size is
   * accounted first, removing the oldest stored entries until the total fits the budget, then the object is
   * written; a failed write gives its share of the budget back.
   */
  async set(url: string, media: ExternalMedia, expiresAt: number, now: number): Promise<void> {
    if (media.bytes.length > this.maxEntryBytes) return;
    const header = JSON.stringify({
      url,
      expires_at: expiresAt,
      etag: media.etag,
      type: media.sniffedType ?? null,
      last_modified: media.lastModified ?? null,
    });
    if (Buffer.byteLength(header) >= MAX_HEADER_BYTES) return;
    const body = Buffer.concat([Buffer.from(`${header}\n`), media.bytes]);
    await this.budget.store(EXTERNAL_CACHE_BUCKET, sha256Hex(url), body, now, expiresAt);
  }
}

/** Old entries looked at per query when making room. */
const EVICTION_BATCH = 100;

/**
 * The byte budget of what the media proxy keeps in the shared object store (docs/media.md#external-media-cache):
 * external media and resized images, each object `{bucket}/{key}` with a row in `external_cache_entries` (its
 * size, when it was stored and when it expires) and their total in the one row of `external_cache_usage`.
 */
export class SharedCacheBudget {
  constructor(
    private readonly objects: ObjectStore,
    private readonly db: Database,
    readonly budgetBytes: number,
  ) {}

  /**
   * Writes `body` to `{bucket}/{key}` until `expiresAt` (nothing when above the whole budget). Its size is
   * accounted first, removing the oldest stored entries until the total fits the budget, then the object is
   * written; a failed write gives its share back.
   */
  async store(bucket: string, key: string, body: Buffer, now: number, expiresAt: number): Promise<void> {
    if (body.length > this.budgetBytes) return;
    const evicted = await this.db.transaction(async (tx) => {
      let total = await lockUsage(tx);
      // The entry replaces its previous version, whose bytes no longer count.
      total -= sumBytes(
        await tx.query('DELETE FROM external_cache_entries WHERE bucket = $1 AND key = $2 RETURNING bytes', [
          bucket,
          key,
        ]),
      );
      const gone: string[] = [];
      while (total + body.length > this.budgetBytes) {
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
          if (total + body.length <= this.budgetBytes) break;
          chosen.push(`${row.bucket}/${row.key}`);
          total -= Number(row.bytes);
        }
        await tx.query("DELETE FROM external_cache_entries WHERE bucket || '/' || key = ANY($1::text[])", [chosen]);
        gone.push(...chosen);
      }
      await tx.query(
        'INSERT INTO external_cache_entries (bucket, key, bytes, stored_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [bucket, key, body.length, new Date(now), new Date(expiresAt)],
      );
      await tx.query('UPDATE external_cache_usage SET bytes = $1 WHERE id = 1', [total + body.length]);
      return gone;
    });
    // Rows first, objects after: a failure in between leaves an object nothing counts, which is ignored once
    // expired and deleted by the janitor's day-old sweep; never bytes counted twice.
    for (const gone of evicted) await this.objects.delete(gone);
    try {
      await this.objects.put(`${bucket}/${key}`, body, 'application/octet-stream');
    } catch (error) {
      await this.db.transaction(async (tx) => {
        const total = await lockUsage(tx);
        const freed = sumBytes(
          await tx.query('DELETE FROM external_cache_entries WHERE bucket = $1 AND key = $2 RETURNING bytes', [
            bucket,
            key,
          ]),
        );
        await tx.query('UPDATE external_cache_usage SET bytes = $1 WHERE id = 1', [Math.max(0, total - freed)]);
      });
      throw error;
    }
  }
}

/**
 * Locks the one row holding the entries' total and returns it: every change to `external_cache_entries` takes
 * this lock first, so two processes storing at once see each other's bytes.
 */
async function lockUsage(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ bytes: unknown }>('SELECT bytes FROM external_cache_usage WHERE id = 1 FOR UPDATE');
  return Number(row?.bytes ?? 0);
}

function sumBytes(rows: { bytes?: unknown }[]): number {
  return rows.reduce((sum, row) => sum + Number(row.bytes), 0);
}

/**
 * Removes shared entries (external media and resized images) whose time is up (their rows, their bytes from the total, then their objects), up to
 * `batchSize` × `maxBatches` a pass; returns how many went. Safe to run from several processes at once.
 */
export async function sweepExpiredExternalMedia(
  db: Database,
  objects: ObjectStore,
  now: number,
  batchSize: number,
  maxBatches: number,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch += 1) {
    const keys = await db.transaction(async (tx) => {
      const usage = await lockUsage(tx);
      const rows = await tx.query<{ bucket: string; key: string; bytes: unknown }>(
        `DELETE FROM external_cache_entries WHERE (bucket, key) IN (
           SELECT bucket, key FROM external_cache_entries WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
         ) RETURNING bucket, key, bytes`,
        [new Date(now), batchSize],
      );
      if (rows.length > 0)
        await tx.query('UPDATE external_cache_usage SET bytes = $1 WHERE id = 1', [
          Math.max(0, usage - sumBytes(rows)),
        ]);
      return rows.map((row) => `${row.bucket}/${row.key}`);
    });
    for (const key of keys) await objects.delete(key);
    total += keys.length;
    if (keys.length < batchSize) break;
  }
  return total;
}
