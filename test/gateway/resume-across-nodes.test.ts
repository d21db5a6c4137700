import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient, readyClient } from './gateway-client.ts';

/**
 * Resume on any node (docs/gateway.md#resume): two processes share PostgreSQL and Redis; a session started on
 * one resumes on the other, with what it missed replayed in order, nothing lost or doubled, and it lives on
 * there. Registered when both are configured (the PostgreSQL and Redis run of CI).
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

if (adminUrl && redisUrl)
  describe('gateway resume across nodes', { timeout: 60_000 }, () => {
    let a: TestServer;
    let b: TestServer;
    let alice: TestUser;
    let bob: TestUser;
    let channelId: string;
    let guildId: string;
    let dropDatabase = async () => {};

    before(async () => {
      const database = await createTestDatabase(adminUrl, 'resume');
      dropDatabase = database.drop;
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: `hearth-resume-${randomBytes(6).toString('hex')}:`,
        HEARTH_SHARED_OBJECT_DIR: 'true',
      };
      const secrets = newTestSecrets();
      a = await startTestServer(env, { secrets });
      b = await startTestServer(env, { secrets });
      alice = await registerUser(a);
      bob = await registerUser(a);
      const guild = await request(a, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'two nodes' } });
      assert.equal(guild.status, 200, guild.text);
      channelId = guild.body.system_channel_id;
      guildId = guild.body.id;
      const invite = await request(a, 'POST', `/v1/channels/${channelId}/invites`, { auth: alice.token, body: {} });
      assert.equal((await request(b, 'POST', `/v1/invites/${invite.body.code}`, { auth: bob.token })).status, 200);
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await dropDatabase();
    });

    async function say(server: TestServer, content: string): Promise<string> {
      const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content },
      });
      assert.equal(sent.status, 200, sent.text);
      return sent.body.id;
    }

    /** Dispatches up to and including RESUMED. */
    async function untilResumed(client: GatewayClient): Promise<Frame[]> {
      const frames: Frame[] = [];
      for (;;) {
        const frame = await client.next((f) => f.op === 0);
        frames.push(frame);
        if (frame.t === 'RESUMED') return frames;
      }
    }

    function messageIds(frames: Frame[]): string[] {
      return frames.filter((f) => f.t === 'MESSAGE_CREATE').map((f) => f.d.id);
    }

    function resume(client: GatewayClient, sessionId: string, seq: number) {
      client.send({ op: 6, d: { token: alice.token, session_id: sessionId, seq } });
    }

    test('a session from one node resumes on the other: missed messages replayed in order, then RESUMED, then live', async () => {
      const { client, ready } = await readyClient(a, alice.token);
      const sessionId = ready.d.session_id;
      await say(a, 'before');
      const seen = await client.dispatch('MESSAGE_CREATE');
      assert.equal(seen.d.content, 'before');
      await client.terminate();
      await new Promise((r) => setTimeout(r, 100));
      // Sent through both nodes while no socket is attached.
      const missed = [await say(b, 'missed 1'), await say(a, 'missed 2'), await say(b, 'missed 3')];

      const again = GatewayClient.connect(b);
      await again.hello();
      resume(again, sessionId, seen.s as number);
      // Everything up to RESUMED is the replay: numbered on from the client's seq without a gap, the missed
      // messages in the order they were sent (presence changes of the guild may sit between them).
      const replayed = await untilResumed(again);
      assert.deepEqual(
        replayed.map((f) => f.s),
        replayed.map((_, i) => (seen.s as number) + 1 + i),
      );
      assert.deepEqual(messageIds(replayed.slice(0, -1)), missed);
      const resumedSeq = replayed.at(-1)?.s as number;
      // Live on the new node, numbered on from the old node's sequence, from either node's API.
      const liveA = await say(a, 'live from a');
      const first = await again.dispatch('MESSAGE_CREATE');
      assert.equal(first.d.id, liveA);
      assert.ok((first.s as number) > resumedSeq);
      const liveB = await say(b, 'live from b');
      const second = await again.dispatch('MESSAGE_CREATE');
      assert.equal(second.d.id, liveB);
      assert.ok((second.s as number) > (first.s as number));
      assert.ok(await again.nothing((f) => f.t === 'MESSAGE_CREATE', 300), 'nothing doubled');
      // The old node no longer holds it; the new one does.
      assert.equal(a.app.gateway?.registry.get(sessionId), undefined);
      assert.ok(b.app.gateway?.registry.get(sessionId));

      // And back: the session moves again, to the first node.
      await again.terminate();
      await new Promise((r) => setTimeout(r, 100));
      const back = await say(b, 'while moving back');
      const third = GatewayClient.connect(a);
      await third.hello();
      resume(third, sessionId, second.s as number);
      const replay = await untilResumed(third);
      assert.deepEqual(messageIds(replay), [back]);
      assert.equal(replay[0]?.s, (second.s as number) + 1);
      await third.close();
    });

    test('a live socket on the old node is closed 4000 when its session resumes on the other', async () => {
      const { client, ready } = await readyClient(a, alice.token);
      const again = GatewayClient.connect(b);
      await again.hello();
      resume(again, ready.d.session_id, ready.s as number);
      await untilResumed(again);
      assert.deepEqual(await client.closed, { code: 4000, reason: 'Session unavailable' });
      // The user is still online: the old socket's close did not take the moved session offline.
      const presences = await b.app.services.presences.getMany([alice.id], Date.now());
      assert.equal(presences.get(alice.id)?.status, 'online');
      await again.close();
    });

    test("another account's token gets 4004; a session no node holds gets op 9", async () => {
      const { client, ready } = await readyClient(a, alice.token);
      await client.terminate();
      const foreign = GatewayClient.connect(b);
      await foreign.hello();
      foreign.send({ op: 6, d: { token: bob.token, session_id: ready.d.session_id, seq: 1 } });
      assert.deepEqual(await foreign.closed, { code: 4004, reason: 'Invalid token' });
      // The session survived the foreign attempt where it was.
      assert.ok(a.app.gateway?.registry.get(ready.d.session_id));

      const unknown = GatewayClient.connect(b);
      await unknown.hello();
      resume(unknown, 'x'.repeat(32), 1);
      assert.deepEqual(await unknown.next(), { op: 9, d: false });
      await unknown.close();
    });

    test('op 14 subscriptions and large_threshold move with the session (docs/gateway.md#large-guilds)', async () => {
      // 2 members + 60 seeded: large for the default threshold (50), not for 250.
      const seeded = await request(a, 'POST', `/v1/test/guilds/${guildId}/members/seed`, {
        harness: true,
        body: { count: 60 },
      });
      assert.equal(seeded.status, 200, seeded.text);
      const witness = GatewayClient.connect(b);
      await witness.ready(alice.token, { intents: 1 | (1 << 8) });
      const subscribed = await readyClient(a, alice.token);
      subscribed.client.send({ op: 14, d: { guild_id: guildId, members: [bob.id] } });
      const highThreshold = GatewayClient.connect(a);
      const highReady = await highThreshold.ready(alice.token, { large_threshold: 250 });
      assert.equal(highReady.d.guilds[0].large, false);
      assert.equal(subscribed.ready.d.guilds[0].large, true);
      // The heartbeat's ACK: op 14 (sent before it on the socket) was applied.
      subscribed.client.send({ op: 1, d: null });
      await subscribed.client.next((f) => f.op === 11);
      const moved: GatewayClient[] = [];
      for (const [client, ready] of [
        [subscribed.client, subscribed.ready],
        [highThreshold, highReady],
      ] as const) {
        await client.terminate();
        const again = GatewayClient.connect(b);
        await again.hello();
        resume(again, ready.d.session_id, ready.s as number);
        await untilResumed(again);
        moved.push(again);
      }
      const unsubscribed = GatewayClient.connect(b);
      await unsubscribed.ready(alice.token);
      const bobGw = await readyClient(a, bob.token);
      const bobOnline = (f: Frame) =>
        f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id && f.d.guild_id === guildId && f.d.status === 'online';
      await witness.next(bobOnline);
      for (const client of moved) await client.next(bobOnline);
      assert.ok(await unsubscribed.nothing(bobOnline));
      for (const client of [witness, unsubscribed, bobGw.client, ...moved]) await client.close(1000);
    });
  });
