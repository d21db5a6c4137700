import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where uploaded and processed objects live: the local filesystem by default, S3-compatible when configured. */
export interface ObjectStore {
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /**
   * Stores a stream without holding it whole: memory stays bounded by a chunk (local) or one multipart part
   * (S3). Resolves with the byte count once the object exists; a source that errors, or passes `maxBytes`
   * (`ObjectTooLargeError`), leaves no object behind.
   */
  putStream(
    key: string,
    source: AsyncIterable<Buffer | string>,
    contentType: string,
    maxBytes: number,
  ): Promise<number>;
  get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined>;
  /** An object's byte size and stored type without reading it; undefined when it does not exist. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  /**
   * The object's bytes as a stream, whole or `range` (inclusive offsets, within the size `stat` gave): memory
   * stays bounded by a chunk however large the object. Undefined when it does not exist.
   */
  readStream(key: string, range?: ByteRange): Promise<Readable | undefined>;
  /** Up to the first `length` bytes of an object (image sniffing without reading it whole). */
  head(key: string, length: number): Promise<Buffer | undefined>;
  size(key: string): Promise<number | undefined>;
  /** Renames an object (its stored type goes with it); the old key is gone afterwards. */
  move(from: string, to: string, contentType: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Up to `limit` keys under `prefix/` last written before `before` (ms), for sweeping what a crashed process
   * left behind (staged uploads). On the local store, a half-written file of a crashed `putStream` is listed
   * too (its name is a valid key), so deleting what is listed removes it.
   */
  keysOlderThan(prefix: string, before: number, limit: number): Promise<string[]>;
}

export interface ObjectInfo {
  size: number;
  contentType: string;
  /** When the object was last written, in ms since the epoch (file mtime; S3 `LastModified`). */
  modified: number;
  /**
   * Changes whenever the object is written again, read from the same metadata as the size (the file's mtime in
   * nanoseconds and inode; the S3 `ETag`): with the key and size it derives the object's HTTP validator without
   * reading its bytes (docs/media.md#conditional-requests).
   */
  version: string;
}

/** Inclusive byte offsets, as in an HTTP `Range` header. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A streamed object passed its byte bound; nothing was stored. */
export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
  }
}

/** Counts bytes through a stream and fails it once they pass `maxBytes`. */
export async function* boundedChunks(source: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += buffer.length;
    if (total > maxBytes) throw new ObjectTooLargeError(maxBytes);
    yield buffer;
  }
}

/** A stream read whole into one buffer, failing with `ObjectTooLargeError` (and destroying it) past `maxBytes`. */
export async function readBounded(source: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of boundedChunks(source, maxBytes)) {
      chunks.push(chunk);
      length += chunk.length;
    }
  } catch (error) {
    source.destroy();
    throw error;
  }
  return Buffer.concat(chunks, length);
}

/** Keys are slash-separated; every segment is checked so a key can never leave the root. */
export function isSafeKey(key: string): boolean {
  return (
    key.length > 0 &&
    key.length <= 1024 &&
    key.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\\') && !s.includes('\0'))
  );
}

export class LocalObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    if (!isSafeKey(key)) throw new Error('unsafe object key');
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error('unsafe object key');
    return path;
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Written beside the object then renamed, as `putStream` does: readers never see half an object, and each
    // write is a new inode, so the object's `version` changes even within the clock's granularity.
    const partial = `${path}.~partial-${randomBytes(6).toString('hex')}`;
    try {
      await writeFile(partial, bytes, { flag: 'wx' });
      await writeFile(`${path}.type`, contentType);
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async putStream(
    key: string,
    source: AsyncIterable<Buffer | string>,
    contentType: string,
    maxBytes: number,
  ): Promise<number> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Written beside the object under a random name, then renamed: readers never see half an object, and a
    // failed upload leaves nothing.
    const partial = `${path}.~partial-${randomBytes(6).toString('hex')}`;
    let size = 0;
    try {
      await pipeline(
        boundedChunks(source, maxBytes),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(partial, { flags: 'wx' }),
      );
      await writeFile(`${path}.type`, contentType);
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return size;
  }

  async head(key: string, length: number): Promise<Buffer | undefined> {
    if (!isSafeKey(key)) return undefined;
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(this.pathOf(key), 'r');
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return buffer.subarray(0, bytesRead);
    } catch {
      return undefined;
    } finally {
      await handle?.close();
    }
  }

  async move(from: string, to: string, contentType: string): Promise<void> {
    const source = this.pathOf(from);
    const target = this.pathOf(to);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(`${target}.type`, contentType);
    await rename(source, target);
    await rm(`${source}.type`, { force: true });
  }

  async get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    if (!isSafeKey(key)) return undefined;
    const path = this.pathOf(key);
    try {
      const [bytes, contentType] = await Promise.all([
        readFile(path),
        readFile(`${path}.type`, 'utf8').catch(() => 'application/octet-stream'),
      ]);
      return { bytes, contentType };
    } catch {
      return undefined;
    }
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    if (!isSafeKey(key)) return undefined;
    const path = this.pathOf(key);
    try {
      const [info, contentType] = await Promise.all([
        stat(path, { bigint: true }),
        readFile(`${path}.type`, 'utf8').catch(() => 'application/octet-stream'),
      ]);
      if (!info.isFile()) return undefined;
      return {
        size: Number(info.size),
        contentType,
        modified: Number(info.mtimeMs),
        version: `${info.mtimeNs}.${info.ino}`,
      };
    } catch {
      return undefined;
    }
  }

  async readStream(key: string, range?: ByteRange): Promise<Readable | undefined> {
    if (!isSafeKey(key)) return undefined;
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch {
      return undefined;
    }
    // The stream owns the handle: it is closed when the stream ends, fails or is destroyed.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async size(key: string): Promise<number | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    if (!isSafeKey(key)) return;
    const path = this.pathOf(key);
    await rm(path, { force: true });
    await rm(`${path}.type`, { force: true });
  }

  async keysOlderThan(prefix: string, before: number, limit: number): Promise<string[]> {
    if (!isSafeKey(prefix)) return [];
    const dir = this.pathOf(prefix);
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    const keys: string[] = [];
    for (const entry of entries) {
      if (keys.length >= limit) break;
      if (!entry.isFile() || entry.name.endsWith('.type')) continue;
      const path = join(entry.parentPath, entry.name);
      const modified = await stat(path).then(
        (s) => s.mtimeMs,
        () => undefined,
      );
      if (modified !== undefined && modified < before)
        keys.push(
          path
            .slice(this.root.length + 1)
            .split(sep)
            .join('/'),
        );
    }
    return keys;
  }
}
