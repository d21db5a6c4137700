import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, bits, DispatchRecorder, guildWithMembers, join, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
});
after(async () => {
  events?.close();
  await server?.close();
});

describe('roles', () => {
  let owner: TestUser;
  let mod: TestUser;
  let user: TestUser;
  let guild: any;
  let modRole: any;
  before(async () => {
    const setup = await guildWithMembers(server, 2);
    owner = setup.owner;
    [mod, user] = setup.members as [TestUser, TestUser];
    guild = setup.guild;
    modRole = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'mods',
        permissions: bits(P.MANAGE_ROLES, P.KICK_MEMBERS, P.BAN_MEMBERS, P.MANAGE_NICKNAMES, P.MODERATE_MEMBERS),
        color: 0xff0000,
        hoist: true,
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${mod.id}/roles/${modRole.id}`), 204);
  });

  it('creates roles just above @everyone with the given fields, dispatching GUILD_ROLE_CREATE', async () => {
    events.clear();
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'helpers', mentionable: true }),
    );
    assert.equal(role.name, 'helpers');
    assert.equal(role.position, 1);
    assert.equal(role.permissions, '0');
    assert.equal(role.mentionable, true);
    assert.equal(role.hoist, false);
    assert.equal(role.color, 0);
    const created = events.one('GUILD_ROLE_CREATE');
    assert.deepEqual(created.audience, { kind: 'guild', guildId: guild.id });
    assert.equal((created.payload.role as any).id, role.id);
    const roles = await ok(as(server, user, 'GET', `/guilds/${guild.id}/roles`));
    const mods = roles.find((r: any) => r.id === modRole.id);
    assert.equal(mods.position, 2, 'the older role moved up');
    assert.equal(mods.color, 0xff0000);
  });

  it('refuses members without MANAGE_ROLES and grants of bits the caller lacks', async () => {
    const denied = await as(server, user, 'POST', `/guilds/${guild.id}/roles`, { name: 'x' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    const escalate = await as(server, mod, 'POST', `/guilds/${guild.id}/roles`, {
      name: 'x',
      permissions: bits(P.ADMINISTRATOR),
    });
    assert.equal(escalate.status, 403);
    assert.equal(escalate.body.code, 'MISSING_PERMISSIONS');
    const own = await as(server, mod, 'POST', `/guilds/${guild.id}/roles`, {
      name: 'kickers',
      permissions: bits(P.KICK_MEMBERS),
    });
    assert.equal(own.status, 200);
  });

  it('enforces the hierarchy: a role at or above the caller top role is off limits', async () => {
    const sameLevel = await as(server, mod, 'PATCH', `/guilds/${guild.id}/roles/${modRole.id}`, { name: 'super mods' });
    assert.equal(sameLevel.status, 403);
    assert.equal(sameLevel.body.code, 'MISSING_PERMISSIONS');
    const low = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'low' }));
    events.clear();
    const edited = await ok(
      as(server, mod, 'PATCH', `/guilds/${guild.id}/roles/${low.id}`, { name: 'lower', color: 0x00ff00 }),
    );
    assert.equal(edited.name, 'lower');
    assert.equal(edited.color, 0x00ff00);
    assert.equal((events.one('GUILD_ROLE_UPDATE').payload.role as any).name, 'lower');
    const above = await as(server, mod, 'PATCH', `/guilds/${guild.id}/roles`, [{ id: low.id, position: 50 }]);
    assert.equal(above.body.code, 'MISSING_PERMISSIONS');
    const deleteMine = await as(server, mod, 'DELETE', `/guilds/${guild.id}/roles/${modRole.id}`);
    assert.equal(deleteMine.body.code, 'MISSING_PERMISSIONS');
  });

  it('reorders roles and dispatches GUILD_ROLE_UPDATE_BULK', async () => {
    const a = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'a' }));
    events.clear();
    const roles = await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles`, [{ id: a.id, position: 30 }]));
    assert.equal(roles.find((r: any) => r.id === a.id).position, 30);
    assert.equal(events.one('GUILD_ROLE_UPDATE_BULK').payload.guild_id, guild.id);
  });

  it('edits @everyone permissions and refuses to delete it', async () => {
    const everyone = await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: bits(P.VIEW_CHANNEL, P.SEND_MESSAGES, P.READ_MESSAGE_HISTORY),
        name: 'ignored',
      }),
    );
    assert.equal(everyone.name, '@everyone');
    assert.equal(everyone.permissions, bits(P.VIEW_CHANNEL, P.SEND_MESSAGES, P.READ_MESSAGE_HISTORY));
    const res = await as(server, owner, 'DELETE', `/guilds/${guild.id}/roles/${guild.id}`);
    assert.equal(res.status, 400);
    const perms = (await ok(as(server, user, 'GET', '/users/@me/guilds'))).find(
      (g: any) => g.id === guild.id,
    ).permissions;
    assert.equal(perms, bits(P.VIEW_CHANNEL, P.SEND_MESSAGES, P.READ_MESSAGE_HISTORY));
  });

  it('deletes a role, removing it from members, and dispatches GUILD_ROLE_DELETE', async () => {
    const temp = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'temp' }));
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${user.id}/roles/${temp.id}`), 204);
    events.clear();
    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/roles/${temp.id}`)).status, 204);
    assert.deepEqual(events.one('GUILD_ROLE_DELETE').payload, { guild_id: guild.id, role_id: temp.id });
    const member = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/members/${user.id}`));
    assert.ok(!member.roles.includes(temp.id));
    const unknown = await as(server, owner, 'DELETE', `/guilds/${guild.id}/roles/${temp.id}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_ROLE');
  });
});

