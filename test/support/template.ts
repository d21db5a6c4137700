import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The migrated PGlite template for this set of migrations (rebuilt whenever a migration changes). */
export function templatePath(): string {
  const dir = join(ROOT, 'src/platform/db/migrations');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  return join(ROOT, '.cache', `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
}

let cachedTemplate: Promise<Blob> | undefined;

/**
 * The template, read once per test process: every server a process starts loads it (docs/testing.md#backends), and
 * reading and copying 20 MB again for each was a third of a server's start.
 */
export function templateBlob(): Promise<Blob> {
  cachedTemplate ??= readFile(templatePath()).then((bytes) => new Blob([bytes]));
  return cachedTemplate;
}

const BLOCK = 512;
/** PostgreSQL's WAL page: a segment is read page by page, and a page of zeros ends the log. */
const WAL_PAGE = 8192;

/**
 * PGlite's dump trimmed to what a test server reads (docs/testing.md#backends): without the `template0` and
 * `template1` databases (`dropDirectories`, `base/<oid>`; nothing connects to them or creates a database in PGlite)
 * and with the WAL segment cut after its last written page (the rest of its 16 MB is zeros, which PostgreSQL
 * reads as the end of the log, as it reads the end of a shorter file). Loading 43 MB was most of a server's start;
 * this leaves about 20.
 */
export function slimTemplate(tar: Uint8Array, dropDirectories: readonly string[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const start = offset;
    const header = tar.subarray(start, start + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const name = field(header, 0, 100);
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    const data = tar.subarray(start + BLOCK, start + BLOCK + size);
    offset = start + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (dropDirectories.some((dir) => name === dir || name.startsWith(`${dir}/`))) continue;
    if (/^\/?pg_wal\/[0-9A-F]{24}$/.test(name)) {
      const kept = writtenWalLength(data);
      const copy = Uint8Array.from(header);
      setSize(copy, kept);
      parts.push(copy, padded(data.subarray(0, kept)));
      continue;
    }
    parts.push(tar.subarray(start, offset));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function field(header: Uint8Array, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end === -1 ? bytes : bytes.subarray(0, end));
}

function writtenWalLength(segment: Uint8Array): number {
  for (let end = segment.length; end > 0; end -= WAL_PAGE) {
    const page = segment.subarray(Math.max(0, end - WAL_PAGE), end);
    if (page.some((byte) => byte !== 0)) return end;
  }
  return WAL_PAGE;
}

/** Writes a ustar size (11 octal digits and a NUL) and the header checksum that covers it. */
function setSize(header: Uint8Array, size: number): void {
  header.set(new TextEncoder().encode(`${size.toString(8).padStart(11, '0')}\0`), 124);
  header.fill(0x20, 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, '0')}\0 `), 148);
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / BLOCK) * BLOCK);
  out.set(data);
  return out;
}
