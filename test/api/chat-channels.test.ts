import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, bits, DispatchRecorder, guildWithMembers, ok, P } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let member: TestUser;
let guild: any;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  const setup = await guildWithMembers(server, 1);
  owner = setup.owner;
  member = setup.members[0] as TestUser;
  guild = setup.guild;
});
after(async () => {
  events?.close();
  await server?.close();
});

describe('guild channels', () => {
  it('creates text, voice and category channels and dispatches CHANNEL_CREATE to viewers', async () => {
    events.clear();
    const category = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'Info', type: 4 }));
    assert.equal(category.type, 4);
    assert.equal(category.parent_id, null);
    const text = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'rules',
        topic: 'Read me',
        parent_id: category.id,
        rate_limit_per_user: 5,
      }),
    );
    assert.equal(text.type, 0);
    assert.equal(text.topic, 'Read me');
    assert.equal(text.parent_id, category.id);
    assert.equal(text.rate_limit_per_user, 5);
    assert.equal(text.last_message_id, null);
    assert.deepEqual(text.permission_overwrites, []);
    const voice = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'Voice', type: 2 }));
    assert.equal(voice.type, 2);
    assert.equal(voice.bitrate, 64000);
    assert.equal(voice.user_limit, 0);
    const created = events.one('CHANNEL_CREATE', (d) => d.payload.id === text.id);
    assert.deepEqual(created.audience, { kind: 'channel', guildId: guild.id, channelId: text.id });
    assert.ok('guild_id' in created.payload);
    assert.equal(created.payload.guild_id, guild.id);
    const list = await ok(as(server, member, 'GET', `/guilds/${guild.id}/channels`));
    assert.ok(list.some((c: any) => c.id === voice.id));
  });

  it('rejects bad types, foreign parents and callers without MANAGE_CHANNELS', async () => {
    const badType = await as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'x', type: 1 });
    assert.equal(badType.status, 400);
    assert.equal(badType.body.errors[0].path, 'type');
    const badParent = await as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
      name: 'x',
      parent_id: guild.system_channel_id,
    });
    assert.equal(badParent.status, 400);
    assert.equal(badParent.body.errors[0].path, 'parent_id');
    const denied = await as(server, member, 'POST', `/guilds/${guild.id}/channels`, { name: 'mine' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
  });

  it('reads, edits and deletes a channel', async () => {
    const channel = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'temp' }));
    const read = await ok(as(server, member, 'GET', `/channels/${channel.id}`));
    assert.equal(read.name, 'temp');
    const denied = await as(server, member, 'PATCH', `/channels/${channel.id}`, { name: 'nope' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    const edited = await ok(
      as(server, owner, 'PATCH', `/channels/${channel.id}`, { name: 'renamed', topic: '', nsfw: true }),
    );
    assert.equal(edited.name, 'renamed');
    assert.equal(edited.topic, null);
    assert.equal(edited.nsfw, true);
    const updated = events.one('CHANNEL_UPDATE').payload;
    assert.ok('name' in updated);
    assert.equal(updated.name, 'renamed');
    const memberDelete = await as(server, member, 'DELETE', `/channels/${channel.id}`);
    assert.equal(memberDelete.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal((await as(server, owner, 'DELETE', `/channels/${channel.id}`)).status, 204);
    const deleted = events.one('CHANNEL_DELETE');
    assert.deepEqual(deleted.audience, { kind: 'guild', guildId: guild.id });
    assert.equal(deleted.payload.id, channel.id);
    const gone = await as(server, owner, 'GET', `/channels/${channel.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'UNKNOWN_CHANNEL');
  });

  it('reorders channels with PATCH /guilds/{id}/channels', async () => {
    const a = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'a' }));
    const cat = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'cat', type: 4 }));
    const res = await as(server, owner, 'PATCH', `/guilds/${guild.id}/channels`, [
      { id: a.id, position: 42, parent_id: cat.id },
    ]);
    assert.equal(res.status, 204);
    const read = await ok(as(server, owner, 'GET', `/channels/${a.id}`));
    assert.equal(read.position, 42);
    assert.equal(read.parent_id, cat.id);
    const unknown = await as(server, owner, 'PATCH', `/guilds/${guild.id}/channels`, [
      { id: '1234567890', position: 1 },
    ]);
    assert.equal(unknown.body.code, 'UNKNOWN_CHANNEL');
    const denied = await as(server, member, 'PATCH', `/guilds/${guild.id}/channels`, [{ id: a.id, position: 1 }]);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
  });

  it('a mover with MANAGE_CHANNELS cannot move a channel into, or move, what they cannot see', async () => {
    const movers = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'movers', permissions: bits(P.MANAGE_CHANNELS) }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${member.id}/roles/${movers.id}`), 204);
    const hidden = [{ id: member.id, type: 1, deny: bits(P.VIEW_CHANNEL) }];
    const open = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'open' }));
    const secretCategory = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'staff',
        type: 4,
        permission_overwrites: hidden,
      }),
    );
    const secretChannel = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'plans', permission_overwrites: hidden }),
    );
    const into = await as(server, member, 'PATCH', `/guilds/${guild.id}/channels`, [
      { id: open.id, parent_id: secretCategory.id },
    ]);
    assert.equal(into.status, 403);
    assert.equal(into.body.code, 'MISSING_PERMISSIONS');
    const moveHidden = await as(server, member, 'PATCH', `/guilds/${guild.id}/channels`, [
      { id: secretChannel.id, position: 7 },
    ]);
    assert.equal(moveHidden.status, 403);
    assert.equal(moveHidden.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await ok(as(server, owner, 'GET', `/channels/${open.id}`))).parent_id, null, 'nothing moved');
    // What they can see, they move.
    const visible = await as(server, member, 'PATCH', `/guilds/${guild.id}/channels`, [{ id: open.id, position: 3 }]);
    assert.equal(visible.status, 204);
  });
});

