import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type RunningApp, startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { createLogger } from '../../src/platform/log.ts';
import { request } from '../support/client.ts';
import { migratedDataDir } from '../support/data-dir.ts';
import { createTestDatabase } from '../support/pg-database.ts';

/** The bootstrap CLI as an operator runs it (`npx hearth …` runs bin/hearth.mjs), against real storage. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/hearth.mjs');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], storageEnv: Record<string, string>): Promise<CliRun> {
  // Only what the CLI needs: no DATABASE_URL or data dir leaks in from the test runner's environment.
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...storageEnv };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function startServer(storageEnv: Record<string, string>): Promise<RunningApp> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', HEARTH_LOG_LEVEL: 'silent', ...storageEnv });
  const secrets = {
    sudo: randomBytes(32).toString('hex'),
    mediaProxy: randomBytes(32).toString('hex'),
    relay: randomBytes(32).toString('hex'),
    mfa: randomBytes(32).toString('hex'),
  };
  return startApp({ config, secrets, logger: createLogger('silent') });
}

async function adminAppSecretHash(app: RunningApp): Promise<string | undefined> {
  const id = app.services.settings.get().admin_oauth2_application_id;
  const [row] = await app.services.db.query<{ client_secret_hash: string; is_admin_builtin: boolean }>(
    'SELECT client_secret_hash, is_admin_builtin FROM applications WHERE id = $1',
    [id],
  );
  assert.equal(row?.is_admin_builtin, true);
  return row?.client_secret_hash;
}

/** Run twice, then use: the shared scenario for both storage backends. */
async function bootstrapScenario(storageEnv: Record<string, string>, existingAccount: boolean): Promise<void> {
  const email = `root.${randomBytes(3).toString('hex')}@example.test`;
  const password = 'correct horse battery';
  let registeredId: string | undefined;
  if (existingAccount) {
    const app = await startServer(storageEnv);
    try {
      const res = await request(app, 'POST', '/v1/auth/register', { body: { email, password, username: 'owner' } });
      assert.equal(res.status, 200, res.text);
      registeredId = res.body.user_id;
    } finally {
      await app.close();
    }
  }

  const args = ['admin', 'create', '--email', email, '--key-name', 'bootstrap', '--json'];
  if (!existingAccount) args.push('--password', password, '--username', 'root');
  const first = await runCli(args, storageEnv);
  assert.equal(first.code, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(report.created, !existingAccount);
  assert.equal(report.promoted, true);
  if (registeredId) assert.equal(report.user_id, registeredId);
  assert.equal(report.password, undefined, 'a password was given or already existed: none generated');
  assert.match(report.api_key.key, new RegExp(`^fa_${report.api_key.key_id}_[A-Za-z0-9]{32}$`));
  assert.equal(report.api_key.existed, false);
  assert.match(report.admin_oauth2.client_secret, /^[A-Za-z0-9_-]{43}$/);

  const second = await runCli(
    args.filter((a) => a !== '--json'),
    storageEnv,
  );
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /already an administrator/);
  assert.match(second.stdout, /"bootstrap" already exists/);
  assert.doesNotMatch(second.stdout, /fa_\d+_/, 'no key is shown again');
  assert.doesNotMatch(second.stdout, /client secret/, 'no OAuth2 secret is shown again');

  const app = await startServer(storageEnv);
  try {
    const me = await request(app, 'GET', '/v1/admin/users/me', { auth: `Admin ${report.api_key.key}` });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.user.id, report.user_id);
    assert.equal(me.body.user.email, email);
    assert.deepEqual(me.body.user.acls, ['*']);
    assert.deepEqual(me.body.acls, ['*']);
    const config = await request(app, 'POST', '/v1/admin/instance-config/get', {
      auth: `Admin ${report.api_key.key}`,
    });
    assert.equal(config.status, 200);

    const { db } = app.services;
    const users = await db.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email]);
    assert.equal(users.length, 1, 'running twice did not duplicate the account');
    const keys = await db.query('SELECT key_id FROM admin_api_keys WHERE owner_id = $1', [report.user_id]);
    assert.equal(keys.length, 1, 'running twice did not mint a second key');
    const apps = await db.query('SELECT id FROM applications WHERE is_admin_builtin');
    assert.equal(apps.length, 1, 'one built-in Admin application');
    assert.equal(await adminAppSecretHash(app), digest(report.admin_oauth2.client_secret));

    const login = await request(app, 'POST', '/v1/auth/login', { body: { email, password } });
    assert.equal(login.status, 200, login.text);
  } finally {
    await app.close();
  }
}

