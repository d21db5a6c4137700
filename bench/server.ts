import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/platform/log.ts';
import { loadOrCreateSecrets } from '../src/platform/secrets.ts';

/**
 * The server under benchmark, in its own process so the load generator does not share its event loop:
 * embedded default (PGlite on disk), test mode with strict off (no rate limits, no bans), info logging to
 * stdout (which the parent points at /dev/null), exactly as `npm start` would log. With BENCH_DATABASE_URL
 * (an admin connection) it runs on a fresh PostgreSQL database instead.
 */
const dataDir = await mkdtemp(join(tmpdir(), 'hearth-bench-'));
const adminUrl = process.env.BENCH_DATABASE_URL;
const dbName = `hearth_bench_${process.pid}`;
const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(sql).finally(() => client.end());
};
let databaseUrl: string | undefined;
if (adminUrl) {
  await admin(`CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  databaseUrl = url.toString();
}
const config = loadConfig({
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  PORT: '0',
  HOST: '127.0.0.1',
  HEARTH_DATA_DIR: dataDir,
  HEARTH_TEST_MODE: '1',
  HEARTH_TEST_TOKEN: 'bench',
  HEARTH_LOG_LEVEL: 'info',
});
const { secrets } = await loadOrCreateSecrets(dataDir, {});
const app = await startApp({ config, secrets, logger: createLogger(config.logLevel, { format: config.logFormat }) });
process.send?.({ url: app.url });

const stop = async () => {
  await app.close().catch(() => {});
  if (adminUrl) await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
