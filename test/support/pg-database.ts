import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  /** The connection string of the new database. */
  url: string;
  /** Drops it, closing whatever is still connected (never throws). */
  drop(): Promise<void>;
}

/** A new, empty PostgreSQL database named `hearth_<label>_<random>` on the server of `adminUrl`. */
export async function createTestDatabase(adminUrl: string, label: string): Promise<TestDatabase> {
  const name = `hearth_${label}_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {}),
  };
}
