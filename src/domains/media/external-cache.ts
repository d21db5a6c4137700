import { ByteBudgetCache } from '../../platform/cache/byte-budget-cache.ts';
import { sha256Hex } from '../../platform/crypto/tokens.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { EXTERNAL_CACHE_BUCKET } from './buckets.ts';
import { entryBody, readEntry, type SharedCacheBudget } from './shared-cache.ts';

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
 * ones until it fits; an entry above the budget is not stored. `sweepExpiredSharedCache` (the janitor) removes
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
    const stored = await readEntry(this.objects, key, this.maxEntryBytes, MAX_HEADER_BYTES);
    if (!stored) return undefined;
    const entry = (stored.header ?? {}) as {
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
        bytes: stored.bytes,
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
    const body = entryBody(
      {
        url,
        expires_at: expiresAt,
        etag: media.etag,
        type: media.sniffedType ?? null,
        last_modified: media.lastModified ?? null,
      },
      media.bytes,
      MAX_HEADER_BYTES,
    );
    if (!body) return;
    await this.budget.store(EXTERNAL_CACHE_BUCKET, sha256Hex(url), body, now, expiresAt);
  }
}
