import pg from 'pg';
import type { Database, Queryable } from './database.ts';

pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => value);

export function openPostgres(connectionString: string, maxConnections = 10): Database {
  const pool = new pg.Pool({ connectionString, max: maxConnections });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const query: Queryable['query'] = async <T>(sql: string, params?: readonly unknown[]) => {
    const result = await pool.query(sql, params ? [...params] : undefined);
    return result.rows as T[];
  };
  return {
    kind: 'postgres',
    query,
    async exec(sql) {
      await pool.query(sql);
    },
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Queryable = {
          async exec(sql: string) {
            await client.query(sql);
          },
          async query<T>(sql: string, params?: readonly unknown[]) {
            const result = await client.query(sql, params ? [...params] : undefined);
            return result.rows as T[];
          },
        };
        const value = await work(tx);
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
