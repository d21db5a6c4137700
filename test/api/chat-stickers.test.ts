import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { readyClient } from '../gateway/gateway-client.ts';
import { as, assertOnlyFormError, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Guild stickers over raw HTTP and the gateway: multipart upload, validation, permissions, limit, sending. */

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let outsider: TestUser;
let guild: any;
let png: Buffer;
let gif: Buffer;
let jpeg: Buffer;

const CREATE_EXPRESSIONS = 1n << 43n;
const USE_EXTERNAL_STICKERS = 1n << 37n;

function solid(color: string, size = 32): ReturnType<typeof sharp> {
  return sharp({ create: { width: size, height: size, channels: 4, background: color } });
}

/** CRC-32 of PNG chunks (node 20 has no zlib.crc32). */
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A PNG with an `acTL` chunk after IHDR: what makes a PNG an APNG. */
function asApng(pngBytes: Buffer): Buffer {
  const ihdrEnd = 8 + 12 + pngBytes.readUInt32BE(8);
  const data = Buffer.alloc(8);
  data.writeUInt32BE(1, 0);
  const typeAndData = Buffer.concat([Buffer.from('acTL', 'latin1'), data]);
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  typeAndData.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typeAndData), 8 + data.length);
  return Buffer.concat([pngBytes.subarray(0, ihdrEnd), chunk, pngBytes.subarray(ihdrEnd)]);
}

function upload(
  user: TestUser,
  guildId: string,
  fields: Record<string, string>,
  file?: { bytes: Buffer; name?: string; type?: string },
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  if (file)
    form.append(
      'file',
      new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'image/png' }),
      file.name ?? 'x.png',
    );
  return fetch(`${server.url}/v1/guilds/${guildId}/stickers`, {
    method: 'POST',
    headers: { authorization: user.token },
    body: form,
  }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => null)) as any }));
}

before(async () => {
  server = await startTestServer();
  [owner, alice, outsider] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  guild = await newGuild(server, owner, 'Sticker Den');
  await join(server, owner, alice, guild);
  png = await solid('#ff0000').png().toBuffer();
  jpeg = await solid('#00ff00').jpeg().toBuffer();
  const frames = await Promise.all([solid('#f00', 16).png().toBuffer(), solid('#00f', 16).png().toBuffer()]);
  gif = await sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer();
});

after(async () => {
  await server?.close();
});

