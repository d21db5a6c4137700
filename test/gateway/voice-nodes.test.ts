import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, secretsEnv, TEST_TOKEN } from '../support/server.ts';
import { freePort, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';
import { speakUntil, VoiceTestClient } from '../support/voice-client.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * The `voice` role across processes (docs/voice.md#the-voice-role): one API + gateway process and two
 * voice-only processes on one PostgreSQL and one Redis, started like `npm start`. Both members of a channel are
 * sent to the same voice node, hear each other through it, and when that node is killed both get a
 * VOICE_SERVER_UPDATE for the other node and connect there. Needs TEST_DATABASE_URL and TEST_REDIS_URL (the
 * PostgreSQL and Redis run of CI).
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const skip = adminUrl && redisUrl ? false : 'needs TEST_DATABASE_URL and TEST_REDIS_URL (the PostgreSQL + Redis leg)';

/**
 * Short heartbeats (every third of it), so a dead node's announcement expires within seconds; long enough that a
 * live node on a loaded machine does not miss two heartbeats in a row.
 */
const NODE_TTL_S = 8;

interface Node {
  name: string;
  url: string;
  port: number;
  endpoint: string;
  spawned: Spawned;
}

interface ServerUpdate extends Frame {
  d: { token: string; guild_id: string; endpoint: string };
}

describe('voice nodes: two voice-only processes behind one gateway', { skip, timeout: 240_000 }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const voices: VoiceTestClient[] = [];
  const gateways: GatewayClient[] = [];
  let gateway: Node;
  let voiceNodes: Node[];
  let alice: TestUser;
  let bob: TestUser;
  let guildId: string;
  let roomId: string;
  let inviteCode: string;
  const prefix = `hearth-voicenodes-${randomBytes(6).toString('hex')}:`;

  async function startNode(name: string, roles: string, shared: Record<string, string>): Promise<Node> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const spawned = spawnEntrypoint({
      ...shared,
      PORT: String(port),
      HOST: '127.0.0.1',
      HEARTH_PUBLIC_URL: url,
      HEARTH_ROLES: roles,
    });
    cleanups.push(async () => {
      spawned.child.kill('SIGKILL');
      await spawned.exited;
    });
    return { name, url, port, endpoint: `ws://127.0.0.1:${port}/voice`, spawned };
  }

  before(async () => {
    const database = await createTestDatabase(adminUrl as string, 'voicenodes');
    cleanups.push(() => database.drop());
    // One data directory declared shared: the processes store no object in this test.
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-voicenodes-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const secrets = newTestSecrets();
    const shared: Record<string, string> = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl as string,
      HEARTH_REDIS_PREFIX: prefix,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_SHARED_OBJECT_DIR: 'true',
      ...secretsEnv(secrets),
      HEARTH_TEST_MODE: '1',
      HEARTH_TEST_TOKEN: TEST_TOKEN,
      HEARTH_LOG_LEVEL: 'warn',
      HEARTH_VOICE_NODE_TTL_S: String(NODE_TTL_S),
    };
    // The first start migrates; the voice nodes then find the schema ready.
    gateway = await startNode('gateway', 'api,gateway,media', shared);
    await waitForHealth(gateway.url, gateway.spawned);
    voiceNodes = await Promise.all([startNode('v1', 'voice', shared), startNode('v2', 'voice', shared)]);
    await Promise.all(voiceNodes.map((node) => waitForHealth(node.url, node.spawned)));

    alice = await registerUser(gateway);
    bob = await registerUser(gateway);
    const guild = await request(gateway, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'voice nodes' } });
    assert.equal(guild.status, 200, guild.text);
    guildId = guild.body.id;
    const invite = await request(gateway, 'POST', `/v1/channels/${guild.body.system_channel_id}/invites`, {
      auth: alice.token,
      body: {},
    });
    inviteCode = invite.body.code;
    assert.equal((await request(gateway, 'POST', `/v1/invites/${inviteCode}`, { auth: bob.token })).status, 200);
    const channel = await request(gateway, 'POST', `/v1/guilds/${guildId}/channels`, {
      auth: alice.token,
      body: { name: 'talk', type: 2 },
    });
    assert.equal(channel.status, 200, channel.text);
    roomId = channel.body.id;
  });

  after(async () => {
    await Promise.all(voices.map((voice) => voice.close().catch(() => {})));
    await Promise.all(gateways.map((client) => client.close().catch(() => {})));
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  function connect(update: ServerUpdate): VoiceTestClient {
    const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
    voices.push(voice);
    return voice;
  }

  /** Each hears the other: RTP from one reaches the other through their node. */
  async function hearEachOther(a: VoiceTestClient, b: VoiceTestClient): Promise<void> {
    await Promise.all([a.negotiations(1), b.negotiations(1)]);
    await speakUntil(a, () => (b.received.get(alice.id) ?? 0) >= 10, 'bob hears alice', 20_000);
    await speakUntil(b, () => (a.received.get(bob.id) ?? 0) >= 10, 'alice hears bob', 20_000);
  }

  it('a gateway-only process runs no SFU; both voice nodes announce themselves', async () => {
    const refused = await new Promise<number | 'open'>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/voice`);
      socket.once('open', () => {
        resolve('open');
        socket.close();
      });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('error', () => resolve(0));
    });
    assert.equal(refused, 404);
    // The announcements in Redis (docs/voice.md#the-voice-role): each node's endpoint and load.
    const redis = new Redis(redisUrl as string);
    try {
      const ids = await redis.smembers(`${prefix}voice:nodes`);
      const announced = await Promise.all(
        ids.map(async (id) => JSON.parse((await redis.get(`${prefix}voice:node:${id}`)) ?? 'null')),
      );
      assert.deepEqual(
        announced
          .map((node) => ({ endpoint: node?.endpoint, rooms: node?.rooms, participants: node?.participants }))
          .sort((x, y) => (x.endpoint < y.endpoint ? -1 : 1)),
        voiceNodes
          .map((node) => ({ endpoint: node.endpoint, rooms: 0, participants: 0 }))
          .sort((x, y) => (x.endpoint < y.endpoint ? -1 : 1)),
      );
      const ttl = await redis.pttl(`${prefix}voice:node:${ids[0]}`);
      assert.ok(ttl > 0 && ttl <= NODE_TTL_S * 1000, `announcement expires (${ttl} ms)`);
    } finally {
      redis.disconnect();
    }
    for (const node of voiceNodes) {
      const api = await request(node, 'GET', '/v1/users/@me', { auth: alice.token });
      assert.deepEqual(api.body, { code: 'NOT_FOUND', message: 'Not found' }, `${node.name} serves no API`);
    }
  });

  /** Within `ms`, or an error naming `what`. */
  function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  const moveWaitMs = NODE_TTL_S * 1000 + 10_000;
  const joinRoom = () => ({ op: 4, d: { guild_id: guildId, channel_id: roomId, self_mute: false, self_deaf: false } });
  let onAlice: GatewayClient;
  let onBob: GatewayClient;

  /** Both members' next VOICE_SERVER_UPDATE (after a move): fresh tokens for `to`. */
  async function bothMovedTo(to: Node, before: ServerUpdate[]): Promise<ServerUpdate[]> {
    const moved = (await Promise.all([
      onAlice.dispatch('VOICE_SERVER_UPDATE', moveWaitMs),
      onBob.dispatch('VOICE_SERVER_UPDATE', moveWaitMs),
    ])) as ServerUpdate[];
    moved.forEach((update, index) => {
      assert.equal(update.d.endpoint, to.endpoint);
      assert.equal(update.d.guild_id, guildId);
      assert.notEqual(update.d.token, before[index]?.d.token, 'a fresh token');
    });
    return moved;
  }

  let movedOnce: ServerUpdate[];
  let stalled: Node;
  let secondHost: Node;

  it('two members of one channel are sent to the same voice node and hear each other there; when it stalls both move to the other node, and when it comes back its members there are closed', async () => {
    const clients = await Promise.all([readyClient(gateway, alice.token), readyClient(gateway, bob.token)]);
    [onAlice, onBob] = clients.map((c) => c.client) as [GatewayClient, GatewayClient];
    gateways.push(onAlice, onBob);
    onAlice.send(joinRoom());
    const aliceUpdate = (await onAlice.dispatch('VOICE_SERVER_UPDATE')) as ServerUpdate;
    onBob.send(joinRoom());
    const bobUpdate = (await onBob.dispatch('VOICE_SERVER_UPDATE')) as ServerUpdate;
    assert.equal(bobUpdate.d.endpoint, aliceUpdate.d.endpoint, 'one room, one node');
    const host = voiceNodes.find((node) => node.endpoint === aliceUpdate.d.endpoint);
    assert.ok(host, `${aliceUpdate.d.endpoint} is one of the voice nodes`);
    stalled = host;
    secondHost = voiceNodes.find((node) => node !== host) as Node;

    const aliceVoice = connect(aliceUpdate);
    const bobVoice = connect(bobUpdate);
    await hearEachOther(aliceVoice, bobVoice);

    // The hosting node stalls (SIGSTOP): its announcement expires, so to everyone else it is dead.
    // Resumed as soon as the room has moved: a longer stop would outlast the process's worker-id lease.
    host.spawned.child.kill('SIGSTOP');
    try {
      movedOnce = await bothMovedTo(secondHost, [aliceUpdate, bobUpdate]);
    } finally {
      host.spawned.child.kill('SIGCONT');
    }
    await hearEachOther(connect(movedOnce[0] as ServerUpdate), connect(movedOnce[1] as ServerUpdate));
    // Back, it finds its room assigned elsewhere and closes its members there: no half of a split room.
    const closed = { code: 4006, reason: 'Room moved to another voice node' };
    assert.deepEqual(await within(aliceVoice.closed, 20_000, 'alice closed on the stalled node'), closed);
    assert.deepEqual(await within(bobVoice.closed, 20_000, 'bob closed on the stalled node'), closed);
    assert.ok(aliceVoice.messages.some((m) => m.op === 'closed' && m.d.reason === 'moved'));
  });

  it('when the node hosting the room is killed, both members move to a live node and hear each other there; a newcomer is sent there too', async () => {
    assert.ok(movedOnce, 'the previous test moved the room');
    // The node the room moved to dies without a word; the room goes to the one left (back from its stall).
    secondHost.spawned.child.kill('SIGKILL');
    await secondHost.spawned.exited;
    const moved = await bothMovedTo(stalled, movedOnce);
    await hearEachOther(connect(moved[0] as ServerUpdate), connect(moved[1] as ServerUpdate));

    const carol = await registerUser(gateway);
    assert.equal((await request(gateway, 'POST', `/v1/invites/${inviteCode}`, { auth: carol.token })).status, 200);
    const onCarol = await readyClient(gateway, carol.token);
    gateways.push(onCarol.client);
    onCarol.client.send(joinRoom());
    const carolUpdate = (await onCarol.client.dispatch('VOICE_SERVER_UPDATE')) as ServerUpdate;
    assert.equal(carolUpdate.d.endpoint, stalled.endpoint);
  });
});
