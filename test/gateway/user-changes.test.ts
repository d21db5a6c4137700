import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, befriend, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient } from './gateway-client.ts';

/**
 * A user's new name or avatar reaches the others who see them (docs/gateway.md#user-changes): each guild gets
 * GUILD_MEMBER_UPDATE with the new user (as the member routes send it) and PRESENCE_UPDATE with the changed
 * fields; friends get PRESENCE_UPDATE; a stranger gets nothing; the privileged intents are applied.
 */
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const GUILD_MEMBERS = 1 << 1;
const GUILD_PRESENCES = 1 << 8;
const GUILDS = 1 << 0;

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let dave: TestUser;
let erin: TestUser;
let guild: { id: string; system_channel_id: string };
const open: GatewayClient[] = [];

before(async () => {
  server = await startTestServer();
  [alice, bob, dave, erin] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  guild = await newGuild(server, bob);
  await join(server, bob, alice, guild);
  // Dave is Alice's friend and in no guild with her; Erin shares nothing with her.
  await befriend(server, alice, dave);
});

after(async () => {
  await Promise.all(open.map((client) => client.close().catch(() => {})));
  await server?.close();
});

async function connect(user: TestUser, extra: Record<string, unknown> = {}): Promise<GatewayClient> {
  const client = GatewayClient.connect(server);
  open.push(client);
  await client.ready(user.token, extra);
  return client;
}

const about =
  (event: string, userId: string, check: (d: any) => boolean = () => true) =>
  (f: Frame): boolean =>
    f.op === 0 && f.t === event && f.d?.user?.id === userId && check(f.d);

describe('a user’s new name and avatar', () => {
  it('reach guild members as GUILD_MEMBER_UPDATE and PRESENCE_UPDATE, friends as PRESENCE_UPDATE, strangers not', async () => {
    const aliceGw = await connect(alice);
    const [bobGw, daveGw, erinGw, bobNoMembers] = await Promise.all([
      connect(bob),
      connect(dave),
      connect(erin),
      // Bob again, as a client that asked for neither privileged intent.
      connect(bob, { intents: GUILDS }),
    ]);
    const bobPresences = await connect(bob, { intents: GUILDS | GUILD_PRESENCES });
    const bobMembers = await connect(bob, { intents: GUILDS | GUILD_MEMBERS });

    const patched = await ok(
      as(server, alice, 'PATCH', '/users/@me', {
        username: 'alice_renamed',
        global_name: 'Alice Renamed',
        avatar: PNG,
      }),
    );
    assert.equal(patched.username, 'alice_renamed');
    assert.ok(patched.avatar);

    const renamed = (d: any) => d.global_name === 'Alice Renamed';
    const member = await bobGw.next(about('GUILD_MEMBER_UPDATE', alice.id, (d) => renamed(d.user)));
    const listed = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/members/${alice.id}`));
    assert.deepEqual(member.d, { ...listed, guild_id: guild.id });
    assert.equal(member.d.user.username, 'alice_renamed');
    assert.equal(member.d.user.avatar, patched.avatar);
    assert.ok(Array.isArray(member.d.roles) && typeof member.d.joined_at === 'string');

    const inGuild = await bobGw.next(about('PRESENCE_UPDATE', alice.id, (d) => renamed(d.user)));
    assert.equal(inGuild.d.guild_id, guild.id);
    assert.equal(inGuild.d.status, 'online');
    assert.deepEqual(Object.keys(inGuild.d.user).sort(), ['avatar', 'global_name', 'id', 'username'].sort());
    assert.equal(inGuild.d.user.avatar, patched.avatar);

    const friend = await daveGw.next(about('PRESENCE_UPDATE', alice.id, (d) => renamed(d.user)));
    assert.equal(friend.d.guild_id, undefined);
    assert.equal(friend.d.user.username, 'alice_renamed');
    assert.ok(await daveGw.nothing((f) => f.t === 'GUILD_MEMBER_UPDATE'));

    // Alice's own sessions hear of the member change too (a member of the guild), and of USER_UPDATE.
    await aliceGw.next(about('GUILD_MEMBER_UPDATE', alice.id, (d) => renamed(d.user)));
    await aliceGw.next((f) => f.t === 'USER_UPDATE' && renamed(f.d));

    // Intents: each client gets what it asked for (the full sessions above received both, in that order).
    await bobPresences.next(about('PRESENCE_UPDATE', alice.id, (d) => renamed(d.user)));
    await bobMembers.next(about('GUILD_MEMBER_UPDATE', alice.id, (d) => renamed(d.user)));
    // The last of the fan-out reached everyone once the full-intent session has both; then nothing else comes.
    assert.ok(await bobPresences.nothing((f) => f.t === 'GUILD_MEMBER_UPDATE'));
    assert.ok(await bobMembers.nothing(about('PRESENCE_UPDATE', alice.id, (d) => renamed(d.user))));
    assert.ok(
      await bobNoMembers.nothing((f) => f.t === 'GUILD_MEMBER_UPDATE' || (f.t === 'PRESENCE_UPDATE' && !!f.d.guild_id)),
    );
    // A stranger hears nothing of Alice at all.
    assert.ok(await erinGw.nothing((f) => f.d?.user?.id === alice.id || f.d?.id === alice.id));
  });

  it('READY, a friend’s READY, member lists and op 8 show the new name afterwards', async () => {
    await ok(as(server, alice, 'PATCH', '/users/@me', { global_name: 'Alice Again' }));
    const members = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/members?limit=10`));
    const listed = members.find((m: any) => m.user.id === alice.id);
    assert.equal(listed.user.global_name, 'Alice Again');
    // A new session of Alice's (READY's guilds carry reduced members: ids only); Dave's READY: his friend.
    const aliceGw = GatewayClient.connect(server);
    open.push(aliceGw);
    const ready = await aliceGw.ready(alice.token);
    assert.equal(ready.d.user.global_name, 'Alice Again');
    const daveGw = GatewayClient.connect(server);
    open.push(daveGw);
    const daveReady = await daveGw.ready(dave.token);
    const relationship = daveReady.d.relationships.find((r: any) => r.id === alice.id);
    assert.equal(relationship.user.global_name, 'Alice Again');
    // READY `users` lists each user READY refers to outside guilds once: Dave's friend Alice is there.
    const listedOnce = daveReady.d.users.filter((u: any) => u.id === alice.id);
    assert.equal(listedOnce.length, 1);
    assert.equal(listedOnce[0].global_name, 'Alice Again');
    assert.ok(!daveReady.d.users.some((u: any) => u.id === dave.id), 'not the user itself');
    // Op 8 (members as the gateway lists them).
    const bobGw = await connect(bob);
    bobGw.send({ op: 8, d: { guild_id: guild.id, user_ids: [alice.id] } });
    const chunk = await bobGw.dispatch('GUILD_MEMBERS_CHUNK');
    assert.equal(chunk.d.members[0].user.global_name, 'Alice Again');
  });

  it('a change nobody else sees (the bio) sends neither', async () => {
    const bobGw = await connect(bob);
    await ok(as(server, alice, 'PATCH', '/users/@me', { bio: 'Plays the oboe.' }));
    const withUser = (f: Frame) => f.t === 'PRESENCE_UPDATE' && Object.keys(f.d.user).length > 1;
    assert.ok(await bobGw.nothing((f) => f.t === 'GUILD_MEMBER_UPDATE' || withUser(f)));
  });
});
