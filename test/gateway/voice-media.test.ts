import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ipKey } from '../../src/platform/net/cidr.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { speakUntil, until, VoiceTestClient } from '../support/voice-client.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

const SPEAK = 1n << 21n;

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

/** op 4 → VOICE_SERVER_UPDATE → signalling socket → first negotiation. */
async function joinVoice(user: TestUser, channelId = room): Promise<{ gw: GatewayClient; voice: VoiceTestClient }> {
  const { client: gw } = await readyClient(server, user.token);
  gateways.push(gw);
  gw.send({ op: 4, d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false } });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
  const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
  voices.push(voice);
  await voice.negotiations(1);
  return { gw, voice };
}

before(async () => {
  // A wide window for the member-list coalescing, so that two joins made together fall in one window on a busy
  // machine too (250 ms outside tests).
  server = await startTestServer({}, { voice: { participantsCoalesceMs: 2000 } });
  [owner, alice, bob, carol] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  guild = await newGuild(server, owner);
  for (const user of [alice, bob, carol]) await join(server, owner, user, guild);
  room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
});

after(async () => {
  await Promise.all(voices.map((v) => v.close().catch(() => {})));
  await Promise.all(gateways.map((g) => g.close()));
  await server.close();
});

describe('embedded SFU (werift clients)', () => {
  it('refuses a signalling socket without a valid token (4004) and one that speaks before identifying (4003)', async () => {
    const endpoint = `${server.url.replace(/^http/, 'ws')}/voice`;
    const bad = new VoiceTestClient(endpoint, 'not-a-real-token');
    voices.push(bad);
    assert.deepEqual(await bad.closed, { code: 4004, reason: 'Authentication failed' });
    const early = new WebSocket(endpoint);
    await new Promise((r) => early.once('open', r));
    early.send(JSON.stringify({ op: 'answer', d: { sdp: 'x' } }));
    const code = await new Promise((r) => early.once('close', (c) => r(c)));
    assert.equal(code, 4003);
  });

  it('two members each receive the other’s RTP; server mute stops forwarding at the SFU; speaking is announced', async () => {
    const a = await joinVoice(alice);
    const b = await joinVoice(bob);
    await speakUntil(a.voice, () => (b.voice.received.get(alice.id) ?? 0) >= 10, 'bob hears alice');
    await speakUntil(b.voice, () => (a.voice.received.get(bob.id) ?? 0) >= 10, 'alice hears bob');
    assert.ok(b.voice.messages.some((m) => m.op === 'speaking' && m.d.user_id === alice.id && m.d.speaking === true));

    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/members/${bob.id}`, { mute: true }));
    await a.gw.next((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as any).user_id === bob.id && (f.d as any).mute);
    const before = a.voice.received.get(bob.id) ?? 0;
    await b.voice.speak(25);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(a.voice.received.get(bob.id) ?? 0, before, 'nothing from a server-muted member');
    // Alice still reaches Bob: mute is one-way.
    const heard = b.voice.received.get(alice.id) ?? 0;
    await speakUntil(a.voice, () => (b.voice.received.get(alice.id) ?? 0) >= heard + 5, 'bob still hears alice');

    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/members/${bob.id}`, { mute: false }));
    await a.gw.next((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as any).user_id === bob.id && !(f.d as any).mute);
    await speakUntil(b.voice, () => (a.voice.received.get(bob.id) ?? 0) > before + 5, 'unmuted bob is heard');
  });

  it('a member without SPEAK is forwarded to nobody', async () => {
    await ok(
      as(server, owner, 'PUT', `/channels/${room}/permissions/${carol.id}`, {
        type: 1,
        allow: '0',
        deny: SPEAK.toString(),
      }),
      204,
    );
    const c = await joinVoice(carol);
    const listeners = voices.filter((v) => v !== c.voice && v.messages.some((m) => m.op === 'ready'));
    const droppedBefore = server.app.sfu?.stats().dropped ?? 0;
    await speakUntil(
      c.voice,
      () => (server.app.sfu?.stats().dropped ?? 0) >= droppedBefore + 20,
      'carol reaches the SFU',
    );
    await new Promise((r) => setTimeout(r, 300));
    for (const listener of listeners) assert.equal(listener.received.get(carol.id) ?? 0, 0);
  });

  it('refuses the signalling upgrade from a banned address with 403, like the Gateway', async () => {
    const { ipBans } = server.app.services;
    const key = ipKey('127.0.0.1');
    await ipBans.ban({ ip: key, kind: 'automatic', expiresAt: Date.now() + 60_000 });
    try {
      const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/voice`);
      const status = await new Promise<number>((resolve) => {
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => resolve(101));
        ws.once('error', () => {});
      });
      assert.equal(status, 403);
    } finally {
      await ipBans.remove(key);
    }
  });

  it('a disconnect by a moderator closes the member’s media socket with 4014', async () => {
    const target = voices.find((v) => v.messages.some((m) => m.op === 'ready' && m.d.user_id === carol.id));
    assert.ok(target);
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/members/${carol.id}`, { channel_id: null }));
    assert.deepEqual(await target.closed, { code: 4014, reason: 'Disconnected' });
  });

  it('a member who joins while someone is speaking is told at once (speaking frames only mark changes)', async () => {
    const lounge = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'lounge', type: 2 })))
      .id;
    const a = await joinVoice(alice, lounge);
    const b = await joinVoice(bob, lounge);
    // Alice talks without a pause (no change of her speaking state) while the owner joins.
    let joined: { voice: VoiceTestClient } | undefined;
    await speakUntil(
      a.voice,
      () => b.voice.messages.some((m) => m.op === 'speaking' && m.d.user_id === alice.id && m.d.speaking),
      'bob hears alice speaking',
    );
    let done = false;
    const talking = (async () => {
      while (!done) await a.voice.speak(1);
    })();
    try {
      joined = await joinVoice(owner, lounge);
      const late = joined.voice;
      await until(
        () => late.messages.some((m) => m.op === 'speaking' && m.d.user_id === alice.id && m.d.speaking === true),
        'the newcomer hears that alice is speaking',
      );
    } finally {
      done = true;
      await talking;
    }
  });
  it('tells a joining member who is connected at once, and the others one list per burst of joins', async () => {
    const hall = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'hall', type: 2 }))).id;
    const lists = (voice: VoiceTestClient) =>
      voice.messages.filter((m) => m.op === 'participants').map((m) => [...(m.d.user_ids as string[])].sort());
    const a = await joinVoice(alice, hall);
    assert.deepEqual(lists(a.voice)[0], [alice.id]);
    // Two join at once (their signalling sockets opened together): each hears the list as it was when it joined,
    // alice hears both in one list.
    const updates = await Promise.all(
      [bob, carol].map(async (user) => {
        const { client: gw } = await readyClient(server, user.token);
        gateways.push(gw);
        gw.send({ op: 4, d: { guild_id: guild.id, channel_id: hall, self_mute: false, self_deaf: false } });
        return (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
      }),
    );
    const [b, c] = updates.map((update) => {
      const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
      voices.push(voice);
      return { voice };
    }) as [{ voice: VoiceTestClient }, { voice: VoiceTestClient }];
    await Promise.all([b.voice.negotiations(1), c.voice.negotiations(1)]);
    const everyone = [alice.id, bob.id, carol.id].sort();
    await until(
      () => [a, b, c].every(({ voice }) => JSON.stringify(lists(voice).at(-1)) === JSON.stringify(everyone)),
      'everyone hears the whole list',
    );
    assert.ok(lists(b.voice)[0]?.includes(bob.id), 'bob’s first list, at his join, names him');
    assert.ok(lists(c.voice)[0]?.includes(carol.id), 'carol’s first list, at her join, names her');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(lists(a.voice).length, 2, `alice got one list for the two joins: ${JSON.stringify(lists(a.voice))}`);
    // A leave is announced to those who stay.
    await c.voice.close();
    const rest = [alice.id, bob.id].sort();
    await until(() => JSON.stringify(lists(a.voice).at(-1)) === JSON.stringify(rest), 'alice hears carol left');
  });
});