describe('sticker routes', () => {
  test('multipart create, get, list, GET /stickers/{id}, edit and delete, in Discord’s sticker object; served at /media/stickers', async () => {
    const created = await upload(owner, guild.id, { name: 'Happy', tags: 'smile', description: '' }, { bytes: png });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const sticker = created.body;
    assert.equal(sticker.user.id, owner.id);
    const { user: _user, ...view } = sticker;
    assert.deepEqual(view, {
      id: sticker.id,
      name: 'Happy',
      description: null,
      tags: 'smile',
      type: 2,
      format_type: 1,
      available: true,
      guild_id: guild.id,
    });
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${guild.id}/stickers/${sticker.id}`)), sticker);
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${guild.id}/stickers`)), [sticker]);
    assert.deepEqual(await ok(as(server, outsider, 'GET', `/stickers/${sticker.id}`)), view);
    assert.deepEqual((await ok(as(server, alice, 'GET', `/guilds/${guild.id}`))).stickers, [view]);
    const served = await fetch(`${server.url}/media/stickers/${sticker.id}.png`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');

    const edited = await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/stickers/${sticker.id}`, {
        name: 'Happier',
        description: 'a happy face',
        tags: 'joy',
      }),
    );
    assert.equal(edited.name, 'Happier');
    assert.equal(edited.description, 'a happy face');
    assert.equal(edited.tags, 'joy');
    assert.equal(edited.user.id, owner.id);

    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/stickers/${sticker.id}`)).status, 204);
    const gone = await as(server, owner, 'GET', `/guilds/${guild.id}/stickers/${sticker.id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { code: 'UNKNOWN_STICKER', message: 'Unknown sticker' });
    assert.equal((await fetch(`${server.url}/media/stickers/${sticker.id}.png`)).status, 404);
  });

  test('format_type: PNG 1, APNG 2 (served untouched), GIF 4', async () => {
    const apng = asApng(png);
    const a = await upload(owner, guild.id, { name: 'Apng', tags: 'moving' }, { bytes: apng });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.format_type, 2);
    const servedApng = await fetch(`${server.url}/media/stickers/${a.body.id}.png`);
    assert.equal(servedApng.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await servedApng.arrayBuffer()), apng);
    const g = await upload(owner, guild.id, { name: 'Gif', tags: 'spin' }, { bytes: gif, type: 'image/gif' });
    assert.equal(g.body.format_type, 4);
    const servedGif = await fetch(`${server.url}/media/stickers/${g.body.id}.gif`);
    assert.equal(servedGif.headers.get('content-type'), 'image/gif');
    for (const id of [a.body.id, g.body.id])
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/stickers/${id}`)).status, 204);
  });

  test('a picture larger than 320 px either way is shrunk to fit at upload', async () => {
    const big = await solid('#123456', 640).png().toBuffer();
    const created = await upload(owner, guild.id, { name: 'Big', tags: 'large' }, { bytes: big });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const served = await fetch(`${server.url}/media/stickers/${created.body.id}.png`);
    const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [320, 320]);
    assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/stickers/${created.body.id}`)).status, 204);
  });

  test('validation: name 2–30, tags required (≤ 200), description empty or 2–100, a PNG/APNG/GIF file of at most 512 KiB', async () => {
    assertOnlyFormError(
      await upload(owner, guild.id, { name: 'a', tags: 't' }, { bytes: png }),
      'name',
      'INVALID_FORMAT',
    );
    assertOnlyFormError(
      await upload(owner, guild.id, { name: 'x'.repeat(31), tags: 't' }, { bytes: png }),
      'name',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
    assertOnlyFormError(
      await upload(owner, guild.id, { name: 'notags' }, { bytes: png }),
      'tags',
      'BASE_TYPE_REQUIRED',
    );
    assertOnlyFormError(
      await upload(owner, guild.id, { name: 'desc', tags: 't', description: 'x' }, { bytes: png }),
      'description',
      'INVALID_FORMAT',
    );
    assertOnlyFormError(await upload(owner, guild.id, { name: 'nofile', tags: 't' }), 'file', 'BASE_TYPE_REQUIRED');
    const wrongType = await upload(owner, guild.id, { name: 'jpeg', tags: 't' }, { bytes: jpeg, type: 'image/jpeg' });
    assertOnlyFormError(wrongType, 'file', 'INVALID_FORMAT');
    assert.equal(wrongType.body.errors[0].message, 'Stickers must be PNG, APNG or GIF images');
    const big = Buffer.concat([png, Buffer.alloc(512 * 1024 + 1 - png.length, 0)]);
    const tooBig = await upload(owner, guild.id, { name: 'huge', tags: 't' }, { bytes: big });
    assertOnlyFormError(tooBig, 'file', 'BINARY_TYPE_MAX_SIZE');
    assert.equal(tooBig.body.errors[0].message, 'File cannot be larger than 512.0 kb.');
    const json = await as(server, owner, 'POST', `/guilds/${guild.id}/stickers`, { name: 'json', tags: 't' });
    assertOnlyFormError(json, 'body', 'INVALID_FORMAT');
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${guild.id}/stickers`)), []);
  });

  test('permissions like emojis, and 5 stickers per guild (MAX_STICKERS)', async () => {
    const outside = await upload(outsider, guild.id, { name: 'nope', tags: 't' }, { bytes: png });
    assert.equal(outside.status, 403);
    assert.equal(outside.body.code, 'MISSING_ACCESS');
    const own = await upload(alice, guild.id, { name: 'Alices', tags: 't' }, { bytes: png });
    assert.equal(own.status, 200);
    await ok(as(server, alice, 'PATCH', `/guilds/${guild.id}/stickers/${own.body.id}`, { name: 'Alices2' }));
    const owners = await upload(owner, guild.id, { name: 'Owners', tags: 't' }, { bytes: png });
    const refused = await as(server, alice, 'DELETE', `/guilds/${guild.id}/stickers/${owners.body.id}`);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });

    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/roles`))).find(
      (r: any) => r.id === guild.id,
    );
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: (BigInt(everyone.permissions) & ~CREATE_EXPRESSIONS).toString(),
      }),
    );
    const denied = await upload(alice, guild.id, { name: 'Again', tags: 't' }, { bytes: png });
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: everyone.permissions }),
    );

    for (const name of ['Three', 'Four', 'Five'])
      assert.equal((await upload(owner, guild.id, { name, tags: 't' }, { bytes: png })).status, 200);
    const full = await upload(owner, guild.id, { name: 'Six', tags: 't' }, { bytes: png });
    assert.equal(full.status, 400);
    assert.deepEqual(full.body, { code: 'MAX_STICKERS', message: 'Maximum number of stickers reached' });
    for (const sticker of await ok(as(server, owner, 'GET', `/guilds/${guild.id}/stickers`)))
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/stickers/${sticker.id}`)).status, 204);
  });
});

