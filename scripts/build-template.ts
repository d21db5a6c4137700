import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { templatePath } from '../test/support/template.ts';

/** Builds the migrated PGlite template once per set of migrations: a cold PGlite start takes seconds. */
const path = templatePath();
if (!existsSync(path)) {
  const db = await openPglite({});
  await migrate(db);
  const blob = await db.dump();
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, Buffer.from(await blob.arrayBuffer()));
  await db.close();
}
