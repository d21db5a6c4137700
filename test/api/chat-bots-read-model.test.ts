import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, describe, it } from 'node:test';
import { createApplication, type TestApplication } from '../support/applications.ts';
import { as, bits, DispatchRecorder, guildWithMembers, join, ok, P } from '../support/chat.ts';
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

const consent = (user: TestUser, app: TestApplication, guildId: string, permissions: string) =>
  as(server, user, 'POST', '/oauth2/authorize/consent', {
    client_id: app.id,
    scope: 'bot',
    guild_id: guildId,
    permissions,
  });

describe('installing a bot (OAuth2 bot scope)', () => {
  it('adds the bot with a managed role and tells the bot and the guild', async () => {
    const { owner, guild, members } = await guildWithMembers(server, 1);
    const app = await createApplication(server, owner, { name: 'Helper Bot' });
    const botId = app.body.bot.id as string;
    const bot = { auth: `Bot ${app.botToken}` };
    const notMember = await as(server, bot, 'GET', `/guilds/${guild.id}`);
    assert.equal(notMember.body.code, 'MISSING_ACCESS');

    const denied = await consent(members[0] as TestUser, app, guild.id, bits(P.SEND_MESSAGES));
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');

    events.clear();
    const res = await consent(owner, app, guild.id, bits(P.SEND_MESSAGES, P.VIEW_CHANNEL, P.KICK_MEMBERS));
    assert.equal(res.status, 200);
    const roleCreate = events.one('GUILD_ROLE_CREATE');
    const role = roleCreate.payload.role as any;
    assert.equal(role.name, 'Helper Bot');
    assert.equal(role.managed, true);
    assert.equal(role.permissions, bits(P.SEND_MESSAGES, P.VIEW_CHANNEL, P.KICK_MEMBERS));
    const add = events.one('GUILD_MEMBER_ADD');
    assert.deepEqual(add.audience, { kind: 'guild', guildId: guild.id });
    assert.equal((add.payload.user as any).id, botId);
    assert.equal((add.payload.user as any).bot, true);
    assert.deepEqual(add.payload.roles, [role.id]);
    const created = events.one('GUILD_CREATE');
    assert.deepEqual(created.audience, { kind: 'users', userIds: [botId] });
    assert.equal(created.payload.id, guild.id);

    const read = await ok(as(server, bot, 'GET', `/guilds/${guild.id}`));
    assert.equal(read.id, guild.id);
    const message = await ok(
      as(server, bot, 'POST', `/channels/${guild.system_channel_id}/messages`, { content: 'hello humans' }),
    );
    assert.equal(message.author.id, botId);
    assert.equal(message.author.bot, true);
    const perms = (await ok(as(server, bot, 'GET', '/users/@me/guilds')))[0].permissions;
    assert.ok(BigInt(perms) & P.KICK_MEMBERS);

    const again = await consent(owner, app, guild.id, '0');
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'BOT_ALREADY_IN_GUILD');
    const delRole = await as(server, owner, 'DELETE', `/guilds/${guild.id}/roles/${role.id}`);
    assert.equal(delRole.status, 400);
    const assign = await as(server, owner, 'PUT', `/guilds/${guild.id}/members/${members[0]?.id}/roles/${role.id}`);
    assert.equal(assign.body.code, 'MISSING_PERMISSIONS');
  });

  it('answers an unknown guild with UNKNOWN_GUILD', async () => {
    const owner = await registerUser(server);
    const app = await createApplication(server, owner);
    const res = await consent(owner, app, '123456789012345', '0');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'UNKNOWN_GUILD');
  });
});

