import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../src/platform/db/database.ts';
import { statementName } from '../../src/platform/db/pg-statements.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';

/** The embedded database shares one connection: a transaction must stay isolated from other statements. */
describe('embedded database (PGlite through node-postgres)', () => {
  let db: Database;
  before(async () => {
    db = await openPglite({});
    await db.exec('CREATE TABLE t (id int PRIMARY KEY, note text); CREATE TABLE big (n bigint)');
  });
  after(async () => {
    await db.close();
  });

  it('keeps a statement issued during a transaction out of it', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, note) VALUES ($1, $2)', [1, 'inside']);
        await held;
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outside = db.query('INSERT INTO t (id, note) VALUES ($1, $2)', [2, 'outside']);
    release();
    assert.equal(await transaction, 'roll back');
    await outside;
    assert.deepEqual(await db.query('SELECT id, note FROM t ORDER BY id'), [{ id: 2, note: 'outside' }]);
  });

  it('runs transactions one after another', async () => {
    await Promise.all(
      [10, 11, 12].map((id) =>
        db.transaction(async (tx) => {
          const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
          await tx.query('INSERT INTO t (id, note) VALUES ($1, $2)', [id, String(row?.n)]);
        }),
      ),
    );
    const notes = (await db.query<{ note: string }>('SELECT note FROM t WHERE id >= 10 ORDER BY id')).map(
      (r) => r.note,
    );
    assert.deepEqual(notes, ['1', '2', '3']);
  });

  it('reads int8 as decimal strings and reports unique violations with their SQLSTATE', async () => {
    await db.query('INSERT INTO big (n) VALUES ($1)', ['9223372036854775807']);
    assert.deepEqual(await db.query('SELECT n FROM big'), [{ n: '9223372036854775807' }]);
    await assert.rejects(db.query('INSERT INTO t (id, note) VALUES ($1, $2)', [2, 'again']), { code: '23505' });
    // The connection is usable after the error.
    assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM t WHERE id = $1', [2]), [{ n: 1 }]);
  });

  // On the same database (a table of its own): opening another PGlite costs seconds for nothing more.
  it('prepares again when a migration changed the table under a prepared SELECT *', async () => {
    await db.exec('CREATE TABLE s (id int PRIMARY KEY)');
    await db.query('INSERT INTO s (id) VALUES ($1)', [1]);
    assert.deepEqual(await db.query('SELECT * FROM s WHERE id = $1', [1]), [{ id: 1 }]);
    await db.exec('ALTER TABLE s ADD COLUMN note text');
    assert.deepEqual(await db.query('SELECT * FROM s WHERE id = $1', [1]), [{ id: 1, note: null }]);
  });
});

describe('statement names', () => {
  it('gives one text one stable name and different texts different names', () => {
    const a = statementName('SELECT 1 WHERE $1::int = 1');
    assert.match(a ?? '', /^h[A-Za-z0-9_-]{22}$/);
    assert.equal(statementName('SELECT 1 WHERE $1::int = 1'), a);
    assert.notEqual(statementName('SELECT 2 WHERE $1::int = 1'), a);
  });
});
