import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The migrated PGlite template for this set of migrations (rebuilt whenever a migration changes). */
export function templatePath(): string {
  const dir = join(ROOT, 'src/platform/db/migrations');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  return join(ROOT, '.cache', `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
}
