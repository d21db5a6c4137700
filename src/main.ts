import { type Config, ConfigError, loadConfig, SETTINGS } from './config/config.ts';
import { createLogger } from './platform/log.ts';
import { loadOrCreateSecrets, SECRET_NAMES, type SecretName } from './platform/secrets.ts';

/** The setting that supplies each signing secret (its env var and flag come from SETTINGS). */
const SECRET_SETTING = {
  sudo: 'sudoSecret',
  mediaProxy: 'mediaProxySecret',
  relay: 'relaySecret',
  mfa: 'mfaSecret',
} as const satisfies Record<SecretName, keyof Config>;

/** The entrypoint: the only module that reads the environment and argv. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hearth: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.logLevel, { format: config.logFormat });
  log.info('starting', {
    storage: config.databaseUrl ? 'postgres' : `embedded (${config.dataDir})`,
    roles: [...config.roles].join(','),
  });
  // With a shared database or Redis, several processes may serve one instance: secrets generated per process
  // would disagree (a TOTP factor set up on one node refused on another), so they must be given.
  const missing = SECRET_NAMES.filter((name) => !config[SECRET_SETTING[name]]);
  const shared = config.databaseUrl || config.redisUrl || config.redisClusterNodes.length > 0;
  if (shared && missing.length > 0) {
    const names = missing.map((name) => SETTINGS.find((setting) => setting.key === SECRET_SETTING[name])?.env);
    const which = config.databaseUrl || config.redisUrl ? 'DATABASE_URL or REDIS_URL' : 'REDIS_CLUSTER_NODES';
    process.stderr.write(
      `hearth: ${which} is set, so several processes may share this instance, and every one ` +
        `needs the same secrets: set ${names.join(', ')} (32+ random characters each, e.g. ` +
        `\`openssl rand -base64 32\`; keep them with your backups). See docs/deployment.md.\n`,
    );
    process.exit(2);
  }
  const { secrets, generated } = await loadOrCreateSecrets(
    config.dataDir,
    Object.fromEntries(SECRET_NAMES.map((name) => [name, config[SECRET_SETTING[name]]])),
  );
  for (const name of generated) {
    const env = SETTINGS.find((setting) => setting.key === SECRET_SETTING[name])?.env;
    log.warn(`${env} is not set: using a development secret kept in the data directory; set it in production`);
  }
  if (!config.databaseUrl) log.warn('DATABASE_URL is not set: using the embedded database in the data directory');
  if (config.testMode) log.warn('HEARTH_TEST_MODE is on: the /test harness is reachable and rate limits are relaxed');

  // Imported once the configuration is known good: a bad setting is refused without loading the whole server.
  const { startApp } = await import('./app.ts');
  const app = await startApp({ config, secrets, logger: log });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await app.close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`hearth: failed to start: ${message}\n`);
  process.exit(1);
});
