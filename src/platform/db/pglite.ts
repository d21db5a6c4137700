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
