import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openConfiguredDatabase } from '../../src/platform/db/open-database.ts';

/**
 * HEARTH_PGLITE_SYNC (docs/configuration.md): with `commit`, the default, every commit of the embedded database
 * reaches the disk through a real fsync before it is acknowledged; with `off`, PGlite's own default, none does.
 * Syncs are counted at node:fs, the layer that does them, on a real data directory.
 */
const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const realFsync = fs.fsyncSync;
let syncs = 0;
fs.fsyncSync = (fd: number) => {
  syncs += 1;
  realFsync(fd);
};
syncBuiltinESMExports();

const dirs: string[] = [];
after(async () => {
  fs.fsyncSync = realFsync;
  syncBuiltinESMExports();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function open(pgliteSync?: 'commit' | 'off', dataDir?: string) {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'hearth-sync-')));
  if (!dataDir) dirs.push(dir);
  const db = await openConfiguredDatabase({ dataDir: dir, ...(pgliteSync ? { pgliteSync } : {}) });
  return { db, dir };
}

describe('embedded database durability', { timeout: 120_000 }, () => {
  test('by default every commit is synced, and what was committed is there after a reopen', async () => {
    const { db, dir } = await open();
    try {
      assert.deepEqual(await db.query('SHOW fsync'), [{ fsync: 'on' }]);
      assert.deepEqual(await db.query('SHOW wal_sync_method'), [{ wal_sync_method: 'fsync' }]);
      await db.exec('CREATE TABLE durable (n int)');
      const before = syncs;
      for (let n = 0; n < 5; n++) await db.query('INSERT INTO durable VALUES ($1)', [n]);
      assert.ok(syncs - before >= 5, `5 commits made ${syncs - before} syncs`);
      const reads = syncs;
      for (let n = 0; n < 5; n++) await db.query('SELECT count(*) FROM durable');
      assert.equal(syncs, reads, 'reads sync nothing');
    } finally {
      await db.close();
    }
    const again = await open(undefined, dir);
    try {
      assert.deepEqual(await again.db.query('SELECT count(*)::int AS n FROM durable'), [{ n: 5 }]);
    } finally {
      await again.db.close();
    }
  });

  test('off keeps PGlite’s own setting: no fsync at commit', async () => {
    const { db } = await open('off');
    try {
      assert.deepEqual(await db.query('SHOW fsync'), [{ fsync: 'off' }]);
      await db.exec('CREATE TABLE fast (n int)');
      const before = syncs;
      for (let n = 0; n < 5; n++) await db.query('INSERT INTO fast VALUES ($1)', [n]);
      assert.equal(syncs, before);
    } finally {
      await db.close();
    }
  });
});
