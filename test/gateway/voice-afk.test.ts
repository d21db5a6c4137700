import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

// The AFK timeout runs on the server's clock: the tests shift it (POST /test/clock) instead of waiting minutes.
// The sweep runs every 500 ms in test mode, so "not moved" is checked over several sweeps.

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: { id: string; system_channel_id: string };
const clients: GatewayClient[] = [];

async function gateway(user: TestUser): Promise<{ client: GatewayClient; ready: Frame }> {
  const opened = await readyClient(server, user.token);
  clients.push(opened.client);
  return opened;
}

async function voiceChannel(name = 'v'): Promise<string> {
  const channel = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name, type: 2 }));
  return channel.id;
}

function op4(client: GatewayClient, channelId: string | null, flags: Record<string, unknown> = {}): void {
  client.send({
    op: 4,
    d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false, ...flags },
  });
}

const voiceUpdate =
  (userId: string, channelId: string | null, extra: (d: any) => boolean = () => true) =>
  (f: Frame) =>
    f.t === 'VOICE_STATE_UPDATE' &&
    (f.d as any).user_id === userId &&
    (f.d as any).channel_id === channelId &&
    extra(f.d);

before(async () => {
  server = await startTestServer();
  [owner, alice, bob] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  guild = await newGuild(server, owner);
  await join(server, owner, alice, guild);
  await join(server, owner, bob, guild);
});

afterEach(async () => {
  await setClock(server, 0);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

describe('AFK channel and timeout', () => {
  it('PATCH /guilds/{id} takes a voice channel as afk_channel_id and only Discord’s afk_timeout values', async () => {
    const afk = await voiceChannel('afk');
    const bad = await as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_timeout: 120 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
    const text = await as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: guild.system_channel_id });
    assert.equal(text.status, 400);
    const updated = await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: afk, afk_timeout: 60 }),
    );
    assert.equal(updated.afk_channel_id, afk);
    assert.equal(updated.afk_timeout, 60);
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: null }));
  });

  it('a member idle for afk_timeout is moved to the AFK channel, suppressed; an op 4 counts as activity', async () => {
    const afk = await voiceChannel('afk');
    const room = await voiceChannel('room');
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: afk, afk_timeout: 60 }));
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw, ready } = await gateway(alice);
    const session = (ready.d as any).session_id;

    op4(aliceGw, room);
    await ownerGw.next(voiceUpdate(alice.id, room));
    const first = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;

    // 30 s in, Alice mutes herself: the 60 s now count from there.
    await setClock(server, 30_000);
    op4(aliceGw, room, { self_mute: true });
    await ownerGw.next(voiceUpdate(alice.id, room, (d) => d.self_mute === true));
    await setClock(server, 75_000);
    assert.ok(await ownerGw.nothing(voiceUpdate(alice.id, afk), 1500), 'moved before afk_timeout');

    await setClock(server, 91_000);
    const moved = (await ownerGw.next(voiceUpdate(alice.id, afk))).d as any;
    const { member, ...state } = moved;
    assert.deepEqual(state, {
      guild_id: guild.id,
      channel_id: afk,
      user_id: alice.id,
      session_id: session,
      deaf: false,
      mute: false,
      self_deaf: false,
      self_mute: true,
      self_video: false,
      self_stream: false,
      suppress: true,
      request_to_speak_timestamp: null,
    });
    assert.equal(member.user.id, alice.id);
    // The moved session gets a token for the AFK channel's room.
    const second = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    assert.equal(second.guild_id, guild.id);
    assert.notEqual(second.token, first.token);
    assert.equal((await server.app.services.voice.stateOf(guild.id, alice.id))?.channel_id, afk);

    // Parked in the AFK channel, nothing more happens.
    await setClock(server, 400_000);
    assert.ok(await ownerGw.nothing((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as any).user_id === alice.id, 1500));

    // Joining the AFK channel directly: suppressed there too; leaving it again un-suppresses.
    const { client: bobGw } = await gateway(bob);
    op4(bobGw, afk);
    assert.equal(((await ownerGw.next(voiceUpdate(bob.id, afk))).d as any).suppress, true);
    op4(bobGw, room);
    assert.equal(((await ownerGw.next(voiceUpdate(bob.id, room))).d as any).suppress, false);
    op4(bobGw, null);
    op4(aliceGw, null);
    await ownerGw.next(voiceUpdate(bob.id, null));
    await ownerGw.next(voiceUpdate(alice.id, null));
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: null }));
  });

  it('without an AFK channel nobody is moved; a 3600 s timeout waits the full hour', async () => {
    const room = await voiceChannel('room');
    const { client: ownerGw } = await gateway(owner);
    const { client: bobGw } = await gateway(bob);
    op4(bobGw, room);
    await ownerGw.next(voiceUpdate(bob.id, room));
    await setClock(server, 120_000);
    assert.ok(await ownerGw.nothing((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as any).user_id === bob.id, 1500));

    // An AFK channel set later: Bob's idle time counts from his join, against the hour.
    const afk = await voiceChannel('afk');
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_channel_id: afk, afk_timeout: 3600 }));
    await setClock(server, 1_800_000);
    assert.ok(await ownerGw.nothing(voiceUpdate(bob.id, afk), 1500), 'moved after half the timeout');
    await setClock(server, 3_700_000);
    const moved = (await ownerGw.next(voiceUpdate(bob.id, afk))).d as any;
    assert.equal(moved.suppress, true);
    op4(bobGw, null);
    await ownerGw.next(voiceUpdate(bob.id, null));
  });
});
