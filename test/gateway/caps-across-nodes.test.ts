import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { registerUser, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient, readyClient } from './gateway-client.ts';

/**
 * Gateway caps hold for the cluster, not per node (docs/gateway.md#across-nodes): two processes share
 * PostgreSQL and Redis, each started with 4 sockets per address and 3 resumable sessions per account, and the
 * counts span both. Registered when both are configured (the PostgreSQL and Redis run of CI).
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

const SOCKETS = 4;
const SESSIONS = 3;

if (adminUrl && redisUrl)
  describe('gateway caps across nodes', { timeout: 60_000 }, () => {
    let a: TestServer;
    let b: TestServer;
    let dropDatabase = async () => {};
    const secrets = newTestSecrets();

    before(async () => {
      const database = await createTestDatabase(adminUrl, 'caps');
      dropDatabase = database.drop;
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: `hearth-caps-${randomBytes(6).toString('hex')}:`,
        HEARTH_SHARED_OBJECT_DIR: 'true',
        HEARTH_TRUSTED_PROXIES: '127.0.0.1/32',
      };
      const gateway = { maxSocketsPerIp: SOCKETS, maxSessionsPerUser: SESSIONS };
      a = await startTestServer(env, { secrets, gateway });
      b = await startTestServer(env, { secrets, gateway });
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await dropDatabase();
    });

    const from = (address: string) => ({ 'x-forwarded-for': address });

    test('sockets per address: two on each node fill the cap of 4; the next closes 4008 on either; a close frees one for the other node', async () => {
      const address = '198.51.100.7';
      const open = [a, a, b, b].map((server) => GatewayClient.connect(server, undefined, from(address)));
      for (const client of open) assert.equal((await client.hello()).op, 10);
      for (const server of [a, b]) {
        const extra = GatewayClient.connect(server, undefined, from(address));
        assert.deepEqual(await extra.closed, { code: 4008, reason: 'Too many connections' });
      }
      // Another address is counted apart.
      const elsewhere = GatewayClient.connect(b, undefined, from('198.51.100.8'));
      assert.equal((await elsewhere.hello()).op, 10);
      await elsewhere.close();

      await open[0]?.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = GatewayClient.connect(b, undefined, from(address));
      assert.equal((await again.hello()).op, 10);
      const over = GatewayClient.connect(a, undefined, from(address));
      assert.deepEqual(await over.closed, { code: 4008, reason: 'Too many connections' });
      await Promise.all([...open.slice(1), again].map((c) => c.close()));
    });

    test('sessions per account: 3 live across both nodes refuse a 4th; a detached one on the other node is evicted to make room, and cannot resume', async () => {
      const user: TestUser = await registerUser(a);
      const first = await readyClient(a, user.token);
      const second = await readyClient(b, user.token);
      const third = await readyClient(a, user.token);
      for (const server of [a, b]) {
        const refused = GatewayClient.connect(server);
        await refused.hello();
        refused.identify(user.token);
        assert.deepEqual(await refused.closed, { code: 4008, reason: 'Too many sessions' });
      }

      // A session moving between nodes is still one session: the cap still refuses a fourth.
      await second.client.terminate();
      await new Promise((r) => setTimeout(r, 100));
      const moved = GatewayClient.connect(a);
      await moved.hello();
      moved.send({ op: 6, d: { token: user.token, session_id: second.ready.d.session_id, seq: second.ready.s } });
      await moved.dispatch('RESUMED');
      const stillRefused = GatewayClient.connect(b);
      await stillRefused.hello();
      stillRefused.identify(user.token);
      assert.deepEqual(await stillRefused.closed, { code: 4008, reason: 'Too many sessions' });

      // The first session (node a) loses its socket: an identify on node b evicts it.
      await first.client.terminate();
      await new Promise((r) => setTimeout(r, 100));
      const fourth = GatewayClient.connect(b);
      const ready: Frame = await fourth.ready(user.token);
      assert.equal(ready.t, 'READY');
      for (const server of [a, b]) {
        const resumer = GatewayClient.connect(server);
        await resumer.hello();
        resumer.send({ op: 6, d: { token: user.token, session_id: first.ready.d.session_id, seq: first.ready.s } });
        assert.deepEqual(await resumer.next((f) => f.op === 9), { op: 9, d: false });
        await resumer.close();
      }
      assert.equal(a.app.gateway?.registry.get(first.ready.d.session_id), undefined);
      await Promise.all([third.client, moved, fourth].map((c) => c.close()));
    });

    test('a node that shuts down frees the slots it held', async () => {
      const user = await registerUser(b);
      const address = '198.51.100.9';
      const env = {
        DATABASE_URL: a.app.services.config.databaseUrl as string,
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: a.app.services.config.redisPrefix,
        HEARTH_SHARED_OBJECT_DIR: 'true',
        HEARTH_TRUSTED_PROXIES: '127.0.0.1/32',
      };
      const c = await startTestServer(env, {
        secrets,
        gateway: { maxSocketsPerIp: SOCKETS, maxSessionsPerUser: SESSIONS },
      });
      const held: GatewayClient[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const client = GatewayClient.connect(c, undefined, from(address));
        assert.equal((await client.ready(user.token)).t, 'READY');
        held.push(client);
      }
      const refused = GatewayClient.connect(b);
      await refused.hello();
      refused.identify(user.token);
      assert.deepEqual(await refused.closed, { code: 4008, reason: 'Too many sessions' });
      await c.close();
      for (const client of held) await client.closed;
      const sockets = [];
      for (let i = 0; i < SOCKETS; i++) sockets.push(GatewayClient.connect(b, undefined, from(address)));
      for (const client of sockets) assert.equal((await client.hello()).op, 10);
      const fresh = await readyClient(b, user.token);
      assert.equal(fresh.ready.t, 'READY');
      await Promise.all([...sockets, fresh.client].map((client) => client.close()));
    });
  });
