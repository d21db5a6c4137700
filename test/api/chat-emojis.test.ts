import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, assertOnlyFormError, bits, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Custom guild emojis over raw HTTP and the gateway: CRUD, validation, permissions, limits, reactions. */

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let outsider: TestUser;
let guild: any;
let png: Buffer;
let gif: Buffer;

const dataUri = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
const CREATE_EXPRESSIONS = 1n << 43n;
const MANAGE_EXPRESSIONS = 1n << 30n;
const USE_EXTERNAL_EMOJIS = 1n << 18n;

async function image(color: string, size = 32): Promise<Buffer> {
  return sharp({ create: { width: size, height: size, channels: 4, background: color } })
    .png()
    .toBuffer();
}

before(async () => {
  server = await startTestServer();
  [owner, alice, outsider] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  guild = await newGuild(server, owner, 'Emoji Den');
  await join(server, owner, alice, guild);
  png = await image('#ff0000');
  const frames = await Promise.all([image('#ff0000', 16), image('#0000ff', 16)]);
  gif = await sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer();
});

after(async () => {
  await server?.close();
});

describe('emoji routes', () => {
  test('create, get, list, edit and delete, with Discord’s emoji object; the image is served at /media/emojis', async () => {
    const created = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'blob_1', image: dataUri(png) }),
    );
    assert.match(created.id, /^\d+$/);
    assert.equal(created.user.id, owner.id);
    assert.equal(created.user.username, owner.username);
    const { user: _user, ...rest } = created;
    assert.deepEqual(rest, {
      id: created.id,
      name: 'blob_1',
      roles: [],
      require_colons: true,
      managed: false,
      animated: false,
      available: true,
    });

    const one = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/emojis/${created.id}`));
    assert.deepEqual(one, created);
    const list = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/emojis`));
    assert.deepEqual(
      list.map((e: any) => e.id),
      [created.id],
    );
    const full = await ok(as(server, alice, 'GET', `/guilds/${guild.id}`));
    assert.deepEqual(full.emojis, [rest]);

    const served = await request(server, 'GET', `/media/emojis/${created.id}.png`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    const webp = await fetch(`${server.url}/media/emojis/${created.id}.webp?size=16`);
    assert.equal(webp.status, 200);
    const meta = await sharp(Buffer.from(await webp.arrayBuffer())).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.width, 16);

    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'emoji fans' }));
    const edited = await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/${created.id}`, { name: 'blob_2', roles: [role.id] }),
    );
    assert.equal(edited.name, 'blob_2');
    assert.deepEqual(edited.roles, [role.id]);
    assert.equal(edited.user.id, owner.id);
    const cleared = await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/${created.id}`, { roles: null }));
    assert.deepEqual(cleared.roles, []);
    assert.equal(cleared.name, 'blob_2');

    const deleted = await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${created.id}`);
    assert.equal(deleted.status, 204);
    const gone = await as(server, owner, 'GET', `/guilds/${guild.id}/emojis/${created.id}`);
    assert.equal(gone.status, 400);
    assert.deepEqual(gone.body, { code: 'UNKNOWN_EMOJI', message: 'Unknown emoji' });
    assert.equal((await request(server, 'GET', `/media/emojis/${created.id}.png`)).status, 404);
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${guild.id}/emojis`)), []);
  });

  test('an animated GIF makes an animated emoji, served as GIF; the declared type is not trusted (discord.js sends image/jpg)', async () => {
    const animated = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'spin', image: dataUri(gif, 'image/jpg') }),
    );
    assert.equal(animated.animated, true);
    const served = await request(server, 'GET', `/media/emojis/${animated.id}.gif`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/gif');
    const still = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'still', image: dataUri(png, 'image/jpg') }),
    );
    assert.equal(still.animated, false);
    for (const id of [animated.id, still.id])
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${id}`)).status, 204);
  });

  test('a picture larger than 128 px either way is shrunk to fit at upload, frames kept', async () => {
    const big = await image('#3366ff', 512);
    const wide = await sharp({ create: { width: 400, height: 100, channels: 4, background: '#00ff00' } })
      .png()
      .toBuffer();
    const bigFrames = await Promise.all([image('#ff0000', 300), image('#0000ff', 300)]);
    const bigGif = await sharp(bigFrames, { join: { animated: true } })
      .gif()
      .toBuffer();
    const sizes: [string, number, number, number][] = [];
    for (const [name, bytes] of [
      ['big', big],
      ['wide', wide],
      ['big_gif', bigGif],
      ['small', png],
    ] as const) {
      const emoji = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name, image: dataUri(bytes) }));
      const ext = emoji.animated ? 'gif' : 'png';
      const served = await fetch(`${server.url}/media/emojis/${emoji.id}.${ext}`);
      const meta = await sharp(Buffer.from(await served.arrayBuffer()), { animated: true }).metadata();
      sizes.push([name, meta.width ?? 0, meta.pageHeight ?? meta.height ?? 0, meta.pages ?? 1]);
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${emoji.id}`)).status, 204);
    }
    assert.deepEqual(sizes, [
      ['big', 128, 128, 1],
      ['wide', 128, 32, 1],
      ['big_gif', 128, 128, 2],
      ['small', 32, 32, 1],
    ]);
  });

  test('validation: name 2–32 of [A-Za-z0-9_], image a data URI of a real image of at most 256 KiB', async () => {
    const post = (body: unknown) => as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, body);
    assertOnlyFormError(await post({ name: 'a', image: dataUri(png) }), 'name', 'INVALID_FORMAT');
    assertOnlyFormError(await post({ name: 'bad-name', image: dataUri(png) }), 'name', 'INVALID_FORMAT');
    assertOnlyFormError(
      await post({ name: 'x'.repeat(33), image: dataUri(png) }),
      'name',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
    assertOnlyFormError(await post({ image: dataUri(png) }), 'name', 'BASE_TYPE_REQUIRED');
    assertOnlyFormError(await post({ name: 'noimage' }), 'image', 'BASE_TYPE_REQUIRED');
    const notUri = await post({ name: 'nouri', image: 'https://example.com/x.png' });
    assertOnlyFormError(notUri, 'image', 'INVALID_FORMAT');
    assert.equal(notUri.body.errors[0].message, 'Expected a base64 image data URI');
    const notImage = await post({ name: 'text', image: dataUri(Buffer.from('just some text, not an image')) });
    assertOnlyFormError(notImage, 'image', 'INVALID_FORMAT');
    assert.equal(notImage.body.errors[0].message, 'Invalid image data');
    // A PNG signature over garbage is sniffed as PNG but does not decode.
    const broken = Buffer.concat([png.subarray(0, 8), Buffer.alloc(64, 7)]);
    assertOnlyFormError(await post({ name: 'broken', image: dataUri(broken) }), 'image', 'INVALID_FORMAT');
    const big = Buffer.concat([png, Buffer.alloc(256 * 1024 + 1 - png.length, 0)]);
    const tooBig = await post({ name: 'huge', image: dataUri(big) });
    assertOnlyFormError(tooBig, 'image', 'BINARY_TYPE_MAX_SIZE');
    assert.equal(tooBig.body.errors[0].message, 'File cannot be larger than 256.0 kb.');
    const unknownRole = await post({ name: 'roled', image: dataUri(png), roles: ['12345'] });
    assert.equal(unknownRole.status, 404);
    assert.equal(unknownRole.body.code, 'UNKNOWN_ROLE');
    const unknownId = await as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/99999`, { name: 'zz' });
    assert.equal(unknownId.status, 400);
    assert.equal(unknownId.body.code, 'UNKNOWN_EMOJI');
    assert.equal((await as(server, owner, 'GET', `/guilds/${guild.id}/emojis/nope`)).body.code, 'UNKNOWN_EMOJI');
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${guild.id}/emojis`)), []);
  });

  test('permissions: CREATE_EXPRESSIONS creates and manages one’s own; MANAGE_EXPRESSIONS manages all; outsiders are refused', async () => {
    const own = await ok(
      as(server, alice, 'POST', `/guilds/${guild.id}/emojis`, { name: 'alices', image: dataUri(png) }),
    );
    assert.equal(own.user.id, alice.id);
    const renamed = await ok(as(server, alice, 'PATCH', `/guilds/${guild.id}/emojis/${own.id}`, { name: 'alices2' }));
    assert.equal(renamed.name, 'alices2');
    const ownersEmoji = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'owners', image: dataUri(png) }),
    );
    for (const [method, body] of [
      ['PATCH', { name: 'mine_now' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await as(server, alice, method, `/guilds/${guild.id}/emojis/${ownersEmoji.id}`, body);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });
    }
    const outside = await as(server, outsider, 'POST', `/guilds/${guild.id}/emojis`, {
      name: 'intruder',
      image: dataUri(png),
    });
    assert.equal(outside.status, 403);
    assert.equal(outside.body.code, 'MISSING_ACCESS');
    assert.equal((await as(server, outsider, 'GET', `/guilds/${guild.id}/emojis`)).body.code, 'MISSING_ACCESS');

    // Without CREATE_EXPRESSIONS on @everyone, a plain member can neither create nor touch their own emoji,
    // and lists come without uploaders.
    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/roles`))).find(
      (r: any) => r.id === guild.id,
    );
    const without = BigInt(everyone.permissions) & ~CREATE_EXPRESSIONS;
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: without.toString() }));
    const denied = await as(server, alice, 'POST', `/guilds/${guild.id}/emojis`, {
      name: 'again',
      image: dataUri(png),
    });
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });
    assert.equal((await as(server, alice, 'DELETE', `/guilds/${guild.id}/emojis/${own.id}`)).status, 403);
    const plain = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/emojis`));
    assert.ok(plain.length === 2 && plain.every((e: any) => !('user' in e)));

    // A role with MANAGE_EXPRESSIONS manages everyone's emojis.
    const managers = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'curators',
        permissions: bits(MANAGE_EXPRESSIONS),
      }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${alice.id}/roles/${managers.id}`), 204);
    assert.equal((await as(server, alice, 'DELETE', `/guilds/${guild.id}/emojis/${ownersEmoji.id}`)).status, 204);
    assert.equal((await as(server, alice, 'DELETE', `/guilds/${guild.id}/emojis/${own.id}`)).status, 204);
    await ok(as(server, owner, 'DELETE', `/guilds/${guild.id}/members/${alice.id}/roles/${managers.id}`), 204);
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: (without | CREATE_EXPRESSIONS).toString(),
      }),
    );
  });

  test('limits: 50 static and 50 animated per guild (MAX_EMOJIS / MAX_ANIMATED_EMOJIS); bulk reports each item', async () => {
    const other = await newGuild(server, owner, 'Full of emojis');
    const items = Array.from({ length: 50 }, (_, i) => ({ name: `static_${i}`, image: dataUri(png) }));
    const bulk = await ok(as(server, owner, 'POST', `/guilds/${other.id}/emojis/bulk`, { emojis: items }));
    assert.equal(bulk.success.length, 50);
    assert.deepEqual(bulk.failed, []);
    const full = await as(server, owner, 'POST', `/guilds/${other.id}/emojis`, {
      name: 'one_more',
      image: dataUri(png),
    });
    assert.equal(full.status, 400);
    assert.deepEqual(full.body, { code: 'MAX_EMOJIS', message: 'Maximum number of emojis reached' });
    // Animated ones have their own allowance.
    const animatedItems = Array.from({ length: 50 }, (_, i) => ({ name: `anim_${i}`, image: dataUri(gif) }));
    const mixed = await ok(
      as(server, owner, 'POST', `/guilds/${other.id}/emojis/bulk`, {
        emojis: [
          ...animatedItems.slice(0, 48),
          { name: 'x', image: dataUri(gif) },
          { name: 'static_extra', image: dataUri(png) },
        ],
      }),
    );
    assert.equal(mixed.success.length, 48);
    assert.ok(mixed.success.every((e: any) => e.animated === true));
    assert.deepEqual(
      mixed.failed.map((f: any) => [f.name, f.code, f.errors?.[0]?.code ?? null]),
      [
        ['x', 'INVALID_FORM_BODY', 'INVALID_FORMAT'],
        ['static_extra', 'MAX_EMOJIS', null],
      ],
    );
    for (const name of ['anim_48', 'anim_49'])
      await ok(as(server, owner, 'POST', `/guilds/${other.id}/emojis`, { name, image: dataUri(gif) }));
    const fullAnimated = await as(server, owner, 'POST', `/guilds/${other.id}/emojis`, {
      name: 'anim_50',
      image: dataUri(gif),
    });
    assert.equal(fullAnimated.status, 400);
    assert.deepEqual(fullAnimated.body, {
      code: 'MAX_ANIMATED_EMOJIS',
      message: 'Maximum number of animated emojis reached',
    });
    assert.equal((await ok(as(server, owner, 'GET', `/guilds/${other.id}/emojis`))).length, 100);
    const empty = await as(server, owner, 'POST', `/guilds/${other.id}/emojis/bulk`, { emojis: [] });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'INVALID_FORM_BODY');
  });
});

describe('emojis on the gateway', () => {
  test('GUILD_EMOJIS_UPDATE {guild_id, emojis} on create, edit and delete; GUILD_CREATE carries emojis', async () => {
    const { client: gw } = await readyClient(server, alice.token);
    try {
      const created = await ok(
        as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'wave', image: dataUri(png) }),
      );
      const { user: _u, ...view } = created;
      const onCreate = await gw.dispatch('GUILD_EMOJIS_UPDATE');
      assert.deepEqual(onCreate.d, { guild_id: guild.id, emojis: [view] });
      await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/${created.id}`, { name: 'wave_2' }));
      const onEdit = await gw.dispatch('GUILD_EMOJIS_UPDATE');
      assert.deepEqual(onEdit.d, { guild_id: guild.id, emojis: [{ ...view, name: 'wave_2' }] });

      // A guild payload (READY for users) lists the guild's emojis.
      const fresh = GatewayClient.connect(server);
      const ready = await fresh.ready(alice.token);
      const payload = ready.d.guilds.find((g: any) => g.id === guild.id);
      assert.deepEqual(payload.emojis, [{ ...view, name: 'wave_2' }]);
      await fresh.close();

      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${created.id}`)).status, 204);
      const onDelete = await gw.dispatch('GUILD_EMOJIS_UPDATE');
      assert.deepEqual(onDelete.d, { guild_id: guild.id, emojis: [] });
    } finally {
      await gw.close();
    }
  });

  test('deleting a role takes it off role-restricted emojis, with GUILD_EMOJIS_UPDATE', async () => {
    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'temporary' }));
    const emoji = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'vip', image: dataUri(png), roles: [role.id] }),
    );
    assert.deepEqual(emoji.roles, [role.id]);
    const { client: gw } = await readyClient(server, alice.token);
    try {
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/roles/${role.id}`)).status, 204);
      const update = await gw.dispatch('GUILD_EMOJIS_UPDATE');
      assert.deepEqual(
        update.d.emojis.map((e: any) => [e.id, e.roles]),
        [[emoji.id, []]],
      );
    } finally {
      await gw.close();
    }
    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${emoji.id}`)).status, 204);
  });
});

describe('custom emojis in reactions', () => {
  test('`name:id` must be a usable emoji: its guild’s, or another guild’s the caller is in (USE_EXTERNAL_EMOJIS), with its roles', async () => {
    const channelId = guild.system_channel_id;
    const message = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'react to me' }));
    const emoji = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'party', image: dataUri(png) }),
    );
    const react = (user: TestUser, text: string) =>
      as(
        server,
        user,
        'PUT',
        `/channels/${channelId}/messages/${message.id}/reactions/${encodeURIComponent(text)}/@me`,
      );

    // The stored name wins over the one in the path.
    assert.equal((await react(alice, `whatever:${emoji.id}`)).status, 204);
    const seen = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${message.id}`));
    assert.deepEqual(seen.reactions, [
      { emoji: { id: emoji.id, name: 'party', animated: false }, count: 1, me: false },
    ]);
    const users = await ok(
      as(server, owner, 'GET', `/channels/${channelId}/messages/${message.id}/reactions/party:${emoji.id}`),
    );
    assert.deepEqual(
      users.map((u: any) => u.id),
      [alice.id],
    );

    const unknown = await react(alice, 'ghost:123456789012345678');
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, { code: 'UNKNOWN_EMOJI', message: 'Unknown emoji' });

    // An emoji of a guild the caller is not in is unknown to them; once a member, USE_EXTERNAL_EMOJIS decides.
    const elsewhere = await newGuild(server, outsider, 'Elsewhere');
    const foreign = await ok(
      as(server, outsider, 'POST', `/guilds/${elsewhere.id}/emojis`, { name: 'foreign', image: dataUri(png) }),
    );
    const notMember = await react(alice, `foreign:${foreign.id}`);
    assert.equal(notMember.status, 400);
    assert.equal(notMember.body.code, 'UNKNOWN_EMOJI');
    await join(server, outsider, alice, elsewhere);
    assert.equal((await react(alice, `foreign:${foreign.id}`)).status, 204);
    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/roles`))).find(
      (r: any) => r.id === guild.id,
    );
    const without = BigInt(everyone.permissions) & ~USE_EXTERNAL_EMOJIS;
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: without.toString() }));
    await ok(
      as(server, alice, 'DELETE', `/channels/${channelId}/messages/${message.id}/reactions/foreign:${foreign.id}/@me`),
      204,
    );
    const external = await react(alice, `foreign:${foreign.id}`);
    assert.equal(external.status, 403);
    assert.equal(external.body.code, 'MISSING_PERMISSIONS');
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: everyone.permissions }),
    );

    // A role-restricted emoji needs one of its roles.
    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'partygoers' }));
    await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/${emoji.id}`, { roles: [role.id] }));
    const other = await ok(as(server, owner, 'POST', `/channels/${channelId}/messages`, { content: 'second' }));
    const restricted = await as(
      server,
      alice,
      'PUT',
      `/channels/${channelId}/messages/${other.id}/reactions/party:${emoji.id}/@me`,
    );
    assert.equal(restricted.status, 403);
    assert.equal(restricted.body.code, 'MISSING_PERMISSIONS');
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${alice.id}/roles/${role.id}`), 204);
    await ok(
      as(server, alice, 'PUT', `/channels/${channelId}/messages/${other.id}/reactions/party:${emoji.id}/@me`),
      204,
    );
  });
});
