#!/usr/bin/env node
// Compiles the server to JavaScript in dist/ (run by `npm ci` through `prepare`), so `npm start` runs plain
// node with no TypeScript at start. Type errors are `npm run typecheck`'s job: the emit does not depend on them
// (isolatedModules), so tsc emits with --noCheck, byte for byte the checked emit at a third of its CPU.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync('dist', { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noCheck'], { stdio: 'inherit' });
// Runtime assets next to the code that reads them.
cpSync('src/platform/db/migrations', 'dist/platform/db/migrations', { recursive: true });
if (!existsSync('dist/main.js')) {
  console.error('build-server: dist/main.js was not produced');
  process.exit(1);
}
// A migrated embedded database: a first `npm start` loads it instead of initialising one from scratch.
const template = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `import { writeFile } from 'node:fs/promises';
     const { openPglite } = await import('./dist/platform/db/pglite.js');
     const { migrate } = await import('./dist/platform/db/migrate.js');
     const db = await openPglite({});
     await migrate(db);
     await writeFile('dist/pglite-template.tar', Buffer.from(await (await db.dump()).arrayBuffer()));
     await db.close();`,
  ],
  { stdio: 'inherit' },
);
if (template.status !== 0) console.error('build-server: no database template; a first start initialises one');
if (result.status !== 0) console.error('build-server: tsc reported errors (see above); the build was emitted');
