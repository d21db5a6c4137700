import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, bits, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

const CONNECT = 1n << 20n;
const SPEAK = 1n << 21n;
const STREAM = 1n << 9n;
const MOVE_MEMBERS = 1n << 24n;
const MUTE_MEMBERS = 1n << 22n;

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let outsider: TestUser;
let guild: { id: string; system_channel_id: string };
let lounge: string;
let studio: string;
const clients: GatewayClient[] = [];

async function gateway(user: TestUser): Promise<{ client: GatewayClient; ready: Frame }> {
  const opened = await readyClient(server, user.token);
  clients.push(opened.client);
  return opened;
}

async function voiceChannel(body: Record<string, unknown> = {}): Promise<string> {
  const channel = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'v', type: 2, ...body }));
  return channel.id;
}

function op4(client: GatewayClient, channelId: string | null, flags: Record<string, unknown> = {}): void {
  client.send({
    op: 4,
    d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false, ...flags },
  });
}

const voiceUpdate =
  (userId: string, channelId: string | null = null, extra: (d: any) => boolean = () => true) =>
  (f: Frame) =>
    f.t === 'VOICE_STATE_UPDATE' &&
    (f.d as any).user_id === userId &&
    (f.d as any).channel_id === channelId &&
    extra(f.d);
const anyVoiceUpdateOf = (userId: string) => (f: Frame) =>
  f.t === 'VOICE_STATE_UPDATE' && (f.d as any).user_id === userId;

