import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BUS_SHARDS } from '../../src/platform/state/redis.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { PG_BIN, type ReplicatedPostgres, startReplicatedPostgres } from '../support/pg-replica.ts';
import { REDIS_CLUSTER_AVAILABLE, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.ts';
import { s3Env, startTestS3, type TestS3 } from '../support/s3-server.ts';
import { newTestSecrets, secretsEnv, TEST_TOKEN } from '../support/server.ts';
import { freePort, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';
import { type Frame, GatewayClient, readyClient } from './gateway-client.ts';

/**
 * The multi-node test (docs/deployment.md#several-processes): three real processes started like `npm start`
 * on one PostgreSQL (with a streaming replica when Debian's server binaries are there), a three-master Redis
 * cluster started here from the local `redis-server` (docs/deployment.md#redis-cluster; one Redis, TEST_REDIS_URL,
 * when the binaries are absent, said on stderr) and an S3-compatible store. A and B serve the API, the gateway
 * and media; C only the gateway. Registered when PostgreSQL and Redis are configured (the PostgreSQL and Redis
 * run of CI).
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
/** The cluster-only tests are registered as skipped, with the reason, where redis-server is not installed. */
const withoutCluster = REDIS_CLUSTER_AVAILABLE ? false : 'no Redis cluster (redis-server not installed)';

interface Node {
  name: string;
  url: string;
  port: number;
  spawned: Spawned;
}

if (adminUrl && redisUrl)
  describe('three processes, one instance', { timeout: 180_000 }, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    let cluster: ReplicatedPostgres | undefined;
    let redisCluster: TestRedisCluster | undefined;
    let redisPrefix: string;
    let s3: TestS3;
    let a: Node;
    let b: Node;
    let c: Node;
    let alice: TestUser;
    let bob: TestUser;
    let channelId: string;

    async function database(): Promise<{ url: string; replica?: string }> {
      if (PG_BIN) {
        cluster = await startReplicatedPostgres();
        return { url: cluster.primaryUrl, replica: cluster.replicaUrl };
      }
      const fresh = await createTestDatabase(adminUrl as string, 'three');
      cleanups.push(fresh.drop);
      return { url: fresh.url };
    }

    async function startNode(name: string, roles: string, shared: Record<string, string>): Promise<Node> {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const dataDir = await mkdtemp(join(tmpdir(), `hearth-${name}-`));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const spawned = spawnEntrypoint({
        ...shared,
        PORT: String(port),
        HOST: '127.0.0.1',
        HEARTH_PUBLIC_URL: url,
        HEARTH_DATA_DIR: dataDir,
        HEARTH_ROLES: roles,
      });
      cleanups.push(async () => {
        spawned.child.kill('SIGKILL');
        await spawned.exited;
      });
      return { name, url, port, spawned };
    }

    async function sharedState(): Promise<Record<string, string>> {
      if (!REDIS_CLUSTER_AVAILABLE) {
        process.stderr.write(
          '\n!!! three-nodes.test.ts: redis-server / redis-cli not found on PATH: the three processes share one ' +
            'Redis (TEST_REDIS_URL), not a Redis cluster. Install redis-server (Debian: redis-server, redis-tools).\n\n',
        );
        return { REDIS_URL: redisUrl as string };
      }
      const started = await startRedisCluster();
      redisCluster = started;
      cleanups.push(() => started.close());
      return { REDIS_CLUSTER_NODES: started.nodes.join(',') };
    }

    before(async () => {
      const [db, store, state] = await Promise.all([database(), startTestS3(), sharedState()]);
      s3 = store;
      cleanups.push(() => s3.close());
      await s3.createBucket('hearth');
      const secrets = newTestSecrets();
      redisPrefix = `hearth-three-${randomBytes(6).toString('hex')}:`;
      const shared: Record<string, string> = {
        DATABASE_URL: db.url,
        ...(db.replica ? { DATABASE_REPLICA_URL: db.replica } : {}),
        ...state,
        HEARTH_REDIS_PREFIX: redisPrefix,
        ...s3Env(s3),
        ...secretsEnv(secrets),
        HEARTH_TEST_MODE: '1',
        HEARTH_TEST_TOKEN: TEST_TOKEN,
        HEARTH_TRUSTED_PROXIES: '127.0.0.1/32',
        HEARTH_LOG_LEVEL: 'warn',
      };
      // The first start migrates; the others then find the schema ready.
      a = await startNode('a', 'api,gateway,media', shared);
      await waitForHealth(a.url, a.spawned);
      [b, c] = await Promise.all([startNode('b', 'api,gateway,media', shared), startNode('c', 'gateway', shared)]);
      await Promise.all([waitForHealth(b.url, b.spawned), waitForHealth(c.url, c.spawned)]);

      alice = await registerUser(a);
      bob = await registerUser(b);
      const guild = await request(a, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'three nodes' } });
      assert.equal(guild.status, 200, guild.text);
      channelId = guild.body.system_channel_id;
      const invite = await request(a, 'POST', `/v1/channels/${channelId}/invites`, { auth: alice.token, body: {} });
      assert.equal((await request(b, 'POST', `/v1/invites/${invite.body.code}`, { auth: bob.token })).status, 200);
    });

    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
      await cluster?.close();
    });

    async function say(node: Node, content: string, user: TestUser = alice): Promise<string> {
      const sent = await request(node, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: user.token,
        body: { content },
      });
      assert.equal(sent.status, 200, sent.text);
      return sent.body.id;
    }

    const created = (client: GatewayClient, id: string, timeoutMs = 5000) =>
      client.next((f) => f.t === 'MESSAGE_CREATE' && f.d.id === id, timeoutMs);

    it('a gateway-only node serves no API, and a message sent through one node reaches clients on the others', async () => {
      assert.deepEqual((await request(c, 'GET', '/v1/users/@me', { auth: alice.token })).body, {
        code: 'NOT_FOUND',
        message: 'Not found',
      });
      const onB = await readyClient(b, alice.token);
      const onC = await readyClient(c, bob.token);
      const id = await say(a, 'through a');
      await Promise.all([created(onB.client, id), created(onC.client, id)]);
      await Promise.all([onB.client.close(), onC.client.close()]);
    });

    it('on the Redis cluster, every node listens to every shard of the dispatch topic, the shards spread over the masters', {
      skip: withoutCluster,
    }, async () => {
      const started = redisCluster;
      assert.ok(started, 'the Redis cluster was started');
      const channels = new Map<string, string>();
      for (const node of started.nodes) {
        const raw = started.connect(node);
        const names = (await raw.call('PUBSUB', 'SHARDCHANNELS', `${redisPrefix}bus:*gateway.dispatch`)) as string[];
        for (const name of names) channels.set(name, node);
        // A, B and C each subscribed once to each channel, on the master that owns it.
        const counts: (string | number)[] =
          names.length > 0 ? ((await raw.call('PUBSUB', 'SHARDNUMSUB', ...names)) as (string | number)[]) : [];
        for (let i = 1; i < counts.length; i += 2) assert.equal(Number(counts[i]), 3, String(counts[i - 1]));
        raw.disconnect();
      }
      assert.equal(channels.size, BUS_SHARDS + 1);
      assert.equal(new Set(channels.values()).size, started.nodes.length);
    });

    it('a resume lands on another node and replays what was missed', async () => {
      const { client, ready } = await readyClient(b, bob.token);
      const seen = await created(client, await say(a, 'before the move'));
      await client.terminate();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const missed = [await say(a, 'missed 1'), await say(b, 'missed 2')];
      const moved = GatewayClient.connect(c);
      await moved.hello();
      moved.send({ op: 6, d: { token: bob.token, session_id: ready.d.session_id, seq: seen.s } });
      const replayed: Frame[] = [];
      for (;;) {
        const frame = await moved.next((f) => f.op === 0);
        replayed.push(frame);
        if (frame.t === 'RESUMED') break;
      }
      assert.deepEqual(
        replayed.filter((f) => f.t === 'MESSAGE_CREATE').map((f) => f.d.id),
        missed,
      );
      await moved.close();
    });

    it('a logout on one node closes the socket on another within a second', async () => {
      const carol = await registerUser(a);
      const { client } = await readyClient(c, carol.token);
      const started = Date.now();
      const logout = await request(a, 'POST', '/v1/auth/logout', { auth: carol.token, body: {} });
      assert.equal(logout.status, 204, logout.text);
      const closed = await client.closed;
      assert.equal(closed.code, 4004);
      assert.ok(Date.now() - started < 1000, `closed after ${Date.now() - started} ms`);
    });

    it('rate limits and IP bans hold across nodes', async () => {
      // `POST /auth/forgot`: 5 per 60 s per address (docs/conventions.md#rate-limits), counted on both nodes.
      const strict = { 'x-test-strict': 'true', 'x-forwarded-for': '198.51.100.31' };
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const node = i % 2 === 0 ? a : b;
        const res = await request(node, 'POST', '/v1/auth/forgot', {
          headers: strict,
          body: { email: 'nobody@example.test' },
        });
        statuses.push(res.status);
      }
      assert.deepEqual(statuses, [204, 204, 204, 204, 204, 429]);

      const admin = await registerUser(a);
      assert.equal((await harness(a, 'POST', `/users/${admin.id}/acls`, { acls: ['*'] })).status, 200);
      const ban = await request(a, 'POST', '/v1/admin/bans/ip/add', { auth: admin.token, body: { ip: '192.0.2.77' } });
      assert.equal(ban.status, 200, ban.text);
      for (const node of [b, c]) {
        // The other nodes reload the bans from the database when the bus tells them: within milliseconds, not
        // before A has answered, so they are given up to a second.
        const deadline = Date.now() + 1000;
        let refused = await request(node, 'GET', '/.well-known/service', {
          headers: { 'x-forwarded-for': '192.0.2.77' },
        });
        while (refused.status === 200 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          refused = await request(node, 'GET', '/.well-known/service', {
            headers: { 'x-forwarded-for': '192.0.2.77' },
          });
        }
        assert.equal(refused.status, 403, `${node.name}: ${refused.text}`);
        assert.equal(refused.body.code, 'GLOBAL_IP_BANNED');
      }
    });

    it('an attachment uploaded through one node is served by the other (S3)', async () => {
      const form = new FormData();
      form.append(
        'payload_json',
        JSON.stringify({ content: 'a file', attachments: [{ id: 0, filename: 'data.bin' }] }),
      );
      const bytes = randomBytes(4096);
      form.append('files[0]', new Blob([bytes], { type: 'application/octet-stream' }), 'data.bin');
      const sent = await fetch(`${a.url}/v1/channels/${channelId}/messages`, {
        method: 'POST',
        headers: { authorization: alice.token },
        body: form,
      });
      assert.equal(sent.status, 200, await sent.clone().text());
      const message = (await sent.json()) as { attachments: { url: string }[] };
      const url = new URL(message.attachments[0]?.url as string);
      const fetched = await fetch(`${b.url}${url.pathname}${url.search}`);
      assert.equal(fetched.status, 200);
      assert.deepEqual(Buffer.from(await fetched.arrayBuffer()), bytes);
      assert.ok((await s3.listKeys('hearth')).length > 0, 'the bytes live in the S3 store');
    });

    it("on the Redis cluster, one master's bus connections dropping: every node tells its clients to reconnect", {
      skip: withoutCluster,
    }, async () => {
      const started = redisCluster;
      assert.ok(started, 'the Redis cluster was started');
      // One client on each node: once all three were told, every node has handled its gap.
      const clients = await Promise.all([
        readyClient(a, alice.token),
        readyClient(b, bob.token),
        readyClient(c, alice.token),
      ]);
      const raw = started.connect(started.nodes[0] as string);
      const list = (await raw.call('CLIENT', 'LIST')) as string;
      const ids = list
        .split('\n')
        .filter((line) => line.includes(` name=${redisPrefix}bus `))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1] as string);
      assert.equal(ids.length, 3, 'one bus connection per process on this master');
      for (const id of ids) await raw.call('CLIENT', 'KILL', 'ID', id);
      raw.disconnect();
      for (const { client } of clients) {
        assert.deepEqual(await client.next((f) => f.op === 7, 10_000), { op: 7, d: null });
        assert.equal((await client.closed).code, 4000);
      }
      // Subscribed again: a message published now reaches clients on the other nodes.
      const [onB, onC] = await Promise.all([readyClient(b, alice.token), readyClient(c, bob.token)]);
      const id = await say(a, 'after the bus came back');
      await Promise.all([created(onB.client, id), created(onC.client, id)]);
      await Promise.all([onB.client.close(), onC.client.close()]);
    });

    it('a node killed outright: its clients reconnect to another and nothing sent meanwhile is lost', async () => {
      const { client, ready } = await readyClient(b, bob.token);
      const seen = await created(client, await say(a, 'before the kill'));
      b.spawned.child.kill('SIGKILL');
      assert.equal(await b.spawned.exited, 'SIGKILL');
      await client.closed;
      const meanwhile = [await say(a, 'while b is gone 1'), await say(a, 'while b is gone 2')];

      // Its session died with it: the resume elsewhere is refused (op 9), a fresh identify works.
      const again = GatewayClient.connect(a);
      await again.hello();
      again.send({ op: 6, d: { token: bob.token, session_id: ready.d.session_id, seq: seen.s } });
      const invalid = await again.next((f) => f.op === 9, 15_000);
      assert.equal(invalid.d, false);
      again.identify(bob.token);
      await again.dispatch('READY', 10_000);
      const history = await request(a, 'GET', `/v1/channels/${channelId}/messages?limit=10`, { auth: bob.token });
      assert.equal(history.status, 200, history.text);
      const ids = history.body.map((m: { id: string }) => m.id);
      for (const id of meanwhile) assert.ok(ids.includes(id), `${id} in the history`);
      const live = await say(a, 'after the kill');
      await created(again, live);
      await again.close();
    });
  });
