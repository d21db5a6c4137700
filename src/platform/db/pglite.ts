import { fsyncSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import type { Database, Queryable } from './database.ts';
import { pgQueryable } from './pg-statements.ts';

export interface PgliteOptions {
  /** A directory to persist into; absent means in memory. */
  dataDir?: string;
  /**
   * `commit` (with a data directory): every commit reaches the disk before it is acknowledged, as on a
   * PostgreSQL server; `off`: PGlite's own default, safe against a killed process but not a power cut
   * (docs/configuration.md, `HEARTH_PGLITE_SYNC`).
   */
  sync?: 'commit' | 'off';
  /** A tarball made by `dumpDataDir`, used to start from an already-migrated template. */
  loadDataDir?: Blob | File;
}

/**
 * The embedded database, spoken to through node-postgres over PGlite's wire-protocol adapter: the same
 * client, type parsing and named (parse-once) statements as on a PostgreSQL server. PGlite's own `query`
 * parses and plans every statement each time, which cost twice as much per query on the hot paths.
 */
export async function openPglite(options: PgliteOptions): Promise<Database & { dump(): Promise<Blob> }> {
  const durable = options.dataDir !== undefined && options.sync === 'commit';
  const pglite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    startParams: [...(durable ? durableStartParams() : defaultStartParams()), ...SIZING_PARAMS],
  });
  // What was written while PGlite started (before the hook below: a first start unpacks a whole database) is
  // synced once, off the event loop, without holding up the start; close waits for it.
  let startupSync: Promise<void> = Promise.resolve();
  if (durable && options.dataDir) {
    syncThroughNodeFs(pglite);
    startupSync = syncTree(options.dataDir).catch(() => {});
  }
  const client = new pg.Client(createPgConfig(pglite) as unknown as pg.ClientConfig);
  await client.connect();

  // One connection, one statement at a time (node-postgres deprecates overlapping queries on a client).
  // A transaction holds the line from BEGIN to COMMIT, so no other statement can run inside it; the
  // transaction's own statements queue on a line of their own.
  const root = serialised(pgQueryable(client));

  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (work) =>
      root.hold(async () => {
        await client.query('BEGIN');
        try {
          const value = await work(serialised(pgQueryable(client)));
          await client.query('COMMIT');
          return value;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        }
      }),
    close: async () => {
      await startupSync;
      await client.end().catch(() => {});
      await pglite.close();
    },
    dump: async () => (await pglite.dumpDataDir('none')) as Blob,
  };
}

/** A `Queryable` whose statements run one after another, plus `hold` to run a whole unit in the line. */
function serialised(target: Queryable): Queryable & { hold<T>(unit: () => Promise<T>): Promise<T> } {
  let tail: Promise<unknown> = Promise.resolve();
  const hold = <T>(unit: () => Promise<T>): Promise<T> => {
    const run = tail.then(unit);
    tail = run.catch(() => {});
    return run;
  };
  return {
    hold,
    query: <T>(sql: string, params?: readonly unknown[]) => hold(() => target.query<T>(sql, params)),
    exec: (sql: string) => hold(() => target.exec(sql)),
  };
}

/**
 * PGlite starts PostgreSQL with `-F` (fsync off). Without it, and with `wal_sync_method=fsync` (PGlite's
 * `fdatasync` is a no-op), PostgreSQL syncs the WAL at every commit and the data files at each checkpoint.
 */
function durableStartParams(): string[] {
  return [...defaultStartParams().filter((param) => param !== '-F'), '-c', 'wal_sync_method=fsync'];
}

function defaultStartParams(): string[] {
  const defaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams;
  if (!defaults?.includes('--single')) throw new Error('PGlite start parameters changed: review HEARTH_PGLITE_SYNC');
  return defaults;
}

/**
 * PostgreSQL's default 128 MB of shared buffers cost a quarter of PGlite's start (the wasm heap they live in is
 * set up at every start) for a cache the operating system's page cache already provides under PGlite's files.
 * 32 MB (4,096 pages) holds an embedded instance's hot tables and indexes (docs/performance.md#start-up).
 */
const SIZING_PARAMS = ['-c', 'shared_buffers=32MB'];

interface EmscriptenFs {
  lookupPath(path: string, options: object): { node: { mount: { type: { stream_ops: Record<string, unknown> } } } };
  ErrnoError: new (errno: number) => Error;
}

/** Emscripten's errno for EIO: a failed sync makes PostgreSQL stop (PANIC) rather than acknowledge a commit. */
const EMSCRIPTEN_EIO = 29;

/**
 * Emscripten's Node file system maps reads and writes to real files but has no `fsync`: PostgreSQL's syncs
 * end in a no-op. This gives it one, on the file descriptor Node holds for the same file.
 */
function syncThroughNodeFs(pglite: PGlite): void {
  const mod = (pglite as unknown as { mod?: { FS?: EmscriptenFs } }).mod;
  const fs = mod?.FS;
  if (!fs) throw new Error('PGlite internals changed: cannot make HEARTH_PGLITE_SYNC=commit durable');
  const streamOps = fs.lookupPath('/pglite/data', {}).node.mount.type.stream_ops;
  streamOps.fsync = (stream: { nfd?: number }) => {
    if (stream.nfd === undefined) return 0;
    try {
      fsyncSync(stream.nfd);
    } catch {
      throw new fs.ErrnoError(EMSCRIPTEN_EIO);
    }
    return 0;
  };
}

/** Syncs every file and directory under `root`, a few at a time on libuv's pool. */
async function syncTree(root: string): Promise<void> {
  const paths: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) paths.push(path);
    }
    paths.push(dir);
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < paths.length) {
        const handle = await open(paths[next++] as string, 'r').catch(() => undefined);
        if (!handle) continue;
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
    }),
  );
}
