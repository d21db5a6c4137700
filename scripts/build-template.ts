import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { slimTemplate, templatePath } from '../test/support/template.ts';

/** Builds the migrated PGlite template once per set of migrations: a cold PGlite start takes seconds. */
const path = templatePath();
if (!existsSync(path)) {
  const db = await openPglite({});
  await migrate(db);
  const templates = await db.query<{ oid: string }>(
    `SELECT oid::text FROM pg_database WHERE datname IN ('template0', 'template1')`,
  );
  await db.exec('CHECKPOINT');
  const blob = await db.dump();
  const tar = slimTemplate(
    new Uint8Array(await blob.arrayBuffer()),
    templates.map((row) => `/base/${row.oid}`),
  );
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, tar);
  await db.close();
}
