import { sha256Hex } from '../../platform/crypto/tokens.ts';
import { type ObjectStore, readBounded } from '../../platform/storage/object-store.ts';
import { DERIVED_CACHE_BUCKET } from './buckets.ts';
import { MAX_KEEP_MS, type SharedCacheBudget } from './external-cache.ts';

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
    const key = `${DERIVED_CACHE_BUCKET}/${sha256Hex(tag)}`;
    const info = await this.objects.stat(key);
    if (!info || info.size > this.maxEntryBytes + MAX_HEADER_BYTES) return undefined;
    const stream = await this.objects.readStream(key);
    if (!stream) return undefined;
    const raw = await readBounded(stream, this.maxEntryBytes + MAX_HEADER_BYTES);
    const end = raw.subarray(0, MAX_HEADER_BYTES).indexOf(0x0a);
    if (end < 0) return undefined;
    let header: { tag?: unknown; type?: unknown };
    try {
      header = JSON.parse(raw.subarray(0, end).toString('utf8')) as { tag?: unknown; type?: unknown };
    } catch {
      return undefined;
    }
    if (header.tag !== tag || typeof header.type !== 'string') return undefined;
    return { bytes: raw.subarray(end + 1), contentType: header.type };
  }

  /** Stores the image made for `tag` for a day (nothing above the entry bound). */
  async set(tag: string, image: { bytes: Buffer; contentType: string }, now: number): Promise<void> {
    if (image.bytes.length > this.maxEntryBytes) return;
    const header = JSON.stringify({ tag, type: image.contentType });
    if (Buffer.byteLength(header) >= MAX_HEADER_BYTES) return;
    const body = Buffer.concat([Buffer.from(`${header}\n`), image.bytes]);
    await this.budget.store(DERIVED_CACHE_BUCKET, sha256Hex(tag), body, now, now + MAX_KEEP_MS);
  }
}