describe('members', () => {
  let owner: TestUser;
  let mod: TestUser;
  let user: TestUser;
  let guild: any;
  let modRole: any;
  before(async () => {
    const setup = await guildWithMembers(server, 2);
    owner = setup.owner;
    [mod, user] = setup.members as [TestUser, TestUser];
    guild = setup.guild;
    modRole = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'mods',
        permissions: bits(P.MANAGE_ROLES, P.KICK_MEMBERS, P.BAN_MEMBERS, P.MANAGE_NICKNAMES, P.MODERATE_MEMBERS),
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${mod.id}/roles/${modRole.id}`), 204);
  });

  it('lists members by user id with limit and after', async () => {
    const ids = [owner.id, mod.id, user.id].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const one = await ok(as(server, user, 'GET', `/guilds/${guild.id}/members`));
    assert.equal(one.length, 1, 'default limit is 1');
    assert.equal(one[0].user.id, ids[0]);
    const all = await ok(as(server, user, 'GET', `/guilds/${guild.id}/members?limit=1000`));
    assert.deepEqual(
      all.map((m: any) => m.user.id),
      ids,
    );
    const rest = await ok(as(server, user, 'GET', `/guilds/${guild.id}/members?limit=10&after=${ids[0]}`));
    assert.deepEqual(
      rest.map((m: any) => m.user.id),
      ids.slice(1),
    );
    const m = all.find((x: any) => x.user.id === mod.id);
    assert.deepEqual(Object.keys(m).sort(), [
      'avatar',
      'banner',
      'bio',
      'communication_disabled_until',
      'deaf',
      'joined_at',
      'mute',
      'nick',
      'roles',
      'user',
    ]);
    assert.deepEqual(m.roles, [modRole.id]);
    assert.match(m.joined_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const tooMany = await as(server, user, 'GET', `/guilds/${guild.id}/members?limit=1001`);
    assert.equal(tooMany.status, 400);
  });

  it('reads one member, @me included; unknown members are UNKNOWN_MEMBER', async () => {
    const me = await ok(as(server, user, 'GET', `/guilds/${guild.id}/members/@me`));
    assert.equal(me.user.id, user.id);
    const outsider = await registerUser(server);
    const res = await as(server, user, 'GET', `/guilds/${guild.id}/members/${outsider.id}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'UNKNOWN_MEMBER');
  });

  it('lets members change their own nickname (CHANGE_NICKNAME) but not others', async () => {
    events.clear();
    const mine = await ok(as(server, user, 'PATCH', `/guilds/${guild.id}/members/@me`, { nick: 'Shorty' }));
    assert.equal(mine.nick, 'Shorty');
    const update = events.one('GUILD_MEMBER_UPDATE');
    assert.equal(update.payload.guild_id, guild.id);
    assert.equal(update.payload.nick, 'Shorty');
    assert.equal((update.payload.user as any).id, user.id);
    const other = await as(server, user, 'PATCH', `/guilds/${guild.id}/members/${mod.id}`, { nick: 'x' });
    assert.equal(other.body.code, 'MISSING_PERMISSIONS');
    const byMod = await ok(as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, { nick: '' }));
    assert.equal(byMod.nick, null);
    const onOwner = await as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${owner.id}`, { nick: 'boss' });
    assert.equal(onOwner.body.code, 'MISSING_PERMISSIONS');
  });

  it('sets roles within the hierarchy', async () => {
    const low = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'low' }));
    const res = await ok(as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, { roles: [low.id] }));
    assert.deepEqual(res.roles, [low.id]);
    const tooHigh = await as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, {
      roles: [low.id, modRole.id],
    });
    assert.equal(tooHigh.body.code, 'MISSING_PERMISSIONS');
    const unknown = await as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, { roles: ['123456789'] });
    assert.equal(unknown.body.code, 'UNKNOWN_ROLE');
    const put = await as(server, user, 'PUT', `/guilds/${guild.id}/members/${user.id}/roles/${low.id}`);
    assert.equal(put.body.code, 'MISSING_PERMISSIONS');
    assert.equal(
      (await as(server, mod, 'DELETE', `/guilds/${guild.id}/members/${user.id}/roles/${low.id}`)).status,
      204,
    );
    assert.deepEqual((await ok(as(server, mod, 'GET', `/guilds/${guild.id}/members/${user.id}`))).roles, []);
  });

  it('times a member out with MODERATE_MEMBERS; the member can then only read', async () => {
    const until = new Date(Date.now() + 3600_000).toISOString();
    const res = await ok(
      as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, { communication_disabled_until: until }),
    );
    assert.equal(res.communication_disabled_until, until);
    const post = await as(server, user, 'POST', `/channels/${guild.system_channel_id}/messages`, {
      content: 'let me talk',
    });
    assert.equal(post.status, 403);
    assert.equal(post.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await as(server, user, 'GET', `/channels/${guild.system_channel_id}/messages`)).status, 200);
    // Reacting, even joining a reaction someone else started, is refused with the timeout's own code.
    const [latest] = await ok(as(server, mod, 'GET', `/channels/${guild.system_channel_id}/messages?limit=1`));
    const thumbs = encodeURIComponent('👍');
    const reactionPath = `/channels/${guild.system_channel_id}/messages/${latest.id}/reactions/${thumbs}/@me`;
    await ok(as(server, mod, 'PUT', reactionPath), 204);
    const react = await as(server, user, 'PUT', reactionPath);
    assert.equal(react.status, 403);
    assert.deepEqual(react.body, { code: 'COMMUNICATION_DISABLED', message: 'You are timed out in this guild' });
    const self = await as(server, user, 'PATCH', `/guilds/${guild.id}/members/@me`, {
      communication_disabled_until: null,
    });
    assert.equal(self.body.code, 'MISSING_PERMISSIONS');
    await ok(
      as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${user.id}`, { communication_disabled_until: null }),
    );
    assert.equal(
      (await as(server, user, 'POST', `/channels/${guild.system_channel_id}/messages`, { content: 'free' })).status,
      200,
    );
    assert.equal((await as(server, user, 'PUT', reactionPath)).status, 204, 'reacts again once the timeout is lifted');
  });

  it('kicks with KICK_MEMBERS below the caller, dispatching GUILD_MEMBER_REMOVE and GUILD_DELETE', async () => {
    const victim = await registerUser(server);
    await join(server, owner, victim, guild);
    const byUser = await as(server, user, 'DELETE', `/guilds/${guild.id}/members/${victim.id}`);
    assert.equal(byUser.body.code, 'MISSING_PERMISSIONS');
    const onOwner = await as(server, mod, 'DELETE', `/guilds/${guild.id}/members/${owner.id}`);
    assert.equal(onOwner.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal((await as(server, mod, 'DELETE', `/guilds/${guild.id}/members/${victim.id}`)).status, 204);
    assert.equal((events.one('GUILD_MEMBER_REMOVE').payload.user as any).id, victim.id);
    assert.deepEqual(events.one('GUILD_DELETE').audience, { kind: 'users', userIds: [victim.id] });
    assert.equal((await as(server, victim, 'GET', `/guilds/${guild.id}`)).body.code, 'MISSING_ACCESS');
    const again = await as(server, mod, 'DELETE', `/guilds/${guild.id}/members/${victim.id}`);
    assert.equal(again.body.code, 'UNKNOWN_MEMBER');
  });
});

