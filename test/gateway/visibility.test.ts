import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { as, bits, join, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * A member who loses sight of a channel (an overwrite, a role, a role's permissions) gets CHANNEL_DELETE, one who
 * gains it CHANNEL_CREATE; nobody else does, and a hidden channel's messages and typing stop reaching them.
 */

let server: TestServer;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let ownerGw: GatewayClient;
let adminGw: GatewayClient;
let memberGw: GatewayClient;
let guildId: string;
let generalId: string;
let plansId: string;
let vipId: string;
let vipRoleId: string;

const everyoneDeniesView = () => ({ type: 0, allow: '0', deny: bits(P.VIEW_CHANNEL) });

/** Frames already received and not taken whose event is one of `events` about `channelId`. */
function received(client: GatewayClient, events: string[], channelId: string): Frame[] {
  return client
    .pending()
    .filter(
      (f) => f.op === 0 && events.includes(f.t as string) && (f.d?.id === channelId || f.d?.channel_id === channelId),
    );
}

let barriers = 0;
/**
 * A message in #general that everyone sees, waited for on each client: every dispatch published before it has been
 * delivered by then (one process delivers in bus order), so what a client has not received by now it never will.
 */
async function barrier(clients: GatewayClient[] = [ownerGw, adminGw, memberGw]): Promise<void> {
  const content = `barrier ${++barriers}`;
  await ok(as(server, owner, 'POST', `/channels/${generalId}/messages`, { content }));
  await Promise.all(clients.map((c) => c.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === content)));
}

before(async () => {
  server = await startTestServer();
  [owner, admin, member] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  const guild = await newGuild(server, owner, 'Visibility');
  guildId = guild.id;
  generalId = guild.system_channel_id;
  await join(server, owner, admin, guild);
  await join(server, owner, member, guild);
  const adminRole = await ok(
    as(server, owner, 'POST', `/guilds/${guildId}/roles`, { name: 'Admins', permissions: bits(P.ADMINISTRATOR) }),
  );
  await ok(as(server, owner, 'PUT', `/guilds/${guildId}/members/${admin.id}/roles/${adminRole.id}`), 204);
  plansId = (await ok(as(server, owner, 'POST', `/guilds/${guildId}/channels`, { name: 'plans' }))).id;
  const vipRole = await ok(as(server, owner, 'POST', `/guilds/${guildId}/roles`, { name: 'VIP', permissions: '0' }));
  vipRoleId = vipRole.id;
  vipId = (
    await ok(
      as(server, owner, 'POST', `/guilds/${guildId}/channels`, {
        name: 'vip',
        permission_overwrites: [
          { id: guildId, ...everyoneDeniesView() },
          { id: vipRoleId, type: 0, allow: bits(P.VIEW_CHANNEL), deny: '0' },
        ],
      }),
    )
  ).id;
  [{ client: ownerGw }, { client: adminGw }, { client: memberGw }] = await Promise.all([
    readyClient(server, owner.token),
    readyClient(server, admin.token),
    readyClient(server, member.token),
  ]);
});

after(async () => {
  await Promise.all([ownerGw, adminGw, memberGw].map((c) => c?.close()));
  await server?.close();
});

describe('losing and gaining sight of a channel', () => {
  test('READY lists #plans for the member and not #vip', async () => {
    // The clients connected after the setup: the member's READY is the starting point of what follows.
    const { client, ready } = await readyClient(server, member.token);
    await client.close();
    const guild = ready.d.guilds.find((g: { id: string }) => g.id === guildId);
    const ids = guild.channels.map((c: { id: string }) => c.id);
    assert.ok(ids.includes(plansId));
    assert.ok(!ids.includes(vipId));
  });

  test('an @everyone overwrite denying VIEW_CHANNEL: CHANNEL_DELETE to the member only', async () => {
    await ok(as(server, owner, 'PUT', `/channels/${plansId}/permissions/${guildId}`, everyoneDeniesView()), 204);
    const deleted = await memberGw.dispatch('CHANNEL_DELETE');
    assert.equal(deleted.d.id, plansId);
    assert.equal(deleted.d.guild_id, guildId);
    assert.equal(deleted.d.name, 'plans');
    assert.equal(deleted.d.type, 0);
    // The owner and the admin still see it: they get the update, not a deletion.
    for (const client of [ownerGw, adminGw]) {
      const updated = await client.next((f) => f.t === 'CHANNEL_UPDATE' && f.d.id === plansId);
      assert.deepEqual(
        updated.d.permission_overwrites.map((o: { id: string; deny: string }) => [o.id, o.deny]),
        [[guildId, bits(P.VIEW_CHANNEL)]],
      );
    }
    await barrier();
    for (const client of [ownerGw, adminGw])
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], plansId), []);
    assert.deepEqual(received(memberGw, ['CHANNEL_UPDATE', 'CHANNEL_DELETE', 'CHANNEL_CREATE'], plansId), []);
    // REST agrees.
    const hidden = await as(server, member, 'GET', `/channels/${plansId}`);
    assert.equal(hidden.status, 403);
  });

  test("the hidden channel's messages and typing no longer reach the member", async () => {
    await ok(as(server, owner, 'POST', `/channels/${plansId}/typing`), 204);
    await ok(as(server, owner, 'POST', `/channels/${plansId}/messages`, { content: 'for the eyes of admins' }));
    await adminGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.channel_id === plansId);
    await adminGw.next((f) => f.t === 'TYPING_START' && f.d.channel_id === plansId);
    await barrier();
    assert.deepEqual(received(memberGw, ['MESSAGE_CREATE', 'TYPING_START'], plansId), []);
  });

  test('the overwrite removed: CHANNEL_CREATE to the member (before the update), to nobody else', async () => {
    await ok(as(server, owner, 'DELETE', `/channels/${plansId}/permissions/${guildId}`), 204);
    const created = await memberGw.next((f) => f.t === 'CHANNEL_CREATE' || f.t === 'CHANNEL_UPDATE');
    assert.equal(created.t, 'CHANNEL_CREATE');
    assert.equal(created.d.id, plansId);
    assert.equal(created.d.guild_id, guildId);
    assert.deepEqual(created.d.permission_overwrites, []);
    const updated = await memberGw.next((f) => f.t === 'CHANNEL_UPDATE' && f.d.id === plansId);
    assert.deepEqual(updated.d.permission_overwrites, []);
    for (const client of [ownerGw, adminGw]) await client.next((f) => f.t === 'CHANNEL_UPDATE' && f.d.id === plansId);
    await barrier();
    for (const client of [ownerGw, adminGw])
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], plansId), []);
    // Messages reach the member again.
    await ok(as(server, owner, 'POST', `/channels/${plansId}/messages`, { content: 'welcome back' }));
    await memberGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'welcome back');
  });

  test('a member overwrite denying the member alone', async () => {
    await ok(
      as(server, owner, 'PUT', `/channels/${plansId}/permissions/${member.id}`, {
        type: 1,
        allow: '0',
        deny: bits(P.VIEW_CHANNEL),
      }),
      204,
    );
    const deleted = await memberGw.dispatch('CHANNEL_DELETE');
    assert.equal(deleted.d.id, plansId);
    await ok(as(server, owner, 'DELETE', `/channels/${plansId}/permissions/${member.id}`), 204);
    const created = await memberGw.dispatch('CHANNEL_CREATE');
    assert.equal(created.d.id, plansId);
    await barrier();
    for (const client of [ownerGw, adminGw])
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], plansId), []);
  });

  test('a role added opens #vip (CHANNEL_CREATE after GUILD_MEMBER_UPDATE); removed, it closes it', async () => {
    await ok(as(server, owner, 'PUT', `/guilds/${guildId}/members/${member.id}/roles/${vipRoleId}`), 204);
    const update = await memberGw.next((f) => f.t === 'GUILD_MEMBER_UPDATE' || f.t === 'CHANNEL_CREATE');
    assert.equal(update.t, 'GUILD_MEMBER_UPDATE');
    assert.deepEqual(update.d.roles, [vipRoleId]);
    const created = await memberGw.dispatch('CHANNEL_CREATE');
    assert.equal(created.d.id, vipId);
    assert.equal(created.d.name, 'vip');

    await ok(as(server, owner, 'DELETE', `/guilds/${guildId}/members/${member.id}/roles/${vipRoleId}`), 204);
    const deleted = await memberGw.dispatch('CHANNEL_DELETE');
    assert.equal(deleted.d.id, vipId);
    await barrier();
    for (const client of [ownerGw, adminGw])
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], vipId), []);
    assert.deepEqual(received(memberGw, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], vipId), []);
    await ok(as(server, owner, 'POST', `/channels/${vipId}/messages`, { content: 'vips only' }));
    await adminGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'vips only');
    await barrier();
    assert.deepEqual(received(memberGw, ['MESSAGE_CREATE'], vipId), []);
  });

  test("a role's permissions: @everyone losing VIEW_CHANNEL closes every channel without an allow", async () => {
    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guildId}/roles`))).find(
      (r: { id: string }) => r.id === guildId,
    );
    const withView = BigInt(everyone.permissions);
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guildId}/roles/${guildId}`, {
        permissions: (withView & ~P.VIEW_CHANNEL).toString(),
      }),
    );
    const lost = new Set<string>();
    while (lost.size < 2) lost.add((await memberGw.dispatch('CHANNEL_DELETE')).d.id);
    assert.deepEqual([...lost].sort(), [generalId, plansId].sort());

    await ok(as(server, owner, 'PATCH', `/guilds/${guildId}/roles/${guildId}`, { permissions: withView.toString() }));
    const gained = new Set<string>();
    while (gained.size < 2) gained.add((await memberGw.dispatch('CHANNEL_CREATE')).d.id);
    assert.deepEqual([...gained].sort(), [generalId, plansId].sort());
    await barrier();
    for (const client of [ownerGw, adminGw]) {
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], generalId), []);
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], plansId), []);
    }
    // A change of other bits moves nothing.
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guildId}/roles/${guildId}`, {
        permissions: (withView & ~P.ADD_REACTIONS).toString(),
      }),
    );
    await barrier();
    assert.deepEqual(
      memberGw.pending().filter((f) => f.t === 'CHANNEL_DELETE' || f.t === 'CHANNEL_CREATE'),
      [],
    );
  });

  test('a role deleted: its holders lose what only it opened', async () => {
    await ok(as(server, owner, 'PUT', `/guilds/${guildId}/members/${member.id}/roles/${vipRoleId}`), 204);
    assert.equal((await memberGw.dispatch('CHANNEL_CREATE')).d.id, vipId);
    await ok(as(server, owner, 'DELETE', `/guilds/${guildId}/roles/${vipRoleId}`), 204);
    const deleted = await memberGw.dispatch('CHANNEL_DELETE');
    assert.equal(deleted.d.id, vipId);
    await barrier();
    for (const client of [ownerGw, adminGw])
      assert.deepEqual(received(client, ['CHANNEL_DELETE', 'CHANNEL_CREATE'], vipId), []);
    // The role's overwrite lingers on the channel, but nobody holds the role any more.
    await ok(as(server, owner, 'POST', `/channels/${vipId}/messages`, { content: 'after the role' }));
    await adminGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'after the role');
    await barrier();
    assert.deepEqual(received(memberGw, ['MESSAGE_CREATE'], vipId), []);
  });
});

// Two processes on one PostgreSQL database and one Redis: the change is made on one, the member is connected to
// the other (registered only when both are configured).
if (process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)
  describe('across processes on Redis', () => {
    let a: TestServer;
    let b: TestServer;
    after(async () => {
      await b?.close();
      await a?.close();
    });

    test('an overwrite changed on one process reaches the member connected to the other', async () => {
      const secrets = newTestSecrets();
      a = await startTestServer({ HEARTH_SHARED_OBJECT_DIR: 'true' }, { secrets });
      const { config } = a.app.services;
      b = await startTestServer(
        {
          DATABASE_URL: config.databaseUrl as string,
          HEARTH_REDIS_PREFIX: config.redisPrefix,
          HEARTH_SHARED_OBJECT_DIR: 'true',
        },
        { secrets },
      );
      const [boss, person] = await Promise.all([registerUser(a), registerUser(a)]);
      const guild = await newGuild(a, boss, 'Two nodes');
      await join(a, boss, person, guild);
      const channel = await ok(as(a, boss, 'POST', `/guilds/${guild.id}/channels`, { name: 'backroom' }));
      const { client: personGw } = await readyClient(b, person.token);
      try {
        await ok(as(a, boss, 'PUT', `/channels/${channel.id}/permissions/${guild.id}`, everyoneDeniesView()), 204);
        const deleted = await personGw.dispatch('CHANNEL_DELETE');
        assert.equal(deleted.d.id, channel.id);
        await ok(as(a, boss, 'DELETE', `/channels/${channel.id}/permissions/${guild.id}`), 204);
        const created = await personGw.dispatch('CHANNEL_CREATE');
        assert.equal(created.d.id, channel.id);
      } finally {
        await personGw.close();
      }
    });
  });
