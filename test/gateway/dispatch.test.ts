import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type GatewayClient, readyClient } from './gateway-client.ts';

const VIEW_CHANNEL = String(1 << 10);

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let ownerGw: GatewayClient;
let memberGw: GatewayClient;
let outsiderGw: GatewayClient;
let guildId: string;
let generalId: string;
let secretId: string;

async function api(user: TestUser, method: string, path: string, body?: unknown) {
  return request(server, method, path, { auth: user.token, ...(body !== undefined ? { body } : {}) });
}

async function post(user: TestUser, channelId: string, content: string) {
  const res = await api(user, 'POST', `/v1/channels/${channelId}/messages`, { content });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const isMessage = (content: string) => (f: { t?: string; d?: any }) =>
  f.t === 'MESSAGE_CREATE' && f.d.content === content;

before(async () => {
  server = await startTestServer();
  [owner, member, outsider] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  ({ client: ownerGw } = await readyClient(server, owner.token));
  ({ client: memberGw } = await readyClient(server, member.token));
  ({ client: outsiderGw } = await readyClient(server, outsider.token));

  const guild = await api(owner, 'POST', '/v1/guilds', { name: 'Hearthside' });
  assert.equal(guild.status, 200, guild.text);
  guildId = guild.body.id;
  generalId = guild.body.system_channel_id;
  const secret = await api(owner, 'POST', `/v1/guilds/${guildId}/channels`, {
    name: 'secret',
    permission_overwrites: [{ id: guildId, type: 0, allow: '0', deny: VIEW_CHANNEL }],
  });
  assert.equal(secret.status, 200, secret.text);
  secretId = secret.body.id;
  const invite = await api(owner, 'POST', `/v1/channels/${generalId}/invites`, {});
  assert.equal(invite.status, 200, invite.text);
  const joined = await api(member, 'POST', `/v1/invites/${invite.body.code}`);
  assert.equal(joined.status, 200, joined.text);
});

after(async () => {
  await Promise.all([ownerGw, memberGw, outsiderGw].map((c) => c.close()));
  await server.close();
});

describe('membership events', () => {
  test('the creator gets GUILD_CREATE for a new guild', async () => {
    const created = await ownerGw.dispatch('GUILD_CREATE');
    assert.equal(created.d.id, guildId);
    assert.equal(created.d.name, 'Hearthside');
  });

  test('joining through an invite: the joiner gets GUILD_CREATE without the hidden channel, members get GUILD_MEMBER_ADD', async () => {
    const created = await memberGw.dispatch('GUILD_CREATE');
    assert.equal(created.d.id, guildId);
    const channelIds = created.d.channels.map((c: { id: string }) => c.id);
    assert.ok(channelIds.includes(generalId));
    assert.ok(!channelIds.includes(secretId));
    const added = await ownerGw.dispatch('GUILD_MEMBER_ADD');
    assert.equal(added.d.guild_id, guildId);
    assert.equal(added.d.user.id, member.id);
    assert.ok(await outsiderGw.nothing((f) => f.t === 'GUILD_MEMBER_ADD' || f.t === 'GUILD_CREATE'));
  });

  test('READY of a member lists the guild with visible channels only and reduced members', async () => {
    const { client, ready } = await readyClient(server, member.token);
    assert.equal(ready.d.guilds.length, 1);
    const guild = ready.d.guilds[0];
    assert.equal(guild.id, guildId);
    assert.equal(guild.properties.id, guildId);
    assert.ok(!guild.channels.some((c: { id: string }) => c.id === secretId));
    assert.deepEqual(guild.members[0].user, { id: member.id });
    await client.close();
  });
});

describe('message delivery', () => {
  test('a message in a public channel reaches every member, not outsiders', async () => {
    const message = await post(owner, generalId, 'hello all');
    for (const gw of [ownerGw, memberGw]) {
      const frame = await gw.next(isMessage('hello all'));
      assert.equal(frame.d.id, message.id);
      assert.equal(frame.d.channel_id, generalId);
      assert.equal(frame.d.guild_id, guildId);
      assert.equal(frame.d.author.id, owner.id);
    }
    assert.ok(await outsiderGw.nothing(isMessage('hello all')));
  });

  test('a message in a channel @everyone cannot view reaches only those who can view it', async () => {
    await post(owner, secretId, 'owners only');
    assert.equal((await ownerGw.next(isMessage('owners only'))).d.channel_id, secretId);
    assert.ok(await memberGw.nothing(isMessage('owners only')));
    assert.ok(await outsiderGw.nothing(isMessage('owners only')));
  });

  test('a member overwrite granting VIEW_CHANNEL opens the channel to that member', async () => {
    const res = await api(owner, 'PUT', `/v1/channels/${secretId}/permissions/${member.id}`, {
      type: 1,
      allow: VIEW_CHANNEL,
      deny: '0',
    });
    assert.equal(res.status, 204, res.text);
    await post(owner, secretId, 'now you see it');
    assert.equal((await memberGw.next(isMessage('now you see it'))).d.channel_id, secretId);
    const del = await api(owner, 'DELETE', `/v1/channels/${secretId}/permissions/${member.id}`);
    assert.equal(del.status, 204, del.text);
    await post(owner, secretId, 'and now you do not');
    await ownerGw.next(isMessage('and now you do not'));
    assert.ok(await memberGw.nothing(isMessage('and now you do not')));
  });

  test('each session of a recipient counts its own sequence; the frame body is identical', async () => {
    const { client: second } = await readyClient(server, member.token);
    await post(owner, generalId, 'same bytes');
    const a = await memberGw.next(isMessage('same bytes'));
    const b = await second.next(isMessage('same bytes'));
    assert.equal(b.s, 2);
    assert.ok((a.s as number) > 2);
    assert.deepEqual(a.d, b.d);
    await second.close();
  });

  test('direct messages reach both participants only', async () => {
    const dm = await api(owner, 'POST', '/v1/users/@me/channels', { recipient_id: member.id });
    assert.equal(dm.status, 200, dm.text);
    await post(member, dm.body.id, 'psst');
    assert.equal((await ownerGw.next(isMessage('psst'))).d.channel_id, dm.body.id);
    assert.equal((await memberGw.next(isMessage('psst'))).d.channel_id, dm.body.id);
    assert.ok(await outsiderGw.nothing(isMessage('psst')));
  });
});

describe('gateway commands', () => {
  test('op 8 answers GUILD_MEMBERS_CHUNK for a guild the session is in, with the nonce', async () => {
    memberGw.send({ op: 8, d: { guild_id: guildId, query: '', limit: 0, nonce: 'n1' } });
    const chunk = await memberGw.dispatch('GUILD_MEMBERS_CHUNK');
    assert.equal(chunk.d.guild_id, guildId);
    assert.equal(chunk.d.chunk_index, 0);
    assert.equal(chunk.d.chunk_count, 1);
    assert.equal(chunk.d.nonce, 'n1');
    const ids = chunk.d.members.map((m: { user: { id: string } }) => m.user.id).sort();
    assert.deepEqual(ids, [owner.id, member.id].sort());
  });

  test('op 8 by user ids reports the ones not found', async () => {
    memberGw.send({ op: 8, d: { guild_id: guildId, user_ids: [owner.id, outsider.id] } });
    const chunk = await memberGw.dispatch('GUILD_MEMBERS_CHUNK');
    assert.deepEqual(
      chunk.d.members.map((m: { user: { id: string } }) => m.user.id),
      [owner.id],
    );
    assert.deepEqual(chunk.d.not_found, [outsider.id]);
  });

  test('op 8 with a NUL in its query closes 4002 Invalid payload (it used to fail in the database: 4000)', async () => {
    const { client } = await readyClient(server, member.token);
    client.send({ op: 8, d: { guild_id: guildId, query: 'a\u0000', limit: 10 } });
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid payload' });
  });

  test('op 8 for a guild the session is not in is ignored', async () => {
    outsiderGw.send({ op: 8, d: { guild_id: guildId, query: '', limit: 0 } });
    assert.ok(await outsiderGw.nothing((f) => f.t === 'GUILD_MEMBERS_CHUNK'));
  });

  test('op 3 broadcasts PRESENCE_UPDATE to the guild members', async () => {
    memberGw.send({ op: 3, d: { status: 'dnd', afk: false, custom_status: { text: 'busy' } } });
    // The member's arrival announced them online first; the op 3 change follows.
    const presence = await ownerGw.next((f) => f.t === 'PRESENCE_UPDATE' && f.d.status === 'dnd');
    assert.deepEqual(presence.d, {
      user: { id: member.id },
      status: 'dnd',
      activities: [],
      client_status: { web: 'dnd' },
      afk: false,
      mobile: false,
      custom_status: { text: 'busy', emoji_name: null },
      guild_id: guildId,
    });
    assert.ok(await outsiderGw.nothing((f) => f.t === 'PRESENCE_UPDATE'));
  });
});

describe('leaving', () => {
  test('a kicked member gets GUILD_DELETE and no further guild events', async () => {
    const kick = await api(owner, 'DELETE', `/v1/guilds/${guildId}/members/${member.id}`);
    assert.equal(kick.status, 204, kick.text);
    assert.equal((await memberGw.dispatch('GUILD_DELETE')).d.id, guildId);
    await post(owner, generalId, 'after the kick');
    await ownerGw.next(isMessage('after the kick'));
    assert.ok(await memberGw.nothing(isMessage('after the kick')));
  });
});
