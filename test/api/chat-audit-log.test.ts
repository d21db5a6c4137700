import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { readyClient } from '../gateway/gateway-client.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** The guild audit log (`GET /guilds/{id}/audit-logs`), Discord's shapes, over real HTTP. */

let server: TestServer;
let owner: TestUser;
let mod: TestUser;
let alice: TestUser;
let outsider: TestUser;
let guild: any;
let channelId: string;
let modRoleId: string;

const VIEW_AUDIT_LOG = 1n << 7n;

function why(text: string): Record<string, string> {
  return { 'X-Audit-Log-Reason': encodeURIComponent(text) };
}

/** `owner` does something with a reason in X-Audit-Log-Reason; the answer must have `status`. */
function byOwner(method: string, path: string, body: unknown, reason: string, status = 200): Promise<any> {
  return ok(as(server, owner, method, path, body, why(reason)), status);
}

async function log(query = '', user: TestUser = owner): Promise<any> {
  return ok(as(server, user, 'GET', `/guilds/${guild.id}/audit-logs${query}`));
}

/** The newest entry of an action type, with its id checked and left out. */
async function latest(actionType: number): Promise<any> {
  const page = await log(`?action_type=${actionType}&limit=1`);
  assert.equal(page.audit_log_entries.length, 1, `no entry of type ${actionType}`);
  const { id, ...entry } = page.audit_log_entries[0];
  assert.match(id, /^\d+$/);
  return entry;
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  mod = await registerUser(server);
  alice = await registerUser(server);
  outsider = await registerUser(server);
  guild = await newGuild(server, owner, 'Audit Hall');
  channelId = guild.system_channel_id;
  await join(server, owner, mod, guild);
  await join(server, owner, alice, guild);
  const role = await ok(
    as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'auditor', permissions: VIEW_AUDIT_LOG.toString() }),
  );
  modRoleId = role.id;
  await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${mod.id}/roles/${modRoleId}`), 204);
});

after(async () => {
  await server?.close();
});

describe('guild audit log', () => {
  it('records a guild update with the decoded X-Audit-Log-Reason, in the APIAuditLog shape', async () => {
    await byOwner('PATCH', `/guilds/${guild.id}`, { name: 'Audit Hall II', afk_timeout: 60 }, 'Spring ✿ rename');
    const page = await log('?action_type=1');
    assert.deepEqual(Object.keys(page).sort(), [
      'application_commands',
      'audit_log_entries',
      'auto_moderation_rules',
      'guild_scheduled_events',
      'integrations',
      'threads',
      'users',
      'webhooks',
    ]);
    assert.equal(page.audit_log_entries.length, 1);
    const { id, ...entry } = page.audit_log_entries[0];
    assert.match(id, /^\d+$/);
    assert.deepEqual(entry, {
      target_id: guild.id,
      changes: [
        { key: 'name', old_value: 'Audit Hall', new_value: 'Audit Hall II' },
        { key: 'afk_timeout', old_value: 300, new_value: 60 },
      ],
      user_id: owner.id,
      action_type: 1,
      reason: 'Spring ✿ rename',
    });
    assert.deepEqual(
      page.users.map((u: any) => u.id),
      [owner.id],
    );
    assert.equal(page.users[0].username, owner.username);
    // A change that changes nothing records nothing.
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { name: 'Audit Hall II' }));
    assert.equal((await log('?action_type=1')).audit_log_entries.length, 1);
  });

  it('records channel create, update and delete, and overwrite create, update and delete', async () => {
    const channel = await byOwner('POST', `/guilds/${guild.id}/channels`, { name: 'logs', topic: 'hi' }, 'new room');
    assert.deepEqual(await latest(10), {
      target_id: channel.id,
      changes: [
        { key: 'name', new_value: 'logs' },
        { key: 'type', new_value: 0 },
        { key: 'topic', new_value: 'hi' },
        { key: 'nsfw', new_value: false },
        { key: 'rate_limit_per_user', new_value: 0 },
        { key: 'permission_overwrites', new_value: [] },
      ],
      user_id: owner.id,
      action_type: 10,
      reason: 'new room',
    });

    await byOwner('PATCH', `/channels/${channel.id}`, { name: 'audit', nsfw: true }, 'tidy');
    assert.deepEqual(await latest(11), {
      target_id: channel.id,
      changes: [
        { key: 'name', old_value: 'logs', new_value: 'audit' },
        { key: 'nsfw', old_value: false, new_value: true },
      ],
      user_id: owner.id,
      action_type: 11,
      reason: 'tidy',
    });

    await byOwner('PUT', `/channels/${channel.id}/permissions/${modRoleId}`, { type: 0, allow: '1024' }, 'a', 204);
    assert.deepEqual(await latest(13), {
      target_id: channel.id,
      changes: [
        { key: 'id', new_value: modRoleId },
        { key: 'type', new_value: 0 },
        { key: 'allow', new_value: '1024' },
        { key: 'deny', new_value: '0' },
      ],
      user_id: owner.id,
      action_type: 13,
      options: { id: modRoleId, type: '0', role_name: 'auditor' },
      reason: 'a',
    });
    await byOwner('PUT', `/channels/${channel.id}/permissions/${alice.id}`, { type: 1, deny: '2048' }, 'b', 204);
    assert.deepEqual((await latest(13)).options, { id: alice.id, type: '1' });
    await byOwner('PUT', `/channels/${channel.id}/permissions/${modRoleId}`, { type: 0, allow: '3072' }, 'c', 204);
    assert.deepEqual(await latest(14), {
      target_id: channel.id,
      changes: [{ key: 'allow', old_value: '1024', new_value: '3072' }],
      user_id: owner.id,
      action_type: 14,
      options: { id: modRoleId, type: '0', role_name: 'auditor' },
      reason: 'c',
    });
    await byOwner('DELETE', `/channels/${channel.id}/permissions/${alice.id}`, undefined, 'd', 204);
    assert.deepEqual(await latest(15), {
      target_id: channel.id,
      changes: [
        { key: 'id', old_value: alice.id },
        { key: 'type', old_value: 1 },
        { key: 'allow', old_value: '0' },
        { key: 'deny', old_value: '2048' },
      ],
      user_id: owner.id,
      action_type: 15,
      options: { id: alice.id, type: '1' },
      reason: 'd',
    });
    // Overwrites sent with a channel PATCH are overwrite entries too.
    await ok(as(server, owner, 'PATCH', `/channels/${channel.id}`, { permission_overwrites: [] }));
    assert.deepEqual((await latest(15)).options, { id: modRoleId, type: '0', role_name: 'auditor' });

    await byOwner('DELETE', `/channels/${channel.id}`, undefined, 'gone', 204);
    const deleted = await latest(12);
    assert.equal(deleted.target_id, channel.id);
    assert.deepEqual(deleted.changes[0], { key: 'name', old_value: 'audit' });
    assert.equal(deleted.reason, 'gone');
  });

  it('records member updates (nick, timeout, mute), role changes, kicks, bans and unbans', async () => {
    const bob = await registerUser(server);
    await join(server, owner, bob, guild);
    await byOwner('PATCH', `/guilds/${guild.id}/members/${bob.id}`, { nick: 'Bobby' }, 'nick');
    assert.deepEqual(await latest(24), {
      target_id: bob.id,
      changes: [{ key: 'nick', new_value: 'Bobby' }],
      user_id: owner.id,
      action_type: 24,
      reason: 'nick',
    });
    const until = new Date(Date.now() + 3600_000).toISOString();
    await byOwner(
      'PATCH',
      `/guilds/${guild.id}/members/${bob.id}`,
      { communication_disabled_until: until, mute: true },
      'calm down',
    );
    assert.deepEqual(await latest(24), {
      target_id: bob.id,
      changes: [
        { key: 'mute', old_value: false, new_value: true },
        { key: 'communication_disabled_until', new_value: until },
      ],
      user_id: owner.id,
      action_type: 24,
      reason: 'calm down',
    });

    await byOwner('PATCH', `/guilds/${guild.id}/members/${bob.id}`, { roles: [modRoleId] }, 'promote');
    assert.deepEqual(await latest(25), {
      target_id: bob.id,
      changes: [{ key: '$add', new_value: [{ id: modRoleId, name: 'auditor' }] }],
      user_id: owner.id,
      action_type: 25,
      reason: 'promote',
    });
    await byOwner('DELETE', `/guilds/${guild.id}/members/${bob.id}/roles/${modRoleId}`, undefined, 'demote', 204);
    assert.deepEqual(await latest(25), {
      target_id: bob.id,
      changes: [{ key: '$remove', new_value: [{ id: modRoleId, name: 'auditor' }] }],
      user_id: owner.id,
      action_type: 25,
      reason: 'demote',
    });

    await byOwner('DELETE', `/guilds/${guild.id}/members/${bob.id}`, undefined, 'spam', 204);
    assert.deepEqual(await latest(20), { target_id: bob.id, user_id: owner.id, action_type: 20, reason: 'spam' });

    await byOwner('PUT', `/guilds/${guild.id}/bans/${bob.id}`, {}, 'more spam', 204);
    assert.deepEqual(await latest(22), {
      target_id: bob.id,
      user_id: owner.id,
      action_type: 22,
      reason: 'more spam',
    });
    await byOwner('DELETE', `/guilds/${guild.id}/bans/${bob.id}`, undefined, 'second chance', 204);
    assert.deepEqual(await latest(23), {
      target_id: bob.id,
      user_id: owner.id,
      action_type: 23,
      reason: 'second chance',
    });
    // Targets that are users come with the users list, even when no longer members.
    const page = await log('?action_type=23');
    assert.ok(page.users.some((u: any) => u.id === bob.id));
  });

  it('records role create, update and delete', async () => {
    const role = await byOwner('POST', `/guilds/${guild.id}/roles`, { name: 'temp', color: 255 }, 'event');
    assert.deepEqual(await latest(30), {
      target_id: role.id,
      changes: [
        { key: 'name', new_value: 'temp' },
        { key: 'permissions', new_value: '0' },
        { key: 'color', new_value: 255 },
        { key: 'hoist', new_value: false },
        { key: 'mentionable', new_value: false },
      ],
      user_id: owner.id,
      action_type: 30,
      reason: 'event',
    });
    await byOwner('PATCH', `/guilds/${guild.id}/roles/${role.id}`, { hoist: true }, 'show');
    assert.deepEqual(await latest(31), {
      target_id: role.id,
      changes: [{ key: 'hoist', old_value: false, new_value: true }],
      user_id: owner.id,
      action_type: 31,
      reason: 'show',
    });
    await byOwner('DELETE', `/guilds/${guild.id}/roles/${role.id}`, undefined, 'over', 204);
    const deleted = await latest(32);
    assert.equal(deleted.target_id, role.id);
    assert.deepEqual(deleted.changes[0], { key: 'name', old_value: 'temp' });
    assert.equal(deleted.reason, 'over');
  });

  it('records invite create and delete (no target id, the code in the changes)', async () => {
    const invite = await byOwner('POST', `/channels/${channelId}/invites`, { max_uses: 5, unique: true }, 'party');
    assert.deepEqual(await latest(40), {
      target_id: null,
      changes: [
        { key: 'code', new_value: invite.code },
        { key: 'channel_id', new_value: channelId },
        { key: 'inviter_id', new_value: owner.id },
        { key: 'uses', new_value: 0 },
        { key: 'max_uses', new_value: 5 },
        { key: 'max_age', new_value: 0 },
        { key: 'temporary', new_value: false },
      ],
      user_id: owner.id,
      action_type: 40,
      reason: 'party',
    });
    await byOwner('DELETE', `/invites/${invite.code}`, undefined, 'over', 204);
    const deleted = await latest(42);
    assert.equal(deleted.target_id, null);
    assert.deepEqual(deleted.changes[0], { key: 'code', old_value: invite.code });
    assert.equal(deleted.reason, 'over');
  });

  it('records webhook create, update and delete, listing the webhooks that still exist', async () => {
    const hook = await byOwner('POST', `/channels/${channelId}/webhooks`, { name: 'Hook' }, 'ci');
    assert.deepEqual(await latest(50), {
      target_id: hook.id,
      changes: [
        { key: 'type', new_value: 1 },
        { key: 'name', new_value: 'Hook' },
        { key: 'channel_id', new_value: channelId },
      ],
      user_id: owner.id,
      action_type: 50,
      reason: 'ci',
    });
    await byOwner('PATCH', `/webhooks/${hook.id}`, { name: 'Hook 2' }, 'rename');
    assert.deepEqual(await latest(51), {
      target_id: hook.id,
      changes: [{ key: 'name', old_value: 'Hook', new_value: 'Hook 2' }],
      user_id: owner.id,
      action_type: 51,
      reason: 'rename',
    });
    const listed = await log('?action_type=51');
    assert.deepEqual(listed.webhooks, [
      {
        id: hook.id,
        type: 1,
        guild_id: guild.id,
        channel_id: channelId,
        name: 'Hook 2',
        avatar: null,
        application_id: null,
      },
    ]);
    // Changes through the token carry no identity: not logged.
    await ok(as(server, owner, 'PATCH', `/webhooks/${hook.id}/${hook.token}`, { name: 'Hook 3' }));
    assert.equal((await log('?action_type=51')).audit_log_entries.length, 1);
    await byOwner('DELETE', `/webhooks/${hook.id}`, undefined, 'unused', 204);
    const deleted = await latest(52);
    assert.deepEqual(deleted.changes, [
      { key: 'type', old_value: 1 },
      { key: 'name', old_value: 'Hook 3' },
      { key: 'channel_id', old_value: channelId },
    ]);
    assert.equal(deleted.reason, 'unused');
    assert.deepEqual((await log('?action_type=52')).webhooks, []);
  });

  it("records a moderator's message delete, bulk delete, pin and unpin (not an author deleting their own)", async () => {
    const own = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'mine' }));
    await ok(as(server, alice, 'DELETE', `/channels/${channelId}/messages/${own.id}`), 204);
    assert.equal((await log('?action_type=72')).audit_log_entries.length, 0);

    const message = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'rude' }));
    await byOwner('PUT', `/channels/${channelId}/messages/pins/${message.id}`, undefined, 'important', 204);
    assert.deepEqual(await latest(74), {
      target_id: alice.id,
      user_id: owner.id,
      action_type: 74,
      options: { channel_id: channelId, message_id: message.id },
      reason: 'important',
    });
    await byOwner('DELETE', `/channels/${channelId}/pins/${message.id}`, undefined, 'not really', 204);
    assert.deepEqual(await latest(75), {
      target_id: alice.id,
      user_id: owner.id,
      action_type: 75,
      options: { channel_id: channelId, message_id: message.id },
      reason: 'not really',
    });
    // Unpinning what is not pinned changes nothing and logs nothing.
    await ok(as(server, owner, 'DELETE', `/channels/${channelId}/pins/${message.id}`), 204);
    assert.equal((await log('?action_type=75')).audit_log_entries.length, 1);

    await byOwner('DELETE', `/channels/${channelId}/messages/${message.id}`, undefined, 'rude', 204);
    assert.deepEqual(await latest(72), {
      target_id: alice.id,
      user_id: owner.id,
      action_type: 72,
      options: { channel_id: channelId, count: '1' },
      reason: 'rude',
    });

    const a = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'one' }));
    const b = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'two' }));
    await byOwner('POST', `/channels/${channelId}/messages/bulk-delete`, { messages: [a.id, b.id] }, 'purge', 204);
    assert.deepEqual(await latest(73), {
      target_id: channelId,
      user_id: owner.id,
      action_type: 73,
      options: { count: '2' },
      reason: 'purge',
    });
  });

  it('records thread create, update and delete, listing the threads that still exist', async () => {
    const thread = await ok(
      as(server, alice, 'POST', `/channels/${channelId}/threads`, { name: 'Side talk' }, why('topic')),
    );
    assert.deepEqual(await latest(110), {
      target_id: thread.id,
      changes: [
        { key: 'name', new_value: 'Side talk' },
        { key: 'type', new_value: 11 },
        { key: 'archived', new_value: false },
        { key: 'locked', new_value: false },
        { key: 'auto_archive_duration', new_value: 1440 },
        { key: 'rate_limit_per_user', new_value: 0 },
      ],
      user_id: alice.id,
      action_type: 110,
      reason: 'topic',
    });
    await byOwner('PATCH', `/channels/${thread.id}`, { locked: true }, 'heated');
    assert.deepEqual(await latest(111), {
      target_id: thread.id,
      changes: [{ key: 'locked', old_value: false, new_value: true }],
      user_id: owner.id,
      action_type: 111,
      reason: 'heated',
    });
    const listed = await log('?action_type=111');
    assert.deepEqual(
      listed.threads.map((t: any) => [t.id, t.name, t.thread_metadata.locked]),
      [[thread.id, 'Side talk', true]],
    );
    await byOwner('DELETE', `/channels/${thread.id}`, undefined, 'done', 204);
    const deleted = await latest(112);
    assert.equal(deleted.target_id, thread.id);
    assert.equal(deleted.user_id, owner.id);
    assert.equal(deleted.reason, 'done');
    assert.deepEqual((await log('?action_type=112')).threads, []);
  });

  it('records emoji create (one and bulk), rename and delete, with the name in the changes', async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 4, background: '#00ff00' } })
      .png()
      .toBuffer();
    const image = `data:image/png;base64,${png.toString('base64')}`;
    const emoji = await byOwner('POST', `/guilds/${guild.id}/emojis`, { name: 'party', image }, 'celebrate');
    assert.deepEqual(await latest(60), {
      target_id: emoji.id,
      changes: [{ key: 'name', new_value: 'party' }],
      user_id: owner.id,
      action_type: 60,
      reason: 'celebrate',
    });
    const bulk = await byOwner(
      'POST',
      `/guilds/${guild.id}/emojis/bulk`,
      { emojis: [{ name: 'more', image }] },
      'more',
    );
    assert.deepEqual(await latest(60), {
      target_id: bulk.success[0].id,
      changes: [{ key: 'name', new_value: 'more' }],
      user_id: owner.id,
      action_type: 60,
      reason: 'more',
    });
    await byOwner('PATCH', `/guilds/${guild.id}/emojis/${emoji.id}`, { name: 'fiesta' }, 'i18n');
    assert.deepEqual(await latest(61), {
      target_id: emoji.id,
      changes: [{ key: 'name', old_value: 'party', new_value: 'fiesta' }],
      user_id: owner.id,
      action_type: 61,
      reason: 'i18n',
    });
    await byOwner('DELETE', `/guilds/${guild.id}/emojis/${emoji.id}`, undefined, 'old', 204);
    assert.deepEqual(await latest(62), {
      target_id: emoji.id,
      changes: [{ key: 'name', old_value: 'fiesta' }],
      user_id: owner.id,
      action_type: 62,
      reason: 'old',
    });
  });

  it('records sticker create, update and delete', async () => {
    const png = await sharp({ create: { width: 320, height: 320, channels: 4, background: '#ff00ff' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('name', 'Wave');
    form.append('tags', 'hello');
    form.append('description', 'A wave');
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'wave.png');
    const res = await fetch(`${server.url}/v1/guilds/${guild.id}/stickers`, {
      method: 'POST',
      headers: { authorization: owner.token, ...why('greetings') },
      body: form,
    });
    assert.equal(res.status, 200);
    const sticker = (await res.json()) as any;
    assert.deepEqual(await latest(90), {
      target_id: sticker.id,
      changes: [
        { key: 'name', new_value: 'Wave' },
        { key: 'description', new_value: 'A wave' },
        { key: 'tags', new_value: 'hello' },
        { key: 'format_type', new_value: 1 },
        { key: 'available', new_value: true },
      ],
      user_id: owner.id,
      action_type: 90,
      reason: 'greetings',
    });
    await byOwner('PATCH', `/guilds/${guild.id}/stickers/${sticker.id}`, { tags: 'hi' }, 'shorter');
    assert.deepEqual(await latest(91), {
      target_id: sticker.id,
      changes: [{ key: 'tags', old_value: 'hello', new_value: 'hi' }],
      user_id: owner.id,
      action_type: 91,
      reason: 'shorter',
    });
    await byOwner('DELETE', `/guilds/${guild.id}/stickers/${sticker.id}`, undefined, 'bye', 204);
    const deleted = await latest(92);
    assert.equal(deleted.target_id, sticker.id);
    assert.deepEqual(deleted.changes[0], { key: 'name', old_value: 'Wave' });
    assert.equal(deleted.reason, 'bye');
  });

  it('keeps a reason without header as absent, cuts a long one to 512 characters, keeps a malformed one as sent', async () => {
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_timeout: 300 }));
    assert.equal('reason' in (await latest(1)), false);
    await ok(
      as(
        server,
        owner,
        'PATCH',
        `/guilds/${guild.id}`,
        { afk_timeout: 900 },
        { 'X-Audit-Log-Reason': 'x'.repeat(600) },
      ),
    );
    assert.equal((await latest(1)).reason, 'x'.repeat(512));
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}`, { afk_timeout: 60 }, { 'X-Audit-Log-Reason': '100%' }));
    assert.equal((await latest(1)).reason, '100%');
  });

  it('filters by user_id and action_type and pages with before, after and limit, newest first', async () => {
    const g = await newGuild(server, owner, 'Pager');
    await join(server, owner, mod, g);
    const modRole = await ok(
      as(server, owner, 'POST', `/guilds/${g.id}/roles`, {
        name: 'm',
        permissions: (VIEW_AUDIT_LOG | (1n << 28n)).toString(),
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${g.id}/members/${mod.id}/roles/${modRole.id}`), 204);
    for (let i = 0; i < 5; i++) await ok(as(server, owner, 'POST', `/guilds/${g.id}/roles`, { name: `r${i}` }));
    await ok(as(server, mod, 'POST', `/guilds/${g.id}/roles`, { name: 'by-mod' }));
    const get = (query: string) => ok(as(server, mod, 'GET', `/guilds/${g.id}/audit-logs${query}`));

    const all = (await get('')).audit_log_entries;
    const ids = all.map((e: any) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x: string, y: string) => (BigInt(y) > BigInt(x) ? 1 : -1)),
    );
    // invite (join), role m, role given to mod, r0..r4, by-mod
    assert.deepEqual(
      all.map((e: any) => e.action_type),
      [30, 30, 30, 30, 30, 30, 25, 30, 40],
    );

    const roles = (await get('?action_type=30')).audit_log_entries;
    assert.equal(roles.length, 7);
    const byMod = (await get(`?user_id=${mod.id}`)).audit_log_entries;
    assert.deepEqual(
      byMod.map((e: any) => e.changes[0].new_value),
      ['by-mod'],
    );
    assert.equal((await get(`?user_id=${owner.id}&action_type=30`)).audit_log_entries.length, 6);

    const first = (await get('?action_type=30&limit=3')).audit_log_entries;
    assert.deepEqual(
      first.map((e: any) => e.id),
      roles.slice(0, 3).map((e: any) => e.id),
    );
    const second = (await get(`?action_type=30&limit=3&before=${first[2].id}`)).audit_log_entries;
    assert.deepEqual(
      second.map((e: any) => e.id),
      roles.slice(3, 6).map((e: any) => e.id),
    );
    // `after` gives the entries just after the cursor, still newest first.
    const later = (await get(`?action_type=30&limit=2&after=${roles[6].id}`)).audit_log_entries;
    assert.deepEqual(
      later.map((e: any) => e.id),
      [roles[4].id, roles[5].id],
    );
    const between = (await get(`?action_type=30&after=${roles[4].id}&before=${roles[1].id}`)).audit_log_entries;
    assert.deepEqual(
      between.map((e: any) => e.id),
      [roles[2].id, roles[3].id],
    );
    assert.equal((await get('')).audit_log_entries.length, 9);
    assert.equal((await get('?limit=100')).audit_log_entries.length, 9);
  });

  it('is refused without VIEW_AUDIT_LOG, to non-members and for unknown guilds', async () => {
    const denied = await as(server, alice, 'GET', `/guilds/${guild.id}/audit-logs`);
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });
    const stranger = await as(server, outsider, 'GET', `/guilds/${guild.id}/audit-logs`);
    assert.equal(stranger.status, 403);
    assert.equal(stranger.body.code, 'MISSING_ACCESS');
    const unknown = await as(server, owner, 'GET', '/guilds/123456789012345678/audit-logs');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_GUILD');
    const anonymous = await as(server, { auth: '' }, 'GET', `/guilds/${guild.id}/audit-logs`);
    assert.equal(anonymous.status, 401);
    // The holder of the permission through a role reads it.
    const page = await log('?limit=1', mod);
    assert.equal(page.audit_log_entries.length, 1);
  });

  it('answers 400 to a malformed query', async () => {
    for (const [query, path] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=ten', 'limit'],
      ['?action_type=abc', 'action_type'],
      ['?action_type=1.5', 'action_type'],
      ['?before=yesterday', 'before'],
      ['?after=-1', 'after'],
      ['?user_id=me', 'user_id'],
    ] as const) {
      const res = await as(server, owner, 'GET', `/guilds/${guild.id}/audit-logs${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 'INVALID_FORM_BODY', query);
      assert.equal(res.body.errors[0].path, path, query);
    }
  });

  it('sends GUILD_AUDIT_LOG_ENTRY_CREATE to members holding VIEW_AUDIT_LOG only', async () => {
    const { client: modGateway } = await readyClient(server, mod.token);
    const { client: aliceGateway } = await readyClient(server, alice.token);
    try {
      await byOwner('PATCH', `/guilds/${guild.id}`, { afk_timeout: 1800 }, 'live');
      const frame = await modGateway.dispatch('GUILD_AUDIT_LOG_ENTRY_CREATE');
      const { id, ...entry } = frame.d;
      assert.match(id, /^\d+$/);
      assert.deepEqual(entry, {
        target_id: guild.id,
        changes: [{ key: 'afk_timeout', old_value: 60, new_value: 1800 }],
        user_id: owner.id,
        action_type: 1,
        reason: 'live',
        guild_id: guild.id,
      });
      assert.equal(await aliceGateway.nothing((f) => f.t === 'GUILD_AUDIT_LOG_ENTRY_CREATE'), true);
    } finally {
      await modGateway.close();
      await aliceGateway.close();
    }
  });
});
