import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { registerUser, request } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { spawnEntrypoint } from '../support/spawn.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

describe('secrets with a shared database', { timeout: 60_000 }, () => {
  it('refuses to start with DATABASE_URL and no secrets, naming every one to set', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-secrets-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    // Refused before any connection is made, so the database need not exist.
    const spawned = spawnEntrypoint({
      HEARTH_DATA_DIR: dataDir,
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      HEARTH_SUDO_SECRET: 's'.repeat(40),
    });
    assert.equal(await spawned.exited, 2);
    const stderr = spawned.stderr();
    for (const name of ['HEARTH_MEDIA_PROXY_SECRET', 'HEARTH_RELAY_SECRET', 'HEARTH_MFA_SECRET'])
      assert.ok(stderr.includes(name), `${name} named in: ${stderr}`);
    assert.ok(!stderr.includes('HEARTH_SUDO_SECRET,'), 'a secret that is set is not asked for');
    assert.match(stderr, /^hearth: DATABASE_URL or REDIS_URL is set/);
  });
});

// Two processes on one PostgreSQL database: registered when PostgreSQL is configured (TEST_DATABASE_URL).
const adminUrl = process.env.TEST_DATABASE_URL;
if (adminUrl)
  describe('nodes sharing one PostgreSQL database', () => {
    async function freshDatabase(): Promise<string> {
      const database = await createTestDatabase(adminUrl as string, 'nodes');
      cleanups.push(database.drop);
      return database.url;
    }

    it('lease distinct worker ids, and 600 concurrent message creates across both all succeed', async () => {
      const url = await freshDatabase();
      const env = { DATABASE_URL: url, HEARTH_SHARED_OBJECT_DIR: 'true' };
      const secrets = newTestSecrets();
      const a: TestServer = await startTestServer(env, { secrets });
      cleanups.push(() => a.close());
      const b: TestServer = await startTestServer(env, { secrets });
      cleanups.push(() => b.close());
      const leases = await a.app.services.db.query<{ worker_id: number }>(
        'SELECT worker_id FROM node_leases WHERE expires_at > now() ORDER BY worker_id',
      );
      assert.deepEqual(
        leases.map((l) => l.worker_id),
        [0, 1],
      );
      const user = await registerUser(a);
      const guild = await request(a, 'POST', '/v1/guilds', { auth: user.token, body: { name: 'two nodes' } });
      const channels = await request(a, 'GET', `/v1/guilds/${guild.body.id}/channels`, { auth: user.token });
      const channelId = channels.body.find((c: { type: number }) => c.type === 0).id;
      await a.app.services.rateLimiter.reset();
      const results = await Promise.all(
        Array.from({ length: 600 }, (_, i) =>
          request(i % 2 ? a : b, 'POST', `/v1/channels/${channelId}/messages`, {
            auth: user.token,
            body: { content: `m${i}` },
          }),
        ),
      );
      assert.deepEqual([...new Set(results.map((r) => r.status))], [200], results.find((r) => r.status !== 200)?.text);
      assert.equal(new Set(results.map((r) => r.body.id)).size, 600);
    });

    it('refuses a second node whose uploads would stay on its own disk', async () => {
      const url = await freshDatabase();
      const a = await startTestServer({ DATABASE_URL: url });
      cleanups.push(() => a.close());
      await assert.rejects(startTestServer({ DATABASE_URL: url }), /uploads would be kept on each process's own disk/);
      // Once the first has stopped, its lease is gone and a node starts again.
      await a.close();
      const again = await startTestServer({ DATABASE_URL: url });
      cleanups.push(() => again.close());
    });
  });