describe('bans', () => {
  it('bans a member, removes them, blocks rejoining, lists and lifts the ban', async () => {
    const owner = await registerUser(server);
    const victim = await registerUser(server);
    const guild = await newGuild(server, owner);
    const invite = await join(server, owner, victim, guild);
    await ok(as(server, victim, 'POST', `/channels/${guild.system_channel_id}/messages`, { content: 'spam' }));
    events.clear();
    const res = await as(server, owner, 'PUT', `/guilds/${guild.id}/bans/${victim.id}`, {
      delete_message_days: 1,
      reason: 'spam',
    });
    assert.equal(res.status, 204);
    assert.equal((events.one('GUILD_BAN_ADD').payload.user as any).id, victim.id);
    assert.equal((events.one('GUILD_MEMBER_REMOVE').payload.user as any).id, victim.id);
    assert.deepEqual(events.one('GUILD_DELETE').audience, { kind: 'users', userIds: [victim.id] });
    const bulk = events.one('MESSAGE_DELETE_BULK');
    assert.equal(bulk.payload.channel_id, guild.system_channel_id);
    assert.equal((bulk.payload.ids as string[]).length, 2, 'the spam and the join message');
    const messages = await ok(as(server, owner, 'GET', `/channels/${guild.system_channel_id}/messages`));
    assert.ok(!messages.some((m: any) => m.author.id === victim.id));

    const rejoin = await as(server, victim, 'POST', `/invites/${invite.code}`);
    assert.equal(rejoin.status, 403);
    assert.equal(rejoin.body.code, 'USER_BANNED_FROM_GUILD');

    const list = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/bans`));
    assert.equal(list.length, 1);
    assert.equal(list[0].user.id, victim.id);
    assert.equal(list[0].reason, 'spam');
    assert.match(list[0].banned_at, /Z$/);
    const one = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/bans/${victim.id}`));
    assert.equal(one.reason, 'spam');

    events.clear();
    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/bans/${victim.id}`)).status, 204);
    assert.equal((events.one('GUILD_BAN_REMOVE').payload.user as any).id, victim.id);
    const missing = await as(server, owner, 'GET', `/guilds/${guild.id}/bans/${victim.id}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_BAN');
    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/bans/${victim.id}`)).body.code, 'UNKNOWN_BAN');
    assert.equal((await as(server, victim, 'POST', `/invites/${invite.code}`)).status, 200);
  });

  it('needs BAN_MEMBERS and respects the hierarchy', async () => {
    const owner = await registerUser(server);
    const user = await registerUser(server);
    const guild = await newGuild(server, owner);
    await join(server, owner, user, guild);
    const list = await as(server, user, 'GET', `/guilds/${guild.id}/bans`);
    assert.equal(list.body.code, 'MISSING_PERMISSIONS');
    const banOwner = await as(server, user, 'PUT', `/guilds/${guild.id}/bans/${owner.id}`, {});
    assert.equal(banOwner.body.code, 'MISSING_PERMISSIONS');
    const unknownUser = await as(server, owner, 'PUT', `/guilds/${guild.id}/bans/12345678901`, {});
    assert.equal(unknownUser.body.code, 'UNKNOWN_USER');
    const badDays = await as(server, owner, 'PUT', `/guilds/${guild.id}/bans/${user.id}`, { delete_message_days: 8 });
    assert.equal(badDays.status, 400);
    // A pre-emptive ban of a non-member works.
    const stranger = await registerUser(server);
    assert.equal((await as(server, owner, 'PUT', `/guilds/${guild.id}/bans/${stranger.id}`, {})).status, 204);
  });
});