describe('permission overwrites', () => {
  it('hides a channel from @everyone and shows it to a role', async () => {
    const secret = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'secret',
        permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.VIEW_CHANNEL) }],
      }),
    );
    assert.deepEqual(secret.permission_overwrites, [
      { id: guild.id, type: 0, allow: '0', deny: String(P.VIEW_CHANNEL) },
    ]);
    const hidden = await as(server, member, 'GET', `/channels/${secret.id}`);
    assert.equal(hidden.status, 403);
    assert.equal(hidden.body.code, 'MISSING_ACCESS');
    const visible = await ok(as(server, member, 'GET', `/guilds/${guild.id}/channels`));
    assert.ok(!visible.some((c: any) => c.id === secret.id));
    const post = await as(server, member, 'POST', `/channels/${secret.id}/messages`, { content: 'hi' });
    assert.equal(post.body.code, 'MISSING_ACCESS');

    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'insiders' }));
    events.clear();
    const put = await as(server, owner, 'PUT', `/channels/${secret.id}/permissions/${role.id}`, {
      type: 0,
      allow: bits(P.VIEW_CHANNEL),
    });
    assert.equal(put.status, 204);
    assert.equal(events.one('CHANNEL_UPDATE').payload.id, secret.id);
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${member.id}/roles/${role.id}`), 204);
    assert.equal((await as(server, member, 'GET', `/channels/${secret.id}`)).status, 200);

    const memberDeny = await as(server, owner, 'PUT', `/channels/${secret.id}/permissions/${member.id}`, {
      type: 1,
      deny: bits(P.VIEW_CHANNEL),
    });
    assert.equal(memberDeny.status, 204);
    assert.equal((await as(server, member, 'GET', `/channels/${secret.id}`)).body.code, 'MISSING_ACCESS');
    assert.equal((await as(server, owner, 'DELETE', `/channels/${secret.id}/permissions/${member.id}`)).status, 204);
    assert.equal((await as(server, member, 'GET', `/channels/${secret.id}`)).status, 200);
  });

  it('denies sending with a SEND_MESSAGES overwrite while the channel stays readable', async () => {
    const readOnly = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'announcements',
        permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.SEND_MESSAGES) }],
      }),
    );
    assert.equal((await as(server, member, 'GET', `/channels/${readOnly.id}/messages`)).status, 200);
    const post = await as(server, member, 'POST', `/channels/${readOnly.id}/messages`, { content: 'hi' });
    assert.equal(post.status, 403);
    assert.equal(post.body.code, 'MISSING_PERMISSIONS');
  });

  it('needs MANAGE_ROLES, a known target, and no bits the caller lacks', async () => {
    const channelId = guild.system_channel_id;
    const denied = await as(server, member, 'PUT', `/channels/${channelId}/permissions/${guild.id}`, {
      type: 0,
      allow: '0',
    });
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    const unknownRole = await as(server, owner, 'PUT', `/channels/${channelId}/permissions/99999999999`, { type: 0 });
    assert.equal(unknownRole.status, 404);
    assert.equal(unknownRole.body.code, 'UNKNOWN_ROLE');
    const badType = await as(server, owner, 'PUT', `/channels/${channelId}/permissions/${guild.id}`, { type: 7 });
    assert.equal(badType.status, 400);
    const roleManager = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'rm',
        permissions: bits(P.MANAGE_ROLES, P.VIEW_CHANNEL),
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${member.id}/roles/${roleManager.id}`), 204);
    const escalate = await as(server, member, 'PUT', `/channels/${channelId}/permissions/${member.id}`, {
      type: 1,
      allow: bits(P.BAN_MEMBERS),
    });
    assert.equal(escalate.status, 403);
    assert.equal(escalate.body.code, 'MISSING_PERMISSIONS');
    const fine = await as(server, member, 'PUT', `/channels/${channelId}/permissions/${member.id}`, {
      type: 1,
      allow: bits(P.VIEW_CHANNEL),
    });
    assert.equal(fine.status, 204);
  });
});