describe('stickers on the gateway and in messages', () => {
  test('GUILD_STICKERS_UPDATE {guild_id, stickers} on create, edit and delete', async () => {
    const { client: gw } = await readyClient(server, alice.token);
    try {
      const created = (await upload(owner, guild.id, { name: 'Wave', tags: 'hi' }, { bytes: png })).body;
      const { user: _u, ...view } = created;
      assert.deepEqual((await gw.dispatch('GUILD_STICKERS_UPDATE')).d, { guild_id: guild.id, stickers: [view] });
      await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/stickers/${created.id}`, { name: 'Wave2' }));
      assert.deepEqual((await gw.dispatch('GUILD_STICKERS_UPDATE')).d, {
        guild_id: guild.id,
        stickers: [{ ...view, name: 'Wave2' }],
      });
      assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/stickers/${created.id}`)).status, 204);
      assert.deepEqual((await gw.dispatch('GUILD_STICKERS_UPDATE')).d, { guild_id: guild.id, stickers: [] });
    } finally {
      await gw.close();
    }
  });

  test('sticker_ids: a usable sticker is sent as sticker_items; unknown or out-of-reach ones are INVALID_STICKER_SENT', async () => {
    const channelId = guild.system_channel_id;
    const sticker = (await upload(owner, guild.id, { name: 'Sendme', tags: 'go' }, { bytes: png })).body;
    const { user: _u, ...view } = sticker;
    const { client: gw } = await readyClient(server, owner.token);
    try {
      const sent = await ok(
        as(server, alice, 'POST', `/channels/${channelId}/messages`, { sticker_ids: [sticker.id] }),
      );
      assert.equal(sent.content, '');
      assert.deepEqual(sent.sticker_items, [{ id: sticker.id, name: 'Sendme', format_type: 1 }]);
      assert.deepEqual(sent.stickers, [view]);
      const live = await gw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.id === sent.id);
      assert.deepEqual(live.d.sticker_items, sent.sticker_items);
      const read = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${sent.id}`));
      assert.deepEqual(read.sticker_items, sent.sticker_items);
    } finally {
      await gw.close();
    }

    const unknown = await as(server, alice, 'POST', `/channels/${channelId}/messages`, {
      sticker_ids: ['123456789012345678'],
    });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, { code: 'INVALID_STICKER_SENT', message: 'Invalid sticker sent' });
    const tooMany = await as(server, alice, 'POST', `/channels/${channelId}/messages`, {
      sticker_ids: [sticker.id, sticker.id, sticker.id, sticker.id],
    });
    assertOnlyFormError(tooMany, 'sticker_ids', 'CONTENT_EXCEEDS_MAX_LENGTH');

    // Another guild's sticker: the sender must be a member there and hold USE_EXTERNAL_STICKERS here.
    const elsewhere = await newGuild(server, outsider, 'Sticker Elsewhere');
    const foreign = (await upload(outsider, elsewhere.id, { name: 'Foreign', tags: 'far' }, { bytes: png })).body;
    const notMember = await as(server, alice, 'POST', `/channels/${channelId}/messages`, { sticker_ids: [foreign.id] });
    assert.equal(notMember.status, 400);
    assert.equal(notMember.body.code, 'INVALID_STICKER_SENT');
    await join(server, outsider, alice, elsewhere);
    const external = await ok(
      as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'from afar', sticker_ids: [foreign.id] }),
    );
    assert.deepEqual(external.sticker_items, [{ id: foreign.id, name: 'Foreign', format_type: 1 }]);
    const everyone = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/roles`))).find(
      (r: any) => r.id === guild.id,
    );
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: (BigInt(everyone.permissions) & ~USE_EXTERNAL_STICKERS).toString(),
      }),
    );
    const noExternal = await as(server, alice, 'POST', `/channels/${channelId}/messages`, {
      sticker_ids: [foreign.id],
    });
    assert.equal(noExternal.status, 403);
    assert.equal(noExternal.body.code, 'MISSING_PERMISSIONS');
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { permissions: everyone.permissions }),
    );

    // A deleted sticker drops out of the messages that carried it.
    await ok(as(server, outsider, 'DELETE', `/guilds/${elsewhere.id}/stickers/${foreign.id}`), 204);
    const after = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${external.id}`));
    assert.deepEqual(after.stickers, []);
    assert.equal(after.sticker_items, undefined);
  });
});

describe('sticker uploads are streamed (docs/media.md#uploads-in-flight)', () => {
  /** Keys left under `staging/` in the test server's local store. */
  async function staged(): Promise<string[]> {
    const { readdir } = await import('node:fs/promises');
    const { join: joinPath } = await import('node:path');
    return readdir(joinPath(server.dataDir, 'objects', 'staging')).catch(() => []);
  }

  /** Waits until the staging area is empty (cleanup runs once the exchange is over). */
  async function stagingEmpties(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await staged()).length > 0) {
      assert.ok(Date.now() < deadline, `staging still holds ${(await staged()).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('a file over 512 KiB is BINARY_TYPE_MAX_SIZE however large the body, and nothing stays staged', async () => {
    const den = await newGuild(server, owner, 'Streamed Stickers');
    for (const size of [512 * 1024 + 1, 600 * 1024, 3 * 1024 * 1024]) {
      const big = Buffer.concat([png, Buffer.alloc(size - png.length, 7)]);
      const res = await upload(owner, den.id, { name: 'huge', tags: 't' }, { bytes: big });
      assertOnlyFormError(res, 'file', 'BINARY_TYPE_MAX_SIZE');
      assert.equal(res.body.errors[0].message, 'File cannot be larger than 512.0 kb.');
    }
    await stagingEmpties();
    assert.deepEqual(await ok(as(server, owner, 'GET', `/guilds/${den.id}/stickers`)), []);
  });

  test('an APNG above the in-memory head (≥ 64 KiB) is checked, kept byte for byte and served with ranges', async () => {
    const den = await newGuild(server, owner, 'Big Stickers');
    // Noise does not compress: a 160×160 RGBA PNG of random pixels is about 100 KiB.
    const { randomBytes } = await import('node:crypto');
    const noise = await sharp(randomBytes(160 * 160 * 4), { raw: { width: 160, height: 160, channels: 4 } })
      .png()
      .toBuffer();
    const apng = asApng(noise);
    assert.ok(apng.length > 64 * 1024 && apng.length < 512 * 1024, `${apng.length} bytes`);
    const created = await upload(owner, den.id, { name: 'Noise', tags: 'n' }, { bytes: apng });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.format_type, 2);
    const url = `${server.url}/media/stickers/${created.body.id}.png`;
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(apng), 'served exactly as uploaded');
    const etag = served.headers.get('etag') as string;
    const part = await fetch(url, { headers: { range: 'bytes=0-99', 'if-range': etag } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(apng.subarray(0, 100)));
    // A large file is still decoded to be checked: a PNG signature over noise is refused.
    const fake = Buffer.concat([png.subarray(0, 8), randomBytes(100 * 1024)]);
    const refused = await upload(owner, den.id, { name: 'Broken', tags: 'b' }, { bytes: fake });
    assertOnlyFormError(refused, 'file', 'INVALID_FORMAT');
    await stagingEmpties();
    assert.equal((await ok(as(server, owner, 'GET', `/guilds/${den.id}/stickers`))).length, 1);
  });
});
