import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, bits, join, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Per-guild member profiles (issue 16): avatar, banner, bio and nick through `PATCH /guilds/{id}/members/…`. */

let server: TestServer;
let owner: TestUser;
let mod: TestUser;
let alice: TestUser;
let bob: TestUser;
let outsider: TestUser;
let guild: any;
let red: Buffer;
let blue: Buffer;
const clients: GatewayClient[] = [];

const dataUri = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;
const image = (color: string, size = 64) =>
  sharp({ create: { width: size, height: size, channels: 3, background: color } })
    .png()
    .toBuffer();
const MISSING_PERMISSIONS = { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' };
const CHANGE_NICKNAME = 1n << 26n;

before(async () => {
  server = await startTestServer();
  [owner, mod, alice, bob, outsider] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  guild = await newGuild(server, owner, 'Profiles');
  for (const user of [mod, alice, bob]) await join(server, owner, user, guild);
  const modRole = await ok(
    as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'mods', permissions: bits(P.MANAGE_NICKNAMES) }),
  );
  await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${mod.id}/roles/${modRole.id}`), 204);
  [red, blue] = await Promise.all([image('#ff0000'), image('#0000ff')]);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close(1000)));
  await server?.close();
});

describe('per-guild member profile', () => {
  it('sets the own avatar, banner, bio and nick, announces them and serves the images through the media proxy', async () => {
    const { client: watcher } = await readyClient(server, bob.token);
    clients.push(watcher);
    const res = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, {
      nick: 'Ally',
      avatar: dataUri(red),
      banner: dataUri(blue),
      bio: 'Here for the cake.',
    });
    assert.equal(res.status, 200, res.text);
    const member = res.body;
    assert.deepEqual(Object.keys(member).sort(), [
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
    assert.equal(member.user.id, alice.id);
    assert.equal(member.nick, 'Ally');
    assert.match(member.avatar, /^[0-9a-f]{8}$/);
    assert.match(member.banner, /^[0-9a-f]{8}$/);
    assert.notEqual(member.avatar, member.banner);
    assert.equal(member.bio, 'Here for the cake.');
    // The account's own avatar is untouched: the per-guild one overrides it in this guild only.
    assert.equal(member.user.avatar, null);

    const update = await watcher.next(
      (f) => f.t === 'GUILD_MEMBER_UPDATE' && f.d.user.id === alice.id && f.d.avatar === member.avatar,
    );
    assert.equal(update.d.guild_id, guild.id);
    assert.equal(update.d.nick, 'Ally');
    assert.equal(update.d.banner, member.banner);
    assert.equal(update.d.bio, 'Here for the cake.');

    const avatar = await fetch(
      `${server.url}/media/guilds/${guild.id}/users/${alice.id}/avatars/${member.avatar}.png?size=16`,
    );
    assert.equal(avatar.status, 200);
    assert.equal(avatar.headers.get('content-type'), 'image/png');
    const avatarBytes = Buffer.from(await avatar.arrayBuffer());
    const meta = await sharp(avatarBytes).metadata();
    assert.equal(meta.width, 16);
    const { data: pixel } = await sharp(avatarBytes).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([...pixel.subarray(0, 3)], [255, 0, 0]);
    const banner = await fetch(
      `${server.url}/media/guilds/${guild.id}/users/${alice.id}/banners/${member.banner}.webp`,
    );
    assert.equal(banner.status, 200);
    assert.equal(banner.headers.get('content-type'), 'image/webp');
    // Another member's path, or the banner hash under avatars, names nothing.
    const elsewhere = await request(
      server,
      'GET',
      `/media/guilds/${guild.id}/users/${bob.id}/avatars/${member.avatar}.png`,
    );
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.body.code, 'NOT_FOUND');
    const crossed = await request(
      server,
      'GET',
      `/media/guilds/${guild.id}/users/${alice.id}/avatars/${member.banner}.png`,
    );
    assert.equal(crossed.status, 404);

    // Every member object carries them: one member, the list, a message's author member.
    const one = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/members/${alice.id}`));
    assert.deepEqual([one.avatar, one.banner, one.bio, one.nick], [member.avatar, member.banner, member.bio, 'Ally']);
    const list = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/members?limit=10`));
    const listed = list.find((m: any) => m.user.id === alice.id);
    assert.deepEqual([listed.avatar, listed.banner], [member.avatar, member.banner]);
    await ok(as(server, alice, 'POST', `/channels/${guild.system_channel_id}/messages`, { content: 'cake?' }));
    const created = await watcher.next(
      (f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === alice.id && f.d.content === 'cake?',
    );
    assert.equal(created.d.member.avatar, member.avatar);
    assert.equal(created.d.member.banner, member.banner);
  });

  it('clears the images and the bio with null or an empty string', async () => {
    const cleared = await ok(
      as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, { avatar: null, banner: null, bio: '' }),
    );
    assert.equal(cleared.avatar, null);
    assert.equal(cleared.banner, null);
    assert.equal(cleared.bio, null);
    assert.equal(cleared.nick, 'Ally', 'fields not named stay as they were');
    const again = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/members/@me`));
    assert.deepEqual([again.avatar, again.banner, again.bio], [null, null, null]);
  });

  it('also accepts the own id instead of @me', async () => {
    const res = await ok(as(server, bob, 'PATCH', `/guilds/${guild.id}/members/${bob.id}`, { avatar: dataUri(blue) }));
    assert.match(res.avatar, /^[0-9a-f]{8}$/);
  });

  it('refuses what is not an image, and a bio over 320 characters', async () => {
    for (const [body, field] of [
      [{ avatar: 'data:image/png;base64,aGVsbG8=' }, 'avatar'],
      [{ banner: 'https://example.com/x.png' }, 'banner'],
    ] as const) {
      const res = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, body);
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.path, e.code]),
        [[field, 'INVALID_FORMAT']],
      );
    }
    const long = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, { bio: 'x'.repeat(321) });
    assert.equal(long.status, 400);
    assert.equal(long.body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(
      long.body.errors.map((e: any) => e.path),
      ['bio'],
    );
    const member = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/members/@me`));
    assert.equal(member.bio, null, 'nothing was written');
  });

  it("never sets another member's avatar, banner or bio, not even as the owner", async () => {
    for (const body of [{ avatar: dataUri(red) }, { banner: null }, { bio: 'hi' }]) {
      const res = await as(server, owner, 'PATCH', `/guilds/${guild.id}/members/${alice.id}`, body);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, MISSING_PERMISSIONS);
    }
  });

  it('keeps outsiders out', async () => {
    const res = await as(server, outsider, 'PATCH', `/guilds/${guild.id}/members/@me`, { avatar: dataUri(red) });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { code: 'MISSING_ACCESS', message: 'Missing access' });
  });
});

describe('nicknames', () => {
  it('lets a MANAGE_NICKNAMES holder rename a lower member, with an audit entry', async () => {
    const res = await as(
      server,
      mod,
      'PATCH',
      `/guilds/${guild.id}/members/${bob.id}`,
      { nick: 'Robert' },
      { 'X-Audit-Log-Reason': 'be%20formal' },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.nick, 'Robert');
    const page = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/audit-logs?action_type=24&limit=1`));
    const { id, ...entry } = page.audit_log_entries[0];
    assert.match(id, /^\d+$/);
    assert.deepEqual(entry, {
      target_id: bob.id,
      changes: [{ key: 'nick', new_value: 'Robert' }],
      user_id: mod.id,
      action_type: 24,
      reason: 'be formal',
    });
  });

  it('refuses renaming others without MANAGE_NICKNAMES, and the owner even with it', async () => {
    const byMember = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/${bob.id}`, { nick: 'Bobby' });
    assert.equal(byMember.status, 403);
    assert.deepEqual(byMember.body, MISSING_PERMISSIONS);
    const onOwner = await as(server, mod, 'PATCH', `/guilds/${guild.id}/members/${owner.id}`, { nick: 'Boss' });
    assert.equal(onOwner.status, 403);
    assert.deepEqual(onOwner.body, MISSING_PERMISSIONS);
    const bobNow = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/members/@me`));
    assert.equal(bobNow.nick, 'Robert');
  });

  it('needs CHANGE_NICKNAME for the own nick (MANAGE_NICKNAMES also does), while the own images stay free', async () => {
    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/roles`))).find(
      (r: any) => r.id === guild.id,
    );
    const without = (BigInt(everyone.permissions) & ~CHANGE_NICKNAME).toString();
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: without }));
    try {
      const denied = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, { nick: 'Al' });
      assert.equal(denied.status, 403);
      assert.deepEqual(denied.body, MISSING_PERMISSIONS);
      const both = await as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, {
        nick: 'Al',
        avatar: dataUri(red),
      });
      assert.equal(both.status, 403, 'a refused field refuses the whole request');
      const member = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/members/@me`));
      assert.deepEqual([member.nick, member.avatar], ['Ally', null]);
      const imageOnly = await ok(
        as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, { avatar: dataUri(red) }),
      );
      assert.match(imageOnly.avatar, /^[0-9a-f]{8}$/);
      const byMod = await ok(as(server, mod, 'PATCH', `/guilds/${guild.id}/members/@me`, { nick: 'Moderator' }));
      assert.equal(byMod.nick, 'Moderator');
    } finally {
      await ok(
        as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: everyone.permissions }),
      );
    }
    const allowed = await ok(as(server, alice, 'PATCH', `/guilds/${guild.id}/members/@me`, { nick: 'Al' }));
    assert.equal(allowed.nick, 'Al');
  });
});
