import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningApp, type StartOptions, startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { GatewayOptions } from '../../src/gateway/gateway-server.ts';
import { hashPasswordsCheaplyForTests } from '../../src/platform/crypto/passwords.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createTestDatabase } from './pg-database.ts';
import { templateBlob, templatePath } from './template.ts';

export const TEST_TOKEN = 'test-harness-token';

export interface TestSecrets {
  sudo: string;
  mediaProxy: string;
  relay: string;
  mfa: string;
}

/** Fresh signing secrets; servers meant to act as nodes of one instance are given the same set. */
export function newTestSecrets(): TestSecrets {
  return {
    sudo: 's'.repeat(32) + randomBytes(8).toString('hex'),
    mediaProxy: randomBytes(32).toString('hex'),
    relay: randomBytes(32).toString('hex'),
    mfa: randomBytes(32).toString('hex'),
  };
}

/** The settings that give spawned processes one set of secrets, as nodes of one instance need (docs/deployment.md). */
export function secretsEnv(secrets: TestSecrets): Record<string, string> {
  return {
    HEARTH_SUDO_SECRET: secrets.sudo,
    HEARTH_MEDIA_PROXY_SECRET: secrets.mediaProxy,
    HEARTH_RELAY_SECRET: secrets.relay,
    HEARTH_MFA_SECRET: secrets.mfa,
  };
}

export interface TestServer {
  app: RunningApp;
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * Starts a real server on a random port with a fresh database: an in-memory PGlite copied from the migrated
 * template, or (when `TEST_DATABASE_URL` is set) a new PostgreSQL database; Redis when `TEST_REDIS_URL` is set.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { secrets?: TestSecrets; gateway?: GatewayOptions; voice?: StartOptions['voice'] } = {},
): Promise<TestServer> {
  // Passwords hashed by servers in this process cost argon2id's floor, not 30 ms of CPU each (docs/testing.md).
  hashPasswordsCheaplyForTests();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-test-'));
  const adminUrl = process.env.TEST_DATABASE_URL;
  let dropDatabase = async () => {};
  let database: Database | undefined;
  const baseEnv: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    HEARTH_DATA_DIR: dataDir,
    HEARTH_TEST_MODE: '1',
    HEARTH_TEST_TOKEN: TEST_TOKEN,
    HEARTH_LOG_LEVEL: process.env.HEARTH_TEST_LOG_LEVEL ?? 'silent',
  };
  if (process.env.TEST_REDIS_URL) {
    baseEnv.REDIS_URL = process.env.TEST_REDIS_URL;
    baseEnv.HEARTH_REDIS_PREFIX = `hearth-test-${randomBytes(6).toString('hex')}:`;
  }
  if (adminUrl) {
    const fresh = await createTestDatabase(adminUrl, 't');
    baseEnv.DATABASE_URL = fresh.url;
    dropDatabase = fresh.drop;
  } else if (!env.DATABASE_URL) {
    const template = templatePath();
    database = await openPglite(existsSync(template) ? { loadDataDir: await templateBlob() } : {});
  }
  // The port is only known after listen; discovery needs a public URL, so a placeholder is replaced below.
  const config = loadConfig({ ...baseEnv, HEARTH_PUBLIC_URL: 'http://127.0.0.1:1', ...env });
  const explicitPublicUrl = env.HEARTH_PUBLIC_URL !== undefined;
  const secrets = options.secrets ?? newTestSecrets();
  const app = await startApp({
    config,
    secrets,
    logger: createLogger(config.logLevel, { format: config.logFormat }),
    ...(database ? { database } : {}),
    ...(options.gateway ? { gateway: options.gateway } : {}),
    ...(options.voice ? { voice: options.voice } : {}),
  });
  if (!explicitPublicUrl) {
    config.publicUrl = app.url;
    if (env.HEARTH_WEBAPP_URL === undefined) config.webappUrl = app.url;
  }
  return {
    app,
    url: app.url,
    port: app.port,
    dataDir,
    async close() {
      await app.close();
      await dropDatabase();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
