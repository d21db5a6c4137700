import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type Frame, type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, befriend, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { VoiceTestClient } from '../support/voice-client.ts';
import { closeVoice, joinVoiceChannel } from '../support/voice-join.ts';

/**
 * A member whose media never connects leaves the room and the voice channel once the bound after the first offer
 * has passed (docs/voice.md#join-admission); shortened here through the harness (`mediaConnectLimitMs`).
 */
const LIMIT_MS = 2000;

let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
let observer: GatewayClient;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];
const sockets: WebSocket[] = [];

before(async () => {
  server = await startTestServer({}, { voice: { mediaConnectLimitMs: LIMIT_MS } });
  owner = await registerUser(server);
  guild = await newGuild(server, owner);
  room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
  ({ client: observer } = await readyClient(server, owner.token));
  gateways.push(observer);
});

after(async () => {
  for (const ws of sockets) ws.terminate();
  await closeVoice({ gateways, voices });
  await server.close();
});

function voiceUpdate(userId: string, channelId: string | null): (f: Frame) => boolean {
  return (f) =>
    f.t === 'VOICE_STATE_UPDATE' &&
    (f.d as { user_id?: string }).user_id === userId &&
    (f.d as { channel_id?: string | null }).channel_id === channelId;
}

/** A signalling client that identifies and then answers nothing: its media can never connect. */
function silentMember(endpoint: string, token: string) {
  const ws = new WebSocket(endpoint);
  sockets.push(ws);
  const messages: { op: string; d: unknown }[] = [];
  let offered: (at: number) => void = () => {};
  const offeredAt = new Promise<number>((resolve) => {
    offered = resolve;
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('error', () => {});
  ws.on('open', () => ws.send(JSON.stringify({ op: 'identify', d: { token } })));
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { op: string; d: unknown };
    messages.push(message);
    if (message.op === 'offer') offered(performance.now());
  });
  return { messages, offeredAt, closed };
}

/** op 4, then the VOICE_SERVER_UPDATE's endpoint and token. */
async function voiceServer(
  user: TestUser,
  guildId: string | null,
  channelId: string,
): Promise<{ gw: GatewayClient; endpoint: string; token: string }> {
  const { client: gw } = await readyClient(server, user.token);
  gateways.push(gw);
  gw.send({ op: 4, d: { guild_id: guildId, channel_id: channelId, self_mute: false, self_deaf: false } });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')).d as { endpoint: string; token: string };
  return { gw, ...update };
}

describe('a member whose media never connects (docs/voice.md#join-admission)', () => {
  it('leaves the room and the voice channel once the bound has passed; a connected member stays', async () => {
    const stayingUser = await registerUser(server);
    await join(server, owner, stayingUser, guild);
    const staying = await joinVoiceChannel(
      server,
      stayingUser,
      { guildId: guild.id, channelId: room },
      { gateways, voices },
    );
    await staying.negotiations(1);
    await observer.next(voiceUpdate(stayingUser.id, room));

    const silentUser = await registerUser(server);
    await join(server, owner, silentUser, guild);
    const { endpoint, token } = await voiceServer(silentUser, guild.id, room);
    await observer.next(voiceUpdate(silentUser.id, room));
    const silent = silentMember(endpoint, token);
    const offeredAt = await silent.offeredAt;

    const left = (await observer.next(voiceUpdate(silentUser.id, null), LIMIT_MS + 5000)).d as Record<string, unknown>;
    const after = performance.now() - offeredAt;
    assert.ok(after >= LIMIT_MS - 50, `removed ${Math.round(after)} ms after the offer, before the bound`);
    assert.equal(left.guild_id, guild.id);
    assert.equal((left.member as { user: { id: string } }).user.id, silentUser.id);
    assert.deepEqual(await silent.closed, { code: 4014, reason: 'Media connection failed' });
    assert.deepEqual(
      silent.messages.filter((m) => m.op === 'closed'),
      [{ op: 'closed', d: { reason: 'failed' } }],
    );
    assert.equal(server.app.sfu?.stats().participants, 1);

    // The member who connected is past the bound too, and stays: nobody else left, the channel still lists them.
    assert.ok(await observer.nothing((f) => f.t === 'VOICE_STATE_UPDATE', 500));
    const { client: late, ready } = await readyClient(server, owner.token);
    gateways.push(late);
    const listed = (
      ready.d as { guilds: { id: string; voice_states: { user_id: string; channel_id: string }[] }[] }
    ).guilds.find((g) => g.id === guild.id)?.voice_states;
    assert.deepEqual(
      listed?.map((v) => [v.user_id, v.channel_id]),
      [[stayingUser.id, room]],
    );
    assert.equal(staying.pc.connectionState, 'connected');
  });

  it('in a DM call: the member leaves the call as at a hang-up, and the last one out ends it', async () => {
    const alice = await registerUser(server);
    const bob = await registerUser(server);
    await befriend(server, alice, bob);
    const dm = (await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }))).id as string;
    const { client: bobGw } = await readyClient(server, bob.token);
    gateways.push(bobGw);
    const { endpoint, token } = await voiceServer(alice, null, dm);
    await bobGw.next(voiceUpdate(alice.id, dm));
    const silent = silentMember(endpoint, token);
    await silent.offeredAt;

    const left = (await bobGw.next(voiceUpdate(alice.id, null), LIMIT_MS + 5000)).d as Record<string, unknown>;
    assert.equal(left.guild_id, null);
    assert.deepEqual((await bobGw.next((f) => f.t === 'CALL_DELETE')).d, { channel_id: dm });
    assert.deepEqual(await silent.closed, { code: 4014, reason: 'Media connection failed' });
  });
});