before(async () => {
  server = await startTestServer();
  [owner, alice, bob, outsider] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  guild = await newGuild(server, owner);
  await join(server, owner, alice, guild);
  await join(server, owner, bob, guild);
  lounge = await voiceChannel();
  studio = await voiceChannel();
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

describe('voice state over the gateway', () => {
  it('announces voice in discovery', async () => {
    const res = await request(server, 'GET', '/.well-known/service');
    assert.equal(res.status, 200);
    assert.equal(res.body.features.voice_enabled, true);
  });

  it('join: VOICE_STATE_UPDATE to the guild, VOICE_SERVER_UPDATE to the joining session only; READY lists the state', async () => {
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw, ready } = await gateway(alice);
    const { client: aliceOther } = await gateway(alice);
    const aliceSession = (ready.d as any).session_id;
    op4(aliceGw, lounge, { self_mute: true });

    const seen = await ownerGw.next(voiceUpdate(alice.id, lounge));
    const state = seen.d as any;
    assert.deepEqual(
      {
        guild_id: state.guild_id,
        session_id: state.session_id,
        self_mute: state.self_mute,
        self_deaf: state.self_deaf,
        self_video: state.self_video,
        self_stream: state.self_stream,
        mute: state.mute,
        deaf: state.deaf,
        suppress: state.suppress,
        request_to_speak_timestamp: state.request_to_speak_timestamp,
      },
      {
        guild_id: guild.id,
        session_id: aliceSession,
        self_mute: true,
        self_deaf: false,
        self_video: false,
        self_stream: false,
        mute: false,
        deaf: false,
        suppress: false,
        request_to_speak_timestamp: null,
      },
    );
    assert.equal(state.member.user.id, alice.id);
    await aliceGw.next(voiceUpdate(alice.id, lounge));
    const server_ = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    assert.equal(server_.guild_id, guild.id);
    assert.equal(server_.endpoint, `${server.url.replace(/^http/, 'ws')}/voice`);
    assert.match(server_.token, /^[A-Za-z0-9]{40}$/);
    assert.ok(await ownerGw.nothing((f) => f.t === 'VOICE_SERVER_UPDATE'));
    assert.ok(await aliceOther.nothing((f) => f.t === 'VOICE_SERVER_UPDATE', 100));

    // A session identifying now sees Alice in the guild's voice_states (no guild_id inside, as in Discord).
    const { ready: bobReady } = await gateway(bob);
    const g = (bobReady.d as any).guilds.find((x: any) => x.id === guild.id);
    const listed = g.voice_states.find((s: any) => s.user_id === alice.id);
    assert.equal(listed.channel_id, lounge);
    assert.equal(listed.session_id, aliceSession);
    assert.equal(listed.guild_id, undefined);

    // Someone joining the guild now gets the voice states in GUILD_CREATE.
    const newcomer = await registerUser(server);
    const { client: newcomerGw } = await gateway(newcomer);
    await join(server, owner, newcomer, guild);
    const created = (await newcomerGw.next((f) => f.t === 'GUILD_CREATE' && (f.d as any).id === guild.id)).d as any;
    assert.equal(created.voice_states.find((s: any) => s.user_id === alice.id)?.channel_id, lounge);

    // Flags change without a new token; a move mints a new one; leaving announces channel_id null.
    op4(aliceGw, lounge, { self_mute: false, self_deaf: true });
    const deafened = (await ownerGw.next(voiceUpdate(alice.id, lounge, (d) => d.self_deaf === true))).d as any;
    assert.equal(deafened.self_mute, true, 'deafening oneself implies self-mute');
    assert.ok(await aliceGw.nothing((f) => f.t === 'VOICE_SERVER_UPDATE'));
    op4(aliceGw, studio);
    await ownerGw.next(voiceUpdate(alice.id, studio));
    const moved = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    assert.notEqual(moved.token, server_.token);
    op4(aliceGw, null);
    await ownerGw.next(voiceUpdate(alice.id, null));
    assert.deepEqual(await server.app.services.voice.statesOf(guild.id), []);
  });

  it('refuses without CONNECT, in a text channel, in a full channel, in a guild not joined; 4002 on a malformed op 4', async () => {
    const noConnect = await voiceChannel({
      permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: CONNECT.toString() }],
    });
    const full = await voiceChannel({ user_limit: 1 });
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw } = await gateway(alice);
    const { client: bobGw } = await gateway(bob);
    const { client: outsiderGw } = await gateway(outsider);

    op4(aliceGw, noConnect);
    op4(aliceGw, guild.system_channel_id);
    op4(outsiderGw, lounge);
    assert.ok(await ownerGw.nothing(anyVoiceUpdateOf(alice.id)));
    assert.ok(await ownerGw.nothing(anyVoiceUpdateOf(outsider.id), 50));
    assert.ok(await aliceGw.nothing((f) => f.t === 'VOICE_SERVER_UPDATE', 50));

    // user_limit 1: Bob is in, Alice is refused, the owner (MOVE_MEMBERS through ownership) gets in anyway.
    op4(bobGw, full);
    await ownerGw.next(voiceUpdate(bob.id, full));
    op4(aliceGw, full);
    assert.ok(await ownerGw.nothing(anyVoiceUpdateOf(alice.id)));
    op4(ownerGw, full);
    await bobGw.next(voiceUpdate(owner.id, full));
    // After a refusal the same session can still join elsewhere.
    op4(aliceGw, lounge);
    await ownerGw.next(voiceUpdate(alice.id, lounge));

    op4(aliceGw, null);
    op4(bobGw, null);
    op4(ownerGw, null);
    await ownerGw.next(voiceUpdate(owner.id, null));

    aliceGw.send({ op: 4, d: { guild_id: guild.id, channel_id: 'nope' } });
    const closed = await aliceGw.closed;
    assert.deepEqual(closed, { code: 4002, reason: 'Invalid payload' });
  });

  it('without SPEAK a member is suppressed; without STREAM video and stream flags stay off', async () => {
    const quiet = await voiceChannel({
      permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: bits(SPEAK, STREAM) }],
    });
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw } = await gateway(alice);
    op4(aliceGw, quiet, { self_video: true, self_stream: true });
    const state = (await ownerGw.next(voiceUpdate(alice.id, quiet))).d as any;
    assert.equal(state.suppress, true);
    assert.equal(state.self_video, false);
    assert.equal(state.self_stream, false);
    op4(aliceGw, lounge, { self_video: true, self_stream: true });
    const open = (await ownerGw.next(voiceUpdate(alice.id, lounge))).d as any;
    assert.equal(open.suppress, false);
    assert.equal(open.self_video, true);
    assert.equal(open.self_stream, true);
    op4(aliceGw, null);
    await ownerGw.next(voiceUpdate(alice.id, null));
  });

  it('server mute, deafen, move and disconnect through PATCH /guilds/{id}/members/{uid}', async () => {
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw } = await gateway(alice);
    const { client: bobGw } = await gateway(bob);
    const member = (user: TestUser) => `/guilds/${guild.id}/members/${user.id}`;

    // Not connected: a move is refused with Discord's 40032-like code; mute alone is stored.
    const notConnected = await as(server, owner, 'PATCH', member(alice), { channel_id: studio });
    assert.equal(notConnected.status, 400);
    assert.equal(notConnected.body.code, 'TARGET_NOT_CONNECTED_TO_VOICE');

    op4(aliceGw, lounge);
    await ownerGw.next(voiceUpdate(alice.id, lounge));
    await bobGw.next(voiceUpdate(alice.id, lounge));
    await aliceGw.dispatch('VOICE_SERVER_UPDATE');

    // Bob has no MUTE_MEMBERS / MOVE_MEMBERS.
    for (const body of [{ mute: true }, { deaf: true }, { channel_id: studio }, { channel_id: null }]) {
      const denied = await as(server, bob, 'PATCH', member(alice), body);
      assert.equal(denied.status, 403, JSON.stringify(body));
      assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    }
    assert.ok(await bobGw.nothing(anyVoiceUpdateOf(alice.id), 100));

    await ok(as(server, owner, 'PATCH', member(alice), { mute: true, deaf: true }));
    const muted = (await bobGw.next(voiceUpdate(alice.id, lounge, (d) => d.mute && d.deaf))).d as any;
    assert.equal(muted.member.mute, true);

    await ok(as(server, owner, 'PATCH', member(alice), { channel_id: studio }));
    await bobGw.next(voiceUpdate(alice.id, studio, (d) => d.mute === true));
    const token = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    assert.equal(token.guild_id, guild.id);

    const unknown = await as(server, owner, 'PATCH', member(alice), { channel_id: guild.system_channel_id });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_CHANNEL');

    await ok(as(server, owner, 'PATCH', member(alice), { channel_id: null }));
    await bobGw.next(voiceUpdate(alice.id, null));
    await ok(as(server, owner, 'PATCH', member(alice), { mute: false, deaf: false }));
  });

  it('a role with MOVE_MEMBERS and MUTE_MEMBERS moderates; the destination must admit the mover', async () => {
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'mod',
        permissions: bits(MOVE_MEMBERS, MUTE_MEMBERS),
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${bob.id}/roles/${role.id}`), 204);
    const closed = await voiceChannel({
      permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: CONNECT.toString() }],
    });
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw } = await gateway(alice);
    op4(aliceGw, lounge);
    await ownerGw.next(voiceUpdate(alice.id, lounge));
    const refused = await as(server, bob, 'PATCH', `/guilds/${guild.id}/members/${alice.id}`, { channel_id: closed });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'MISSING_PERMISSIONS');
    await ok(as(server, bob, 'PATCH', `/guilds/${guild.id}/members/${alice.id}`, { mute: true }));
    await ownerGw.next(voiceUpdate(alice.id, lounge, (d) => d.mute === true));
    await ok(as(server, bob, 'PATCH', `/guilds/${guild.id}/members/${alice.id}`, { channel_id: studio }));
    await ownerGw.next(voiceUpdate(alice.id, studio));
    await ok(as(server, bob, 'PATCH', `/guilds/${guild.id}/members/${alice.id}`, { mute: false, channel_id: null }));
    await ownerGw.next(voiceUpdate(alice.id, null));
  });

  it('a session that ends leaves its channel; a session that drops keeps it for the resume window', async () => {
    const { client: ownerGw } = await gateway(owner);
    const { client: aliceGw } = await gateway(alice);
    op4(aliceGw, lounge);
    await ownerGw.next(voiceUpdate(alice.id, lounge));
    await aliceGw.close(1000);
    const left = (await ownerGw.next(voiceUpdate(alice.id, null))).d as any;
    assert.equal(left.guild_id, guild.id);

    const { client: dropping } = await gateway(alice);
    op4(dropping, lounge);
    await ownerGw.next(voiceUpdate(alice.id, lounge));
    await dropping.terminate();
    assert.ok(await ownerGw.nothing(anyVoiceUpdateOf(alice.id)));
    assert.equal((await server.app.services.voice.stateOf(guild.id, alice.id))?.channel_id, lounge);
  });
});