describe('the gateway read model', () => {
  it('lists guilds, builds per-viewer guild payloads and checks channel visibility through caches', async () => {
    const chat = server.app.services.chat;
    const { owner, guild, members } = await guildWithMembers(server, 1);
    const member = members[0] as TestUser;
    assert.deepEqual(await chat.readyIndex(member.id), { guildIds: [guild.id], hasPrivateChannels: false });

    const payload = (await chat.guildPayload(guild.id, member.id, { reducedMembers: true })) as any;
    assert.equal(payload.id, guild.id);
    assert.equal(payload.name, guild.name);
    assert.equal(payload.properties.name, guild.name);
    assert.equal(payload.member_count, 2);
    assert.deepEqual(payload.members[0].user, { id: member.id });
    assert.match(payload.joined_at, /Z$/);
    assert.deepEqual(
      payload.roles.map((r: any) => r.id),
      [guild.id],
    );
    const full = (await chat.guildPayload(guild.id, member.id)) as any;
    assert.equal(full.members[0].user.username, member.username);
    assert.equal(await chat.guildPayload(guild.id, (await registerUser(server)).id), undefined);

    const channelId = guild.system_channel_id as string;
    assert.equal(await chat.canViewChannel(member.id, guild.id, channelId), true);
    await ok(
      as(server, owner, 'PUT', `/channels/${channelId}/permissions/${member.id}`, {
        type: 1,
        deny: bits(P.VIEW_CHANNEL),
      }),
      204,
    );
    assert.equal(
      await chat.canViewChannel(member.id, guild.id, channelId),
      false,
      'overwrite change invalidates the cache',
    );
    const hidden = (await chat.guildPayload(guild.id, member.id)) as any;
    assert.equal(hidden.channels.length, 0);
    await ok(as(server, owner, 'DELETE', `/channels/${channelId}/permissions/${member.id}`), 204);
    assert.equal(await chat.canViewChannel(member.id, guild.id, channelId), true);

    const fresh = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'brand-new' }));
    assert.equal(await chat.canViewChannel(member.id, guild.id, fresh.id), true, 'a new channel is seen');
    assert.equal(await chat.canViewChannel(owner.id, guild.id, '1234'), false);

    await ok(as(server, member, 'DELETE', `/users/@me/guilds/${guild.id}`), 204);
    assert.equal(await chat.canViewChannel(member.id, guild.id, channelId), false, 'leaving invalidates the member');
    await join(server, owner, member, guild);
    assert.equal(await chat.canViewChannel(member.id, guild.id, channelId), true);

    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'r' }));
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: '0' }));
    assert.equal(await chat.canViewChannel(member.id, guild.id, channelId), false, 'role edits invalidate the guild');
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${role.id}`, { permissions: bits(P.VIEW_CHANNEL) }));
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${member.id}/roles/${role.id}`), 204);
    assert.equal(
      await chat.canViewChannel(member.id, guild.id, channelId),
      true,
      'member role changes invalidate the member',
    );
  });

  it('answers a fan-out over many members with a bounded number of queries', async () => {
    const chat = server.app.services.chat;
    const { owner, guild, members } = await guildWithMembers(server, 3);
    const channelId = guild.system_channel_id as string;
    // Invalidate the guild (a role edit), then ask for every member many times at once, as a fan-out does.
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { color: 1 }));
    const db = server.app.services.db;
    const original = db.query.bind(db);
    // Only the checks' own queries count: background work (sweepers, leases, a role edit's fan-out) may read
    // the database at the same time, and is told apart by its async context.
    const counted = new AsyncLocalStorage<true>();
    let queries = 0;
    (db as any).query = (sql: string, params?: unknown[]) => {
      if (counted.getStore()) queries += 1;
      return original(sql, params);
    };
    try {
      const users = [owner, ...members].map((u) => u.id);
      const answers = await counted.run(true, () =>
        Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            chat.canViewChannel(users[i % users.length] as string, guild.id, channelId),
          ),
        ),
      );
      assert.ok(answers.every(Boolean));
      assert.ok(queries > 0, 'the cold checks read the database');
      assert.ok(queries <= 4, `expected at most 4 queries, saw ${queries}`);
      queries = 0;
      await counted.run(true, () => Promise.all(users.map((id) => chat.canViewChannel(id, guild.id, channelId))));
      assert.equal(queries, 0, 'warm checks read no database');
    } finally {
      (db as any).query = original;
    }
  });

  it('lists private channels and searches members', async () => {
    const chat = server.app.services.chat;
    const { owner, guild, members } = await guildWithMembers(server, 2);
    const [a, b] = members as [TestUser, TestUser];
    const dm = await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }));
    assert.equal((await chat.readyIndex(a.id)).hasPrivateChannels, true);
    const privateChannels = await chat.privateChannelsOf(a.id);
    assert.deepEqual(
      privateChannels.map((c: any) => c.id),
      [dm.id],
    );
    assert.deepEqual(
      (privateChannels[0] as any).recipients.map((u: any) => u.id),
      [b.id],
    );

    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/members/${a.id}`, { nick: 'Zed' }));
    const byName = await chat.searchMembers(guild.id, { query: b.username.slice(0, 6), limit: 10 });
    assert.deepEqual(
      byName.map((m: any) => m.user.id),
      [b.id],
    );
    const byNick = await chat.searchMembers(guild.id, { query: 'zE', limit: 10 });
    assert.deepEqual(
      byNick.map((m: any) => m.user.id),
      [a.id],
    );
    const byIds = await chat.searchMembers(guild.id, { userIds: [a.id, owner.id, 'junk'], limit: 10 });
    assert.deepEqual(new Set(byIds.map((m: any) => m.user.id)), new Set([a.id, owner.id]));
    const everyone = await chat.searchMembers(guild.id, { query: '', limit: 0 });
    assert.equal(everyone.length, 3);
  });
});
