import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import type { Database, Queryable } from './database.ts';
import { pgQueryable } from './pg-statements.ts';

export interface PgliteOptions {
  /** A directory to persist into; absent means in memory. */
  dataDir?: string;
  /** A tarball made by `dumpDataDir`, used to start from an already-migrated template. */
  loadDataDir?: Blob | File;
}

/**
 * The embedded database, spoken to through node-postgres over PGlite's wire-protocol adapter: the same
 * client, type parsing and named (parse-once) statements as on a PostgreSQL server. PGlite's own `query`
 * parses and plans every statement each time, which cost twice as much per query on the hot paths.
 */
export async function openPglite(options: PgliteOptions): Promise<Database & { dump(): Promise<Blob> }> {
  const pglite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  const client = new pg.Client(createPgConfig(pglite) as unknown as pg.ClientConfig);
  await client.connect();
  const direct = pgQueryable(client);

  // One connection: while a transaction is open, every other statement waits for it to end, or it would
  // run inside it. The check and the enqueue happen in one synchronous step, so none slips in between.
  let inTransaction = false;
  let transactionEnded: Promise<void> = Promise.resolve();
  const afterTransaction = async <T>(run: () => Promise<T>): Promise<T> => {
    while (inTransaction) await transactionEnded;
    return run();
  };
  const root: Queryable = {
    query: <T>(sql: string, params?: readonly unknown[]) =>
      inTransaction ? afterTransaction(() => direct.query<T>(sql, params)) : direct.query<T>(sql, params),
    exec: (sql: string) => (inTransaction ? afterTransaction(() => direct.exec(sql)) : direct.exec(sql)),
  };

  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    async transaction(work) {
      while (inTransaction) await transactionEnded;
      inTransaction = true;
      let end = () => {};
      transactionEnded = new Promise((resolve) => {
        end = resolve;
      });
      try {
        await client.query('BEGIN');
        const value = await work(direct);
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        inTransaction = false;
        end();
      }
    },
    close: async () => {
      await client.end().catch(() => {});
      await pglite.close();
    },
    dump: async () => (await pglite.dumpDataDir('none')) as Blob,
  };
}
