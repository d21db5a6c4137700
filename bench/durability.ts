/**
 * The cost of HEARTH_PGLITE_SYNC=commit (issue 14, item 8): single-row commits per second on a real data
 * directory with every commit synced, against PGlite's own default (no fsync). Interleaved rounds, so a change in
 * machine load hits both alike.
 *
 *   node --import tsx bench/durability.ts     prints the figures
 *   runDurabilityBench() from bench/run.ts    returns them
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from '../src/platform/db/database.ts';
import { openConfiguredDatabase } from '../src/platform/db/open-database.ts';

const COMMITS = Number(process.env.BENCH_COMMITS ?? 200);
const ROUNDS = 3;

export interface DurabilityResult {
  syncedPerSecond: number;
  unsyncedPerSecond: number;
}

async function commitsPerSecond(db: Database): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < COMMITS; n++) await db.query('INSERT INTO bench_commits (n) VALUES ($1)', [n]);
  return (COMMITS / (performance.now() - started)) * 1000;
}

export async function runDurabilityBench(): Promise<DurabilityResult> {
  const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'hearth-durability-'))));
  const synced = await openConfiguredDatabase({ dataDir: dirs[0] as string, pgliteSync: 'commit' });
  const unsynced = await openConfiguredDatabase({ dataDir: dirs[1] as string, pgliteSync: 'off' });
  try {
    for (const db of [synced, unsynced]) await db.exec('CREATE TABLE bench_commits (n int)');
    const rates = { synced: [] as number[], unsynced: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      rates.synced.push(await commitsPerSecond(synced));
      rates.unsynced.push(await commitsPerSecond(unsynced));
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    return { syncedPerSecond: mean(rates.synced), unsyncedPerSecond: mean(rates.unsynced) };
  } finally {
    await synced.close();
    await unsynced.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

export function durabilityTable(r: DurabilityResult): string {
  return [
    '| Measurement | Absolute | Ratio |',
    '|---|---|---|',
    `| single-row commits, \`HEARTH_PGLITE_SYNC=off\` (PGlite's default, no fsync) | ${r.unsyncedPerSecond.toFixed(0)} /s | |`,
    `| single-row commits, \`HEARTH_PGLITE_SYNC=commit\` (the default: WAL synced at every commit) | ${r.syncedPerSecond.toFixed(0)} /s | ${(r.syncedPerSecond / r.unsyncedPerSecond).toFixed(2)} |`,
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  console.log(durabilityTable(await runDurabilityBench()));
