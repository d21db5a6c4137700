import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';

/** Where uploaded and processed objects live: the local filesystem by default, S3-compatible when configured. */
export interface ObjectStore {
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined>;
  size(key: string): Promise<number | undefined>;
  delete(key: string): Promise<void>;
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
    await writeFile(path, bytes);
    await writeFile(`${path}.type`, contentType);
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
}