describe('hearth admin create', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('promotes an existing account on the embedded database, idempotently, and the key works', async () => {
    const dataDir = await migratedDataDir('hearth-cli-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await bootstrapScenario({ HEARTH_DATA_DIR: dataDir }, true);
  });

  it('refuses to open an embedded data directory another process holds, naming that process', async () => {
    const dataDir = await migratedDataDir('hearth-cli-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const app = await startServer({ HEARTH_DATA_DIR: dataDir });
    try {
      const run = await runCli(
        ['admin', 'create', '--email', 'locked@example.test', '--password', 'a long password here'],
        { HEARTH_DATA_DIR: dataDir },
      );
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`in use by process ${process.pid} `));
      assert.match(run.stderr, /pglite\.lock/);
      // A second server in the same process is refused the same way.
      await assert.rejects(startServer({ HEARTH_DATA_DIR: dataDir }), /in use by process/);
    } finally {
      await app.close();
    }
    // Closed: the lock is gone and the directory opens again.
    const reopened = await startServer({ HEARTH_DATA_DIR: dataDir });
    await reopened.close();
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dataDir = await migratedDataDir('hearth-cli-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const gone = spawn(process.execPath, ['-e', '0']);
    const pid = gone.pid as number;
    await new Promise((resolve) => gone.on('exit', resolve));
    await writeFile(join(dataDir, 'pglite.lock'), JSON.stringify({ pid, boot_id: '', started_at: 'earlier' }));
    const app = await startServer({ HEARTH_DATA_DIR: dataDir });
    const lock = JSON.parse(await readFile(join(dataDir, 'pglite.lock'), 'utf8'));
    assert.equal(lock.pid, process.pid);
    await app.close();
  });

  // Registered only when PostgreSQL is configured (TEST_DATABASE_URL), like the rest of the PostgreSQL matrix.
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl)
    it('creates a new administrator on PostgreSQL, idempotently, and the key works', async () => {
      const database = await createTestDatabase(adminUrl, 'cli');
      cleanups.push(database.drop);
      const dataDir = await mkdtemp(join(tmpdir(), 'hearth-cli-pg-'));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      await bootstrapScenario({ DATABASE_URL: database.url, HEARTH_DATA_DIR: dataDir }, false);
    });

  it('generates a password for a new account when none is given, and rejects bad input', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-cli-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const bad = await runCli(['admin', 'create', '--email', 'not-an-email'], { HEARTH_DATA_DIR: dataDir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--email/);
    const unknown = await runCli(['admin', 'frobnicate'], { HEARTH_DATA_DIR: dataDir });
    assert.equal(unknown.code, 2);

    const run = await runCli(['admin', 'create', '--email', 'gen@example.test', '--json'], {
      HEARTH_DATA_DIR: dataDir,
    });
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.created, true);
    assert.match(report.password, /^[A-Za-z0-9]{20}$/);
    assert.equal(report.api_key, undefined);
    const app = await startServer({ HEARTH_DATA_DIR: dataDir });
    try {
      const login = await request(app, 'POST', '/v1/auth/login', {
        body: { email: 'gen@example.test', password: report.password },
      });
      assert.equal(login.status, 200, login.text);
      const me = await request(app, 'GET', '/v1/admin/users/me', { auth: login.body.token });
      assert.equal(me.status, 200);
      assert.deepEqual(me.body.acls, ['*']);
    } finally {
      await app.close();
    }
  });
});
