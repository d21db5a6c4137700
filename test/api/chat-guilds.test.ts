import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_PERMISSIONS } from '../../src/domains/chat/permissions.ts';
import { insertApplicationWithBot, insertBearerToken } from '../support/admin.ts';
import { createApplication } from '../support/applications.ts';
import { as, bits, DispatchRecorder, join, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
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

const DEFAULT_EVERYONE = [0n, 6n, 9n, 10n, 11n, 14n, 15n, 16n, 18n, 20n, 21n, 25n, 26n, 35n, 36n, 37n, 38n, 43n].reduce(
  (a, b) => a | (1n << b),
  0n,
);

describe('guild creation', () => {
  it('creates a guild with @everyone and a general system channel, and tells the owner', async () => {
    const owner = await registerUser(server);
    events.clear();
    const res = await as(server, owner, 'POST', '/guilds', { name: 'My place' });
    assert.equal(res.status, 200);
    const guild = res.body;
    assert.match(guild.id, /^\d+$/);
    assert.equal(guild.name, 'My place');
    assert.equal(guild.owner_id, owner.id);
    for (const field of ['icon', 'banner', 'splash', 'rules_channel_id', 'afk_channel_id', 'vanity_url_code'])
      assert.equal(guild[field], null, field);
    assert.deepEqual(guild.features, []);
    assert.equal(guild.afk_timeout, 300);
    assert.equal(guild.verification_level, 0);
    const everyone = guild.roles.find((r: any) => r.id === guild.id);
    assert.equal(everyone.name, '@everyone');
    assert.equal(everyone.permissions, DEFAULT_EVERYONE.toString());
    const channels = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/channels`));
    assert.equal(channels.length, 1);
    assert.equal(channels[0].id, guild.system_channel_id);
    assert.equal(channels[0].name, 'general');
    assert.equal(channels[0].type, 0);
    assert.equal(channels[0].guild_id, guild.id);
    const created = events.one('GUILD_CREATE');
    assert.deepEqual(created.audience, { kind: 'users', userIds: [owner.id] });
    assert.equal(created.payload.id, guild.id);
    assert.ok('properties' in created.payload);
    assert.equal(created.payload.properties.name, 'My place');
    assert.equal(created.payload.channels.length, 1);
    assert.equal(created.payload.member_count, 1);
    assert.equal(created.payload.members[0]?.user?.id, owner.id);
  });

  it('validates the name', async () => {
    const owner = await registerUser(server);
    const res = await as(server, owner, 'POST', '/guilds', { name: '' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.equal(res.body.errors[0].path, 'name');
    const long = await as(server, owner, 'POST', '/guilds', { name: 'x'.repeat(101) });
    assert.equal(long.status, 400);
  });

  it('refuses bots (user-only) and unauthenticated callers', async () => {
    const owner = await registerUser(server);
    const app = await createApplication(server, owner);
    const bot = await as(server, { auth: `Bot ${app.botToken}` }, 'POST', '/guilds', { name: 'bots' });
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'ACCESS_DENIED');
    const anon = await request(server, 'POST', '/v1/guilds', { body: { name: 'x' } });
    assert.equal(anon.status, 401);
    assert.equal(anon.body.code, 'UNAUTHORIZED');
  });

  it('rate limits guild creation at 10 per minute when limits are on', async () => {
    const owner = await registerUser(server);
    const strict = { 'x-test-strict': 'true' };
    for (let i = 0; i < 10; i++) await ok(as(server, owner, 'POST', '/guilds', { name: `g${i}` }, strict));
    const res = await as(server, owner, 'POST', '/guilds', { name: 'one too many' }, strict);
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'RATE_LIMITED');
    assert.equal(res.body.global, false);
    await request(server, 'POST', '/v1/test/rate-limits/reset', { harness: true });
  });
});

describe('reading and editing a guild', () => {
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let guild: any;
  before(async () => {
    owner = await registerUser(server);
    member = await registerUser(server);
    outsider = await registerUser(server);
    guild = await newGuild(server, owner, 'Readable');
    await join(server, owner, member, guild);
  });

  it('lets members read it, with roles', async () => {
    const res = await as(server, member, 'GET', `/guilds/${guild.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.id, guild.id);
    assert.equal(res.body.roles.length, 1);
  });

  it('answers non-members with MISSING_ACCESS and unknown guilds with UNKNOWN_GUILD', async () => {
    const res = await as(server, outsider, 'GET', `/guilds/${guild.id}`);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACCESS');
    const unknown = await as(server, outsider, 'GET', '/guilds/123456789012345678');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_GUILD');
    const garbage = await as(server, outsider, 'GET', '/guilds/not-an-id');
    assert.equal(garbage.status, 404);
    assert.equal(garbage.body.code, 'UNKNOWN_GUILD');
  });

  it('needs MANAGE_GUILD to edit', async () => {
    const res = await as(server, member, 'PATCH', `/guilds/${guild.id}`, { name: 'Mine now' });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_PERMISSIONS');
  });

  it('edits the guild and dispatches GUILD_UPDATE to the guild', async () => {
    events.clear();
    const res = await as(server, owner, 'PATCH', `/guilds/${guild.id}`, {
      name: 'Renamed',
      afk_timeout: 900,
      system_channel_id: null,
      verification_level: 1,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Renamed');
    assert.equal(res.body.afk_timeout, 900);
    assert.equal(res.body.system_channel_id, null);
    const update = events.one('GUILD_UPDATE');
    assert.deepEqual(update.audience, { kind: 'guild', guildId: guild.id });
    assert.equal(update.payload.guild_id, guild.id);
    assert.equal(update.payload.name, 'Renamed');
    const back = await as(server, owner, 'PATCH', `/guilds/${guild.id}`, {
      system_channel_id: guild.system_channel_id,
    });
    assert.equal(back.body.system_channel_id, guild.system_channel_id);
  });

  it('refuses a system channel from another guild', async () => {
    const other = await newGuild(server, owner, 'Other');
    const res = await as(server, owner, 'PATCH', `/guilds/${guild.id}`, { system_channel_id: other.system_channel_id });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, 'system_channel_id');
  });

  it('lets a member with a MANAGE_GUILD role edit', async () => {
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'managers', permissions: bits(P.MANAGE_GUILD) }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${member.id}/roles/${role.id}`), 204);
    const res = await as(server, member, 'PATCH', `/guilds/${guild.id}`, { name: 'Managed' });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Managed');
  });
});

describe('/users/@me/guilds', () => {
  it('lists the caller guilds with their permissions and ownership', async () => {
    const owner = await registerUser(server);
    const member = await registerUser(server);
    const a = await newGuild(server, owner, 'A');
    const b = await newGuild(server, owner, 'B');
    await join(server, owner, member, a);
    const mine = await ok(as(server, owner, 'GET', '/users/@me/guilds'));
    assert.deepEqual(
      mine.map((g: any) => g.id),
      [a.id, b.id],
    );
    assert.equal(mine[0].owner, true);
    assert.equal(mine[0].permissions, ALL_PERMISSIONS.toString());
    const theirs = await ok(as(server, member, 'GET', '/users/@me/guilds'));
    assert.equal(theirs.length, 1);
    assert.equal(theirs[0].owner, false);
    assert.equal(theirs[0].permissions, DEFAULT_EVERYONE.toString());
  });

  it('paginates with before, after and limit', async () => {
    const owner = await registerUser(server);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await newGuild(server, owner, `p${i}`)).id);
    const first = await ok(as(server, owner, 'GET', '/users/@me/guilds?limit=2'));
    assert.deepEqual(
      first.map((g: any) => g.id),
      ids.slice(0, 2),
    );
    const next = await ok(as(server, owner, 'GET', `/users/@me/guilds?after=${ids[1]}&limit=2`));
    assert.deepEqual(
      next.map((g: any) => g.id),
      ids.slice(2, 4),
    );
    const prev = await ok(as(server, owner, 'GET', `/users/@me/guilds?before=${ids[3]}&limit=2`));
    assert.deepEqual(
      prev.map((g: any) => g.id),
      ids.slice(1, 3),
    );
    const bad = await as(server, owner, 'GET', '/users/@me/guilds?limit=0');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, 'limit');
  });

  it('lets a member leave, dispatching GUILD_MEMBER_REMOVE and GUILD_DELETE', async () => {
    const owner = await registerUser(server);
    const member = await registerUser(server);
    const guild = await newGuild(server, owner);
    await join(server, owner, member, guild);
    events.clear();
    const res = await as(server, member, 'DELETE', `/users/@me/guilds/${guild.id}`);
    assert.equal(res.status, 204);
    const removed = events.one('GUILD_MEMBER_REMOVE');
    assert.deepEqual(removed.audience, { kind: 'guild', guildId: guild.id });
    assert.equal((removed.payload.user as any).id, member.id);
    assert.equal(removed.payload.guild_id, guild.id);
    const gone = events.one('GUILD_DELETE');
    assert.deepEqual(gone.audience, { kind: 'users', userIds: [member.id] });
    assert.deepEqual(gone.payload, { id: guild.id });
    const again = await as(server, member, 'DELETE', `/users/@me/guilds/${guild.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'UNKNOWN_GUILD');
    assert.equal((await as(server, member, 'GET', `/guilds/${guild.id}`)).body.code, 'MISSING_ACCESS');
  });

  it('does not let the owner leave', async () => {
    const owner = await registerUser(server);
    const guild = await newGuild(server, owner);
    const res = await as(server, owner, 'DELETE', `/users/@me/guilds/${guild.id}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.equal(res.body.errors[0].code, 'CANNOT_LEAVE_GUILD_AS_OWNER');
  });

  it('admits OAuth2 bearers holding the guilds / connections scopes, and nothing else', async () => {
    const user = await registerUser(server);
    const guild = await newGuild(server, user, 'Bearer view');
    const { applicationId } = await insertApplicationWithBot(server, user.id);
    const withGuilds = await insertBearerToken(server, user.id, applicationId, ['identify', 'guilds']);
    const bearer = { auth: `Bearer ${withGuilds}` };
    const list = await as(server, bearer, 'GET', '/users/@me/guilds');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((g: any) => g.id),
      [guild.id],
    );
    const connections = await as(server, bearer, 'GET', '/users/@me/connections');
    assert.equal(connections.status, 403);
    assert.equal(connections.body.code, 'MISSING_OAUTH_SCOPE');
    assert.equal(connections.body.required_scope, 'connections');
    const other = await as(server, bearer, 'GET', `/guilds/${guild.id}`);
    assert.equal(other.status, 403);
    assert.equal(other.body.code, 'ACCESS_DENIED');
    const identifyOnly = await insertBearerToken(server, user.id, applicationId, ['identify']);
    const denied = await as(server, { auth: `Bearer ${identifyOnly}` }, 'GET', '/users/@me/guilds');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_OAUTH_SCOPE');
    assert.equal(denied.body.required_scope, 'guilds');
  });

  it('answers /users/@me/connections with an empty list', async () => {
    const user = await registerUser(server);
    const res = await as(server, user, 'GET', '/users/@me/connections');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, []);
  });
});

describe('guild deletion and ownership transfer', () => {
  it('deletes only for the owner with sudo, and tells every member', async () => {
    const owner = await registerUser(server);
    const member = await registerUser(server);
    const guild = await newGuild(server, owner);
    await join(server, owner, member, guild);
    const noSudo = await as(server, owner, 'POST', `/guilds/${guild.id}/delete`, {});
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');
    const notOwner = await as(server, member, 'POST', `/guilds/${guild.id}/delete`, { password: member.password });
    assert.equal(notOwner.status, 403);
    assert.equal(notOwner.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    const res = await as(server, owner, 'POST', `/guilds/${guild.id}/delete`, { password: owner.password });
    assert.equal(res.status, 204);
    const gone = events.one('GUILD_DELETE');
    assert.deepEqual(new Set((gone.audience as any).userIds), new Set([owner.id, member.id]));
    assert.equal((await as(server, owner, 'GET', `/guilds/${guild.id}`)).body.code, 'UNKNOWN_GUILD');
  });

  it('transfers ownership to a member, with sudo', async () => {
    const owner = await registerUser(server);
    const member = await registerUser(server);
    const outsider = await registerUser(server);
    const guild = await newGuild(server, owner);
    await join(server, owner, member, guild);
    const noSudo = await as(server, owner, 'POST', `/guilds/${guild.id}/transfer-ownership`, {
      new_owner_id: member.id,
    });
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');
    const toOutsider = await as(server, owner, 'POST', `/guilds/${guild.id}/transfer-ownership`, {
      new_owner_id: outsider.id,
      password: owner.password,
    });
    assert.equal(toOutsider.status, 404);
    assert.equal(toOutsider.body.code, 'UNKNOWN_MEMBER');
    events.clear();
    const res = await as(server, owner, 'POST', `/guilds/${guild.id}/transfer-ownership`, {
      new_owner_id: member.id,
      password: owner.password,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.owner_id, member.id);
    assert.equal(events.one('GUILD_UPDATE').payload.owner_id, member.id);
    const leave = await as(server, owner, 'DELETE', `/users/@me/guilds/${guild.id}`);
    assert.equal(leave.status, 204);
    const bot = await createApplication(server, member);
    const botTry = await as(server, { auth: `Bot ${bot.botToken}` }, 'POST', `/guilds/${guild.id}/delete`, {});
    assert.equal(botTry.status, 403);
    assert.equal(botTry.body.code, 'ACCESS_DENIED');
  });
});
