import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { type Closed, GatewayClient, readyClient } from './gateway-client.ts';

/**
 * Lost bus messages (docs/gateway.md#across-nodes): two processes share PostgreSQL and Redis. A publisher's
 * number skipped on a topic, or a Redis reconnect, makes every process drop what it derived from the topic:
 * gateway clients are told to reconnect (op 7, close 4000) and must identify afresh when dispatches were lost,
 * cached credentials are forgotten, IP bans and instance settings are read again. The messages are "lost" by
 * publishing envelopes straight to Redis with a number skipped, and by killing the processes' bus connections.
 * Registered when both are configured (the PostgreSQL and Redis run of CI).
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

const METRICS_TOKEN = 'm'.repeat(40);

/** A counter's value in the Prometheus text `/metrics` serves (0 when absent). */
async function gapCount(server: TestServer, topic: string, reason: string): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(res.status, 200);
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith(`hearth_gateway_bus_gaps_total{topic="${topic}",reason="${reason}"} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

const RESYNC: Closed = { code: 4000, reason: 'Events may have been lost; reconnect to continue' };

if (adminUrl && redisUrl)
  describe('bus gaps across nodes', { timeout: 90_000 }, () => {
    let a: TestServer;
    let b: TestServer;
    let alice: TestUser;
    let bob: TestUser;
    let channelId: string;
    let guildId: string;
    let prefix: string;
    let raw: Redis;
    let db: pg.Client;
    let dropDatabase = async () => {};

    before(async () => {
      const database = await createTestDatabase(adminUrl, 'gaps');
      dropDatabase = database.drop;
      prefix = `hearth-gaps-${randomBytes(6).toString('hex')}:`;
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: prefix,
        HEARTH_SHARED_OBJECT_DIR: 'true',
        HEARTH_TRUSTED_PROXIES: '127.0.0.1/32',
        HEARTH_METRICS_TOKEN: METRICS_TOKEN,
        // Only a change's message or a reconnect reloads settings here, never the timer.
        HEARTH_SETTINGS_RELOAD_S: '86400',
      };
      const secrets = newTestSecrets();
      a = await startTestServer(env, { secrets });
      b = await startTestServer(env, { secrets });
      raw = new Redis(redisUrl);
      db = new pg.Client({ connectionString: database.url });
      await db.connect();
      alice = await registerUser(a);
      bob = await registerUser(b);
      const guild = await request(a, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'gaps' } });
      assert.equal(guild.status, 200, guild.text);
      channelId = guild.body.system_channel_id;
      guildId = guild.body.id;
      const invite = await request(a, 'POST', `/v1/channels/${channelId}/invites`, { auth: alice.token, body: {} });
      assert.equal((await request(b, 'POST', `/v1/invites/${invite.body.code}`, { auth: bob.token })).status, 200);
    });
    after(async () => {
      await raw?.quit();
      await db?.end();
      await b?.close();
      await a?.close();
      await dropDatabase();
    });

    /** An envelope as a process would publish it, sent straight to Redis. */
    async function publishRaw(topic: string, origin: string, n: number, message: unknown): Promise<void> {
      await raw.publish(`${prefix}bus:${topic}`, JSON.stringify({ o: origin, n, m: message }));
    }

    const harmless = (n: number) => ({
      event: 'TEST_NOTHING',
      payload: { n },
      audience: { kind: 'users', userIds: [] },
      publishedAt: Date.now(),
    });

    function resume(client: GatewayClient, user: TestUser, sessionId: string, seq: number): void {
      client.send({ op: 6, d: { token: user.token, session_id: sessionId, seq } });
    }

    test('a skipped number on the dispatch topic: clients on both nodes get op 7 and 4000; their resume gets op 9, then identify works', async () => {
      const onA = await readyClient(a, alice.token);
      const onB = await readyClient(b, bob.token);
      const origin = `test-${randomBytes(4).toString('hex')}`;
      // Numbers without a break change nothing.
      await publishRaw('gateway.dispatch', origin, 1, harmless(1));
      await publishRaw('gateway.dispatch', origin, 2, harmless(2));
      assert.ok(await onA.client.nothing((f) => f.op === 7, 300), 'no op 7 without a gap');
      assert.ok(await onB.client.nothing((f) => f.op === 7, 50), 'no op 7 without a gap');
      assert.equal(onA.client.closeInfo, undefined);

      // Number 3 never arrives.
      await publishRaw('gateway.dispatch', origin, 4, harmless(4));
      for (const { client } of [onA, onB]) {
        assert.deepEqual(await client.next((f) => f.op === 7), { op: 7, d: null });
        assert.deepEqual(await client.closed, RESYNC);
      }
      for (const server of [a, b]) assert.equal(await gapCount(server, 'gateway.dispatch', 'sequence'), 1);

      // The replay would miss what was lost: the resume is refused, on the session's node and on the other.
      const same = GatewayClient.connect(a);
      await same.hello();
      resume(same, alice, onA.ready.d.session_id, onA.ready.s as number);
      assert.deepEqual(await same.next((f) => f.op === 9), { op: 9, d: false });
      const other = GatewayClient.connect(a);
      await other.hello();
      const started = Date.now();
      resume(other, bob, onB.ready.d.session_id, onB.ready.s as number);
      assert.deepEqual(await other.next((f) => f.op === 9), { op: 9, d: false });
      assert.ok(Date.now() - started < 1000, 'answered by the holder, not by the hand-off timeout');

      // The same sockets identify and get a READY read from the database.
      same.identify(alice.token);
      assert.equal((await same.dispatch('READY')).d.user.id, alice.id);
      other.identify(bob.token);
      assert.equal((await other.dispatch('READY')).d.user.id, bob.id);
      // The fresh sessions are live: a message sent through b reaches both.
      const sent = await request(b, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'after the gap' },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.equal((await same.dispatch('MESSAGE_CREATE')).d.content, 'after the gap');
      assert.equal((await other.dispatch('MESSAGE_CREATE')).d.content, 'after the gap');
      await same.close();
      await other.close();
    });

    test('a skipped number on auth.invalidate: the node forgets cached credentials; a session deleted meanwhile is refused, its socket cut at the resume', async () => {
      const carol = await registerUser(a);
      const { client, ready } = await readyClient(b, carol.token);
      // Cached on b.
      assert.equal((await request(b, 'GET', '/v1/users/@me', { auth: carol.token })).status, 200);
      // A logout whose messages never reached b.
      await db.query('DELETE FROM sessions WHERE user_id = $1', [carol.id]);
      assert.equal(
        (await request(b, 'GET', '/v1/users/@me', { auth: carol.token })).status,
        200,
        'still cached on b (the revocation was lost)',
      );
      const origin = `test-${randomBytes(4).toString('hex')}`;
      await publishRaw('auth.invalidate', origin, 1, {});
      await publishRaw('auth.invalidate', origin, 3, {});
      assert.deepEqual(await client.next((f) => f.op === 7), { op: 7, d: null });
      assert.deepEqual(await client.closed, RESYNC);
      const me = await request(b, 'GET', '/v1/users/@me', { auth: carol.token });
      assert.equal(me.status, 401, me.text);
      const again = GatewayClient.connect(b);
      await again.hello();
      resume(again, carol, ready.d.session_id, ready.s as number);
      assert.deepEqual(await again.closed, { code: 4004, reason: 'Invalid token' });
    });

    test('a skipped number on chat.invalidate: the node drops its cached guilds; READY shows a change it was never told of', async () => {
      const guildName = async (): Promise<string> => {
        const { client, ready } = await readyClient(b, bob.token);
        await client.close();
        return ready.d.guilds.find((g: { id: string }) => g.id === guildId).name;
      };
      assert.equal(await guildName(), 'gaps');
      // A rename whose invalidation never reached b.
      await db.query('UPDATE guilds SET name = $2 WHERE id = $1', [guildId, 'renamed quietly']);
      assert.equal(await guildName(), 'gaps', 'still cached on b');
      const origin = `test-${randomBytes(4).toString('hex')}`;
      await publishRaw('chat.invalidate', origin, 1, { guildId: '1' });
      await publishRaw('chat.invalidate', origin, 3, { guildId: '1' });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await guildName(), 'renamed quietly');
    });

    test('a Redis reconnect: every node tells its clients to reconnect, forgets credentials, reloads IP bans and settings', async () => {
      const dave = await registerUser(a);
      const onA = await readyClient(a, dave.token);
      const onB = await readyClient(b, dave.token);
      const asBanned = { auth: dave.token, headers: { 'x-forwarded-for': '203.0.113.50' } };
      for (const server of [a, b]) assert.equal((await request(server, 'GET', '/v1/users/@me', asBanned)).status, 200);
      // Changes whose messages are lost with the connections: a manual ban, registration closed, a session gone.
      await db.query('INSERT INTO ip_bans (ip, expires_at, created_by, created_at) VALUES ($1, NULL, NULL, now())', [
        '203.0.113.50',
      ]);
      await db.query(
        `INSERT INTO instance_config (key, value, updated_at) VALUES ('registration', '{"mode":"closed"}', now())
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
      );
      const erin = await registerUser(b);
      assert.equal((await request(a, 'GET', '/v1/users/@me', { auth: erin.token })).status, 200);
      await db.query('DELETE FROM sessions WHERE user_id = $1', [erin.id]);
      for (const server of [a, b]) {
        assert.equal((await request(server, 'GET', '/v1/users/@me', asBanned)).status, 200, 'ban not loaded yet');
        const discovery = await request(server, 'GET', '/.well-known/service');
        assert.equal(discovery.body.registration.mode, 'open', 'settings not reloaded yet');
      }

      // Cut both processes' bus connections; they reconnect on their own.
      const clients = (await raw.call('CLIENT', 'LIST')) as string;
      const ids = clients
        .split('\n')
        .filter((line) => line.includes(` name=${prefix}bus `))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1]);
      assert.equal(ids.length, 2, clients);
      for (const id of ids) await raw.call('CLIENT', 'KILL', 'ID', id as string);

      for (const { client } of [onA, onB]) {
        assert.deepEqual(await client.next((f) => f.op === 7, 10_000), { op: 7, d: null });
        assert.deepEqual(await client.closed, RESYNC);
      }
      for (const server of [a, b]) assert.equal(await gapCount(server, 'gateway.dispatch', 'reconnect'), 1);
      for (const server of [a, b]) {
        const banned = await request(server, 'GET', '/v1/users/@me', asBanned);
        assert.equal(banned.status, 403, banned.text);
        assert.equal(banned.body.code, 'GLOBAL_IP_BANNED');
        const discovery = await request(server, 'GET', '/.well-known/service');
        assert.equal(discovery.body.registration.mode, 'closed');
      }
      assert.equal((await request(a, 'GET', '/v1/users/@me', { auth: erin.token })).status, 401);

      // The bus works again afterwards: a client identified now gets what the other node publishes.
      await db.query('DELETE FROM ip_bans');
      await db.query(`UPDATE instance_config SET value = '{"mode":"open"}' WHERE key = 'registration'`);
      const fresh = await readyClient(a, alice.token);
      const sent = await request(b, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'after the reconnect' },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.equal((await fresh.client.dispatch('MESSAGE_CREATE')).d.content, 'after the reconnect');
      await fresh.client.close();
    });
  });
