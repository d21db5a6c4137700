import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
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
  config: { databaseUrl?: string | undefined; dataDir: string; pgliteSync?: 'commit' | 'off' },
  maxConnections?: number,
): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, maxConnections);
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const release = await lockDataDirectory(dataDir);
  try {
    const pgliteDir = join(dataDir, 'pglite');
    // A first start loads the database migrated at build time instead of initialising one (seconds faster).
    const template = existsSync(join(pgliteDir, 'PG_VERSION')) ? undefined : await builtTemplate();
    const db = await openPglite({
      dataDir: pgliteDir,
      sync: config.pgliteSync ?? 'commit',
      ...(template ? { loadDataDir: template } : {}),
    });
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

/** `dist/pglite-template.tar`, written by `npm run build:server`; absent when running from source. */
const TEMPLATE = new URL('../../pglite-template.tar', import.meta.url);

async function builtTemplate(): Promise<Blob | undefined> {
  if (!existsSync(TEMPLATE)) return undefined;
  return new Blob([await readFile(TEMPLATE)]);
}
