import type { Database } from '../../platform/db/database.ts';
import { type ObjectStore, readBounded } from '../../platform/storage/object-store.ts';
import { SharedCacheStore } from './shared-cache-store.ts';

/**
 * What the media proxy keeps in the object store every node shares (docs/media.md#external-media-cache): external
 * media and resized images, each object one JSON header line then the bytes, their total bounded by one byte
 * budget whose rows `SharedCacheStore` keeps.
 */
export class SharedCacheBudget {
  private readonly rows: SharedCacheStore;

  constructor(
    private readonly objects: ObjectStore,
    db: Database,
    readonly budgetBytes: number,
  ) {
    this.rows = new SharedCacheStore(db);
  }

  /**
   * Writes `body` to `{bucket}/{key}` until `expiresAt` (nothing when above the whole budget). Its size is
   * accounted first, removing the oldest stored entries until the total fits the budget, then the object is
   * written; a failed write gives its share back.
   */
  async store(bucket: string, key: string, body: Buffer, now: number, expiresAt: number): Promise<void> {
    if (body.length > this.budgetBytes) return;
    const evicted = await this.rows.reserve(bucket, key, body.length, this.budgetBytes, now, expiresAt);
    // Rows first, objects after: a failure in between leaves an object nothing counts, which is ignored once
    // expired and deleted by the janitor's day-old sweep; never bytes counted twice.
    for (const gone of evicted) await this.objects.delete(gone);
    try {
      await this.objects.put(`${bucket}/${key}`, body, 'application/octet-stream');
    } catch (error) {
      await this.rows.release(bucket, key);
      throw error;
    }
  }
}

/**
 * Removes shared entries (external media and resized images) whose time is up: their rows, their bytes from the
 * total, then their objects; up to `batchSize` × `maxBatches` a pass; returns how many went. Safe to run from
 * several processes at once.
 */
export async function sweepExpiredSharedCache(
  db: Database,
  objects: ObjectStore,
  now: number,
  batchSize: number,
  maxBatches: number,
): Promise<number> {
  const rows = new SharedCacheStore(db);
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch += 1) {
    const keys = await rows.deleteExpired(now, batchSize);
    for (const key of keys) await objects.delete(key);
    total += keys.length;
    if (keys.length < batchSize) break;
  }
  return total;
}

/** A stored entry's body: its header as one JSON line, then the bytes; undefined when the header is too long. */
export function entryBody(header: object, bytes: Buffer, maxHeaderBytes: number): Buffer | undefined {
  const line = JSON.stringify(header);
  if (Buffer.byteLength(line) >= maxHeaderBytes) return undefined;
  return Buffer.concat([Buffer.from(`${line}\n`), bytes]);
}

/**
 * The stored entry at `key`, its header parsed (still to be checked by the caller) and its bytes; undefined when
 * there is none, it is larger than the bounds, or its header line is missing or not JSON. Never reads past the bounds.
 */
export async function readEntry(
  objects: ObjectStore,
  key: string,
  maxBytes: number,
  maxHeaderBytes: number,
): Promise<{ header: unknown; bytes: Buffer } | undefined> {
  const info = await objects.stat(key);
  if (!info || info.size > maxBytes + maxHeaderBytes) return undefined;
  const stream = await objects.readStream(key);
  if (!stream) return undefined;
  const raw = await readBounded(stream, maxBytes + maxHeaderBytes);
  const end = raw.subarray(0, maxHeaderBytes).indexOf(0x0a);
  if (end < 0) return undefined;
  try {
    return { header: JSON.parse(raw.subarray(0, end).toString('utf8')), bytes: raw.subarray(end + 1) };
  } catch {
    return undefined;
  }
}
