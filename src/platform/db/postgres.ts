import pg from 'pg';
import type { Database, Queryable } from './database.ts';
import { pgQueryable } from './pg-statements.ts';

export function openPostgres(connectionString: string, maxConnections = 10): Database {
  const pool = new pg.Pool({ connectionString, max: maxConnections });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const root = pgQueryable(pool);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Queryable = pgQueryable(client);
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
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
