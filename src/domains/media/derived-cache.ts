import { sha256Hex } from '../../platform/crypto/tokens.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { DERIVED_CACHE_BUCKET } from './buckets.ts';
import { MAX_KEEP_MS } from './external-cache.ts';
import { entryBody, readEntry, type SharedCacheBudget } from './shared-cache.ts';

/** The metadata line before the bytes of a stored resized image; at most this long. */
const MAX_HEADER_BYTES = 1024;

/**
 * Resized images every node shares through the object store (docs/media.md#resized-images):
 * `derived-cache/<SHA-256 of the entity tag>`, one JSON line (`tag`, `type`) then the bytes. The tag names the
 * original's key, size and version, the encoder and the options, so an entry never goes stale; each is kept a
 * day, within the media proxy's shared byte budget.
 */
export class StoredDerivedImages {
  constructor(
    private readonly objects: ObjectStore,
    private readonly budget: SharedCacheBudget,
    readonly maxEntryBytes: number,
  ) {}

  /** The stored image for `tag`, or undefined (none, or unreadable). */
  async get(tag: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    const stored = await readEntry(
      this.objects,
      `${DERIVED_CACHE_BUCKET}/${sha256Hex(tag)}`,
      this.maxEntryBytes,
      MAX_HEADER_BYTES,
    );
    const header = (stored?.header ?? {}) as { tag?: unknown; type?: unknown };
    if (!stored || header.tag !== tag || typeof header.type !== 'string') return undefined;
    return { bytes: stored.bytes, contentType: header.type };
  }

  /** Stores the image made for `tag` for a day (nothing above the entry bound). */
  async set(tag: string, image: { bytes: Buffer; contentType: string }, now: number): Promise<void> {
    if (image.bytes.length > this.maxEntryBytes) return;
    const body = entryBody({ tag, type: image.contentType }, image.bytes, MAX_HEADER_BYTES);
    if (!body) return;
    await this.budget.store(DERIVED_CACHE_BUCKET, sha256Hex(tag), body, now, now + MAX_KEEP_MS);
  }
}
