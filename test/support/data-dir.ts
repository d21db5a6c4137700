import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { templateBlob, templatePath } from './template.ts';

/**
 * A new data directory whose embedded database is already migrated (the test template), as a built server's
 * first start leaves it (it loads dist/pglite-template.tar). Run from source, the server would initialise and
 * migrate PGlite itself, seconds per directory: for tests about something other than that first start.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const template = templatePath();
  const db = await openPglite({
    dataDir: join(dataDir, 'pglite'),
    ...(existsSync(template) ? { loadDataDir: await templateBlob() } : {}),
  });
  await db.close();
  return dataDir;
}
