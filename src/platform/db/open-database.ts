import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { lockDataDirectory } from './data-dir-lock.ts';
import type { Database } from './database.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

/**
 * The storage a configuration names: PostgreSQL when `databaseUrl` is set, else PGlite persisted under
 * `<dataDir>/pglite`, locked for this process alone (`data-dir-lock.ts`). The server and the CLI open it the
 * same way (the CLI with a smaller pool).
 */
export async function openConfiguredDatabase(
  config: { databaseUrl?: string | undefined; dataDir: string },
  maxConnections?: number,
): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, maxConnections);
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const release = await lockDataDirectory(dataDir);
  try {
    const db = await openPglite({ dataDir: join(dataDir, 'pglite') });
    return {
      ...db,
      close: async () => {
        await db.close();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}
