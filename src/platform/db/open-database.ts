import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Database } from './database.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

/**
 * The storage a configuration names: PostgreSQL when `databaseUrl` is set, else PGlite persisted under
 * `<dataDir>/pglite`. The server and the CLI open it the same way (the CLI with a smaller pool).
 */
export async function openConfiguredDatabase(
  config: { databaseUrl?: string | undefined; dataDir: string },
  maxConnections?: number,
): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, maxConnections);
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  return openPglite({ dataDir: join(dataDir, 'pglite') });
}
