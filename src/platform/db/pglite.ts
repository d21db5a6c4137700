import { PGlite } from '@electric-sql/pglite';
import type { Database, Queryable } from './database.ts';

/** int8 as decimal strings: snowflakes and 64-bit flag fields must not lose precision. */
const INT8_OID = 20;
const textParsers = { [INT8_OID]: (value: string) => value };

export interface PgliteOptions {
  /** A directory to persist into; absent means in memory. */
  dataDir?: string;
  /** A tarball made by `dumpDataDir`, used to start from an already-migrated template. */
  loadDataDir?: Blob | File;
}

export async function openPglite(options: PgliteOptions): Promise<Database & { dump(): Promise<Blob> }> {
  const pg = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: textParsers,
  });
  const wrap = (target: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async exec(sql: string) {
      await target.exec(sql);
    },
    async query<T>(sql: string, params?: readonly unknown[]) {
      const result = await target.query<T>(sql, params ? [...params] : undefined);
      return result.rows;
    },
  });
  const root = wrap(pg);
  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (work) => pg.transaction((tx) => work(wrap(tx))),
    close: () => pg.close(),
    dump: async () => (await pg.dumpDataDir('none')) as Blob,
  };
}
