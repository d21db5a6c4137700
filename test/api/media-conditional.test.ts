import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { externalMediaPath } from '../../src/domains/media/external-signature.ts';
import { as, newGuild, ok, postAttachment } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Conditional requests on media (docs/media.md#conditional-requests): a strong ETag and Last-Modified on every
 * media answer, 304 for If-None-Match / If-Modified-Since, 412 for If-Match / If-Unmodified-Since, If-Range
 * deciding between 206 and 200, and garbled validators answered, never a 500. Over real HTTP.
 */

let server: TestServer;
let owner: TestUser;
let guild: any;
let png: Buffer;
let upstream: http.Server;
let upstreamUrl: string;
const UPSTREAM_DATE = 'Tue, 03 Mar 2026 10:00:00 GMT';
const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/;

interface Got {
  status: number;
  headers: Headers;
  body: Buffer;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** An HTTP-date `seconds` away from `date`. */
function shifted(date: string, seconds: number): string {
  return new Date(Date.parse(date) + seconds * 1000).toUTCString();
}

/** The caching headers a 304 must repeat, and no body. */
function assertNotModified(res: Got, full: Got, label: string) {
  assert.equal(res.status, 304, label);
  assert.equal(res.body.length, 0, label);
  assert.equal(res.headers.get('etag'), full.headers.get('etag'), label);
  assert.equal(res.headers.get('last-modified'), full.headers.get('last-modified'), label);
  assert.equal(res.headers.get('cache-control'), full.headers.get('cache-control'), label);
  assert.equal(res.headers.get('content-range'), null, label);
}

async function uploadAttachment(channelId: string, filename: string, bytes: Buffer, type: string): Promise<string> {
  return (await postAttachment(server, owner.token, channelId, { filename, bytes, type })).url;
}

before(async () => {
  png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
  upstream = http.createServer((req, res) => {
    if (req.url === '/dated.png') res.writeHead(200, { 'content-type': 'image/png', 'last-modified': UPSTREAM_DATE });
    else if (req.url === '/undated.png') res.writeHead(200, { 'content-type': 'image/png' });
    else if (req.url === '/bad-date.png') res.writeHead(200, { 'last-modified': 'yesterday' });
    else {
      res.writeHead(404);
      res.end();
      return;
    }
    res.end(png);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  server = await startTestServer({ HEARTH_MEDIA_ALLOW_PRIVATE: '1' });
  owner = await registerUser(server);
  guild = await newGuild(server, owner, 'Conditional Den');
});

after(async () => {
  await server?.close();
  upstream?.close();
});

describe('an attachment served as stored', () => {
  let url: string;
  let bytes: Buffer;
  let full: Got;
  let etag: string;
  let lastModified: string;

  before(async () => {
    bytes = randomBytes(1000);
    url = await uploadAttachment(guild.system_channel_id, 'data.bin', bytes, 'application/octet-stream');
    full = await get(url);
    etag = full.headers.get('etag') as string;
    lastModified = full.headers.get('last-modified') as string;
  });

  test('sends a strong ETag, Last-Modified and immutable caching, the same on every GET', async () => {
    assert.equal(full.status, 200);
    assert.ok(full.body.equals(bytes));
    assert.match(etag, STRONG_TAG);
    assert.equal(new Date(lastModified).toUTCString(), lastModified, 'an IMF-fixdate');
    assert.ok(Math.abs(Date.parse(lastModified) - Date.now()) < 10 * 60_000);
    assert.equal(full.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(full.headers.get('accept-ranges'), 'bytes');
    const again = await get(url);
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(again.headers.get('last-modified'), lastModified);
  });

  test('If-None-Match that matches (weak comparison, lists, *) is 304 with the caching headers and no body', async () => {
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, `${etag},"other"`, '*', `garbage, ${etag}`]) {
      assertNotModified(await get(url, { 'if-none-match': value }), full, value);
    }
    // A match wins over a Range: 304, not 206.
    assertNotModified(await get(url, { 'if-none-match': etag, range: 'bytes=0-9' }), full, 'with a Range');
  });

  test('If-None-Match that matches nothing (stale, garbled, empty) is the whole 200', async () => {
    for (const value of ['"other"', 'W/"other"', 'garbage', '"unterminated', `${etag.slice(1)}`, '', ', ,', '**']) {
      const res = await get(url, { 'if-none-match': value });
      assert.equal(res.status, 200, value);
      assert.ok(res.body.equals(bytes), value);
      assert.equal(res.headers.get('etag'), etag, value);
    }
  });

  test('If-Modified-Since: 304 at or after Last-Modified, 200 before it; a bad date is ignored', async () => {
    assertNotModified(await get(url, { 'if-modified-since': lastModified }), full, 'equal');
    assertNotModified(await get(url, { 'if-modified-since': shifted(lastModified, 60) }), full, 'later');
    for (const value of [
      shifted(lastModified, -1),
      'yesterday',
      'Sat, 31 Feb 2026 00:00:00 GMT',
      '0',
      lastModified.replace('GMT', 'PST'),
    ]) {
      const res = await get(url, { 'if-modified-since': value });
      assert.equal(res.status, 200, value);
      assert.ok(res.body.equals(bytes), value);
    }
    // If-None-Match, when present, decides alone.
    const res = await get(url, { 'if-none-match': '"other"', 'if-modified-since': lastModified });
    assert.equal(res.status, 200);
  });

  test('If-Match and If-Unmodified-Since: 200 when they hold, 412 PRECONDITION_FAILED when not', async () => {
    for (const headers of [
      { 'if-match': etag },
      { 'if-match': '*' },
      { 'if-match': `"a", ${etag}` },
      { 'if-unmodified-since': lastModified },
      { 'if-unmodified-since': 'not a date' },
    ] as Record<string, string>[]) {
      const res = await get(url, headers);
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.ok(res.body.equals(bytes));
    }
    for (const headers of [
      { 'if-match': '"other"' },
      // Strong comparison: a weak tag never satisfies If-Match.
      { 'if-match': `W/${etag}` },
      { 'if-match': 'garbage' },
      { 'if-match': '' },
      { 'if-unmodified-since': shifted(lastModified, -1) },
      // If-Match is evaluated first, and a failure there is not rescued by If-None-Match.
      { 'if-match': '"other"', 'if-none-match': etag },
      { 'if-match': '"other"', 'if-unmodified-since': lastModified },
    ] as Record<string, string>[]) {
      const res = await get(url, headers);
      assert.equal(res.status, 412, JSON.stringify(headers));
      assert.equal(JSON.parse(res.body.toString()).code, 'PRECONDITION_FAILED');
      assert.equal(res.headers.get('etag'), etag);
    }
  });

  test('If-Range with the current ETag or date gives the 206 range; stale, weak or garbled gives the whole 200', async () => {
    for (const ifRange of [etag, lastModified]) {
      const res = await get(url, { range: 'bytes=10-19', 'if-range': ifRange });
      assert.equal(res.status, 206, ifRange);
      assert.equal(res.headers.get('content-range'), 'bytes 10-19/1000');
      assert.equal(res.headers.get('content-length'), '10');
      assert.equal(res.headers.get('etag'), etag);
      assert.ok(res.body.equals(bytes.subarray(10, 20)));
    }
    for (const ifRange of [
      '"stale"',
      `W/${etag}`,
      `${etag}, "other"`,
      shifted(lastModified, -1),
      shifted(lastModified, 1),
      'garbage',
      '*',
      '',
    ]) {
      const res = await get(url, { range: 'bytes=10-19', 'if-range': ifRange });
      assert.equal(res.status, 200, ifRange);
      assert.equal(res.headers.get('content-range'), null, ifRange);
      assert.equal(res.headers.get('content-length'), '1000', ifRange);
      assert.ok(res.body.equals(bytes), ifRange);
    }
  });

  test('an unsatisfiable Range is 416 when If-Range holds, and the whole 200 when it does not', async () => {
    const holds = await get(url, { range: 'bytes=5000-', 'if-range': etag });
    assert.equal(holds.status, 416);
    assert.equal(holds.headers.get('content-range'), 'bytes */1000');
    assert.equal(JSON.parse(holds.body.toString()).code, 'RANGE_NOT_SATISFIABLE');
    const stale = await get(url, { range: 'bytes=5000-', 'if-range': '"stale"' });
    assert.equal(stale.status, 200);
    assert.ok(stale.body.equals(bytes));
    // Malformed ranges are ignored: the whole object.
    for (const range of ['bytes=0-1,5-9', 'bytes=x-y', 'bytes=9-1', 'pages=1-2', 'bytes=-']) {
      const res = await get(url, { range, 'if-range': etag });
      assert.equal(res.status, 200, range);
      assert.ok(res.body.equals(bytes), range);
    }
  });

  test('a missing attachment is 404 whatever the validators say', async () => {
    const missing = url.replace(/\/data\.bin$/, '/other.bin');
    const variants: Record<string, string>[] = [
      { 'if-none-match': '*' },
      { 'if-match': '*' },
      { 'if-modified-since': lastModified },
    ];
    for (const headers of variants) {
      const res = await get(missing, headers);
      assert.equal(res.status, 404, JSON.stringify(headers));
    }
  });

  test('no garbled validator or range answers a 5xx', async () => {
    const nasty = [
      '',
      ' ',
      ',',
      '"',
      'W/',
      'W/"',
      '""',
      '"a""b"',
      'W/W/"a"',
      '"\u00ff"',
      `${'"x",'.repeat(500)}`,
      'Mon, 99 Jan 2026 99:99:99 GMT',
      'Sunday, 06-Nov-94 08:49:37 GMT',
      'Sun Nov  6 08:49:37 1994',
      '-1',
      'bytes=99999999999999999999-',
    ];
    for (const name of ['if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'range'])
      for (const value of nasty) {
        const res = await get(url, { [name]: value, ...(name === 'if-range' ? { range: 'bytes=0-9' } : {}) });
        assert.ok([200, 206, 304, 412, 416].includes(res.status), `${name}: ${value} → ${res.status}`);
      }
  });
});

describe('re-encoded images', () => {
  test('a resized attachment image has its own tag per size and answers 304', async () => {
    const url = await uploadAttachment(guild.system_channel_id, 'blue.png', png, 'image/png');
    const stored = await get(url);
    const small = await get(`${url}?width=16`);
    const smaller = await get(`${url}?width=8`);
    assert.equal(small.status, 200);
    assert.equal((await sharp(small.body).metadata()).width, 16);
    const tags = [stored, small, smaller].map((r) => r.headers.get('etag') as string);
    for (const tag of tags) assert.match(tag, STRONG_TAG);
    assert.equal(new Set(tags).size, 3, 'each representation has its own tag');
    assert.equal(small.headers.get('last-modified'), stored.headers.get('last-modified'));
    assertNotModified(await get(`${url}?width=16`, { 'if-none-match': tags[1] as string }), small, 'width 16');
    assert.equal((await get(`${url}?width=16`, { 'if-none-match': tags[2] as string })).status, 200);
    // A derived image is served from the cache the second time: the same bytes.
    assert.ok((await get(`${url}?width=16`)).body.equals(small.body));
  });

  test('avatars: a tag per size and format, 304 on a match, 412 on a failed If-Match', async () => {
    const patch = await request(server, 'PATCH', '/v1/users/@me', {
      auth: owner.token,
      body: { avatar: `data:image/png;base64,${png.toString('base64')}` },
    });
    assert.equal(patch.status, 200, patch.text);
    const base = `${server.url}/media/avatars/${owner.id}/${patch.body.avatar}`;
    const a = await get(`${base}.png?size=16`);
    const b = await get(`${base}.png?size=32`);
    const c = await get(`${base}.webp?size=16`);
    for (const res of [a, b, c]) {
      assert.equal(res.status, 200);
      assert.match(res.headers.get('etag') as string, STRONG_TAG);
      assert.ok(res.headers.get('last-modified'));
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
    assert.equal(new Set([a, b, c].map((r) => r.headers.get('etag'))).size, 3);
    // `size` snaps to a power of two: 20 is 16, the same representation and tag.
    assert.equal((await get(`${base}.png?size=20`)).headers.get('etag'), a.headers.get('etag'));
    assertNotModified(
      await get(`${base}.png?size=16`, { 'if-none-match': a.headers.get('etag') as string }),
      a,
      'avatar',
    );
    assertNotModified(
      await get(`${base}.png?size=16`, { 'if-modified-since': a.headers.get('last-modified') as string }),
      a,
      'avatar by date',
    );
    const failed = await get(`${base}.png?size=16`, { 'if-match': b.headers.get('etag') as string });
    assert.equal(failed.status, 412);
    const missing = await get(`${server.url}/media/avatars/${owner.id}/00000000.png`, { 'if-none-match': '*' });
    assert.equal(missing.status, 404);
  });

  test('emojis and stickers carry validators and answer 304', async () => {
    const emoji = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, {
        name: 'blue',
        image: `data:image/png;base64,${png.toString('base64')}`,
      }),
    );
    const form = new FormData();
    form.append('name', 'Blue');
    form.append('tags', 'blue');
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'blue.png');
    const res = await fetch(`${server.url}/v1/guilds/${guild.id}/stickers`, {
      method: 'POST',
      headers: { authorization: owner.token },
      body: form,
    });
    assert.equal(res.status, 200);
    const sticker = (await res.json()) as { id: string };
    for (const url of [
      `${server.url}/media/emojis/${emoji.id}.png`,
      `${server.url}/media/stickers/${sticker.id}.png`,
    ]) {
      const full = await get(url);
      assert.equal(full.status, 200, url);
      assert.match(full.headers.get('etag') as string, STRONG_TAG);
      assertNotModified(await get(url, { 'if-none-match': full.headers.get('etag') as string }), full, url);
      assert.equal((await get(url, { 'if-none-match': '"other"' })).status, 200);
    }
  });
});

describe('the media proxy', () => {
  const proxied = (target: string) =>
    `${server.url}/media${externalMediaPath(server.app.services.secrets.mediaProxy, `${upstreamUrl}${target}`)}`;

  test('the tag is the digest of the bytes sent; Last-Modified is the upstream’s when valid', async () => {
    const dated = await get(proxied('/dated.png'));
    const undated = await get(proxied('/undated.png'));
    const badDate = await get(proxied('/bad-date.png'));
    assert.equal(dated.status, 200);
    assert.match(dated.headers.get('etag') as string, STRONG_TAG);
    // The same bytes from another URL: the same representation, the same tag.
    assert.equal(undated.headers.get('etag'), dated.headers.get('etag'));
    assert.equal(dated.headers.get('last-modified'), UPSTREAM_DATE);
    assert.equal(undated.headers.get('last-modified'), null);
    assert.equal(badDate.status, 200);
    assert.equal(badDate.headers.get('last-modified'), null);
    assertNotModified(
      await get(proxied('/dated.png'), { 'if-none-match': dated.headers.get('etag') as string }),
      dated,
      'proxy',
    );
    assertNotModified(await get(proxied('/dated.png'), { 'if-modified-since': UPSTREAM_DATE }), dated, 'by date');
    assert.equal((await get(proxied('/dated.png'), { 'if-modified-since': shifted(UPSTREAM_DATE, -1) })).status, 200);
    assert.equal((await get(proxied('/dated.png'), { 'if-match': '"other"' })).status, 412);
    assert.equal((await get(proxied('/undated.png'), { 'if-modified-since': UPSTREAM_DATE })).status, 200);
  });
});
