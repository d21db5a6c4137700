import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** Serialises concurrent starts of several processes against one PostgreSQL database. */
const MIGRATION_LOCK_KEY = 7_243_118_001;

export async function listMigrations(): Promise<{ version: string; sql: string }[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  return Promise.all(
    files.map(async (name) => ({
      version: name.replace(/\.sql$/, ''),
      sql: await readFile(MIGRATIONS_DIR + name, 'utf8'),
    })),
  );
}

/** Applies every migration not yet recorded, each in its own transaction, in file-name order. */
export async function migrate(db: Database): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    for (const migration of await listMigrations()) {
      if (done.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
  });
  return applied;
}
