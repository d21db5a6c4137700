import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import sharp from 'sharp';
import { externalMediaPath } from '../../src/domains/media/external-signature.ts';
import { sha256Hex } from '../../src/platform/crypto/tokens.ts';
import { startTestS3, type TestS3 } from '../support/s3-server.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';

/**
 * The media proxy keeps fetched external media (docs/media.md#external-media-cache): as long as the upstream's
 * Cache-Control allows, clamped to 5 min – 1 day, never errors, never past the entry bound; one fetch for
 * requests that arrive together; shared by two nodes on one object store, within a byte budget (oldest stored
 * first out), swept by the janitor once expired.
 * The upstream is a local server (private targets allowed in this test).
 */
let server: TestServer;
let upstream: http.Server;
let upstreamUrl: string;
let png: Buffer;
/** Upstream requests by path. */
const hits = new Map<string, number>();
/** `/slow/…` answers held until the test lets them go. */
const held: (() => void)[] = [];

const MINUTE = 60_000;
const KIB = 1024;

/** What `/blob/…` answers: 100 KiB (300 KiB under `/blob/large/`) that differ by path. */
const blob = (path: string) =>
  Buffer.alloc((path.startsWith('/blob/large/') ? 300 : 100) * KIB, sha256Hex(path.split('?')[0] ?? ''));

before(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00aa55' } })
    .png()
    .toBuffer();
  upstream = http.createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const cacheControl = new URL(path, 'http://x').searchParams.get('cc');
    const headers: Record<string, string> = { 'content-type': 'image/png' };
    if (cacheControl !== null) headers['cache-control'] = cacheControl;
    if (path.startsWith('/slow/')) {
      held.push(() => {
        res.writeHead(200, headers);
        res.end(png);
      });
    } else if (path.startsWith('/flaky')) {
      // Fails the first time, answers after.
      res.writeHead(hits.get(path) === 1 ? 503 : 200, headers);
      res.end(png);
    } else if (path.startsWith('/blob/')) {
      res.writeHead(200, headers);
      res.end(blob(path));
    } else if (path.startsWith('/big')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(9 * 1024 * 1024, 7));
    } else {
      res.writeHead(200, headers);
      res.end(png);
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  server = await startTestServer({ HEARTH_MEDIA_ALLOW_PRIVATE: '1' });
});

after(async () => {
  server?.app.services.clock.setOffset(0);
  await server?.close();
  upstream?.close();
});

beforeEach(() => server.app.services.clock.setOffset(0));

/** The proxy URL of an upstream path. */
const proxied = (path: string) =>
  `${server.url}/media${externalMediaPath(server.app.services.secrets.mediaProxy, `${upstreamUrl}${path}`)}`;

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(proxied(path), { headers });
  return { status: res.status, etag: res.headers.get('etag'), bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Moves the server's clock `ms` ahead of real time. */
const later = (ms: number) => server.app.services.clock.setOffset(ms);

/** The object-store key of a target's shared entry. */
const storedKey = (path: string) => `external-cache/${sha256Hex(`${upstreamUrl}${path}`)}`;

describe('external media cache', () => {
  it('fetches a kept image once: the second request, and a conditional one, never reach the upstream', async () => {
    const path = '/once.png?cc=public,%20max-age=600';
    const first = await get(path);
    const second = await get(path);
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.ok(first.bytes.equals(png) && second.bytes.equals(png));
    assert.equal(second.etag, first.etag);
    const conditional = await get(path, { 'if-none-match': first.etag as string });
    assert.equal(conditional.status, 304);
    assert.equal(hits.get(path), 1);
    // Another target with the same bytes is its own entry.
    await get('/other.png?cc=max-age=600');
    assert.equal(hits.get('/other.png?cc=max-age=600'), 1);
  });

  it('keeps nothing the upstream forbids: no-store, private, no-cache, max-age=0', async () => {
    for (const cc of ['no-store', 'private,%20max-age=600', 'no-cache', 'max-age=0', 'public,%20NO-STORE']) {
      const path = `/forbidden.png?cc=${cc}`;
      assert.equal((await get(path)).status, 200);
      assert.equal((await get(path)).status, 200);
      assert.equal(hits.get(path), 2, cc);
    }
  });

  it('clamps a short max-age up to 5 minutes', async () => {
    const path = '/short.png?cc=max-age=1';
    await get(path);
    later(4 * MINUTE);
    await get(path);
    assert.equal(hits.get(path), 1, 'kept for 5 minutes although the upstream said 1 s');
    later(5 * MINUTE + 1000);
    await get(path);
    assert.equal(hits.get(path), 2, 'fetched again after 5 minutes');
  });

  it('clamps a long max-age down to 1 day, prefers s-maxage, and keeps an answer without one for 1 hour', async () => {
    const long = '/long.png?cc=max-age=31536000';
    const shared = '/shared.png?cc=max-age=31536000,%20s-maxage=600';
    const plain = '/plain.png';
    for (const path of [long, shared, plain]) await get(path);
    later(9 * MINUTE);
    for (const path of [long, shared, plain]) await get(path);
    assert.deepEqual(
      [long, shared, plain].map((p) => hits.get(p)),
      [1, 1, 1],
    );
    later(11 * MINUTE);
    for (const path of [long, shared, plain]) await get(path);
    assert.deepEqual(
      [long, shared, plain].map((p) => hits.get(p)),
      [1, 2, 1],
      's-maxage=600 ended after 10 minutes',
    );
    later(61 * MINUTE);
    for (const path of [long, plain]) await get(path);
    assert.deepEqual(
      [long, plain].map((p) => hits.get(p)),
      [1, 2],
      'no directive: 1 hour',
    );
    later(23 * 60 * MINUTE);
    await get(long);
    assert.equal(hits.get(long), 1);
    later(24 * 60 * MINUTE + 1000);
    await get(long);
    assert.equal(hits.get(long), 2, 'a year is kept for one day');
  });

  it('answers requests that arrive together with one upstream fetch', async () => {
    const path = '/slow/together.png?cc=max-age=600';
    const answers = [1, 2, 3].map(() => get(path));
    for (let i = 0; i < 100 && held.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(held.length, 1);
    for (const answer of held.splice(0)) answer();
    const results = await Promise.all(answers);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200],
    );
    assert.equal(hits.get(path), 1);
  });

  it('never keeps a failure, nor an answer above 8 MiB', async () => {
    const flaky = '/flaky.png?cc=max-age=600';
    const failed = await fetch(proxied(flaky));
    assert.equal(failed.status, 404);
    assert.equal(((await failed.json()) as { code: string }).code, 'NOT_FOUND');
    assert.equal((await get(flaky)).status, 200);
    assert.equal((await get(flaky)).status, 200);
    assert.equal(hits.get(flaky), 2, 'the failure was not kept; the success was');

    const big = '/big?cc=max-age=600';
    const first = await get(big);
    assert.equal(first.status, 200);
    assert.equal(first.bytes.length, 9 * 1024 * 1024);
    await get(big);
    assert.equal(hits.get(big), 2);
  });

  it('is swept from the object store by the janitor once expired; an object nothing counts, once a day old', async () => {
    const path = '/swept.png?cc=max-age=600';
    await get(path);
    const objects = server.app.services.objects;
    assert.ok(((await objects.size(storedKey(path))) ?? 0) > png.length, 'stored with its metadata line');
    // What a crash between removing an entry's row and its object leaves behind: an object no row counts.
    const orphan = storedKey('/orphan.png');
    await objects.put(orphan, Buffer.from('{}\nx'), 'application/octet-stream');
    later(9 * MINUTE);
    await server.app.services.janitor.sweep();
    assert.notEqual(await objects.size(storedKey(path)), undefined, 'not expired yet');
    later(11 * MINUTE);
    const expired = await server.app.services.janitor.sweep();
    assert.ok(expired.externalCacheEntries >= 1);
    assert.equal(await objects.size(storedKey(path)), undefined);
    assert.notEqual(await objects.size(orphan), undefined, 'not a day old yet');
    later(24 * 60 * MINUTE + 1000);
    const report = await server.app.services.janitor.sweep();
    assert.ok(report.externalCacheEntries >= 1);
    assert.equal(await objects.size(orphan), undefined);
  });
});

describe('external media cache across nodes', () => {
  let s3: TestS3;
  let a: TestServer;
  let b: TestServer;
  const BUCKET = 'media-cache';

  before(async () => {
    s3 = await startTestS3();
    await s3.createBucket(BUCKET);
    const env = {
      HEARTH_MEDIA_ALLOW_PRIVATE: '1',
      HEARTH_S3_BUCKET: BUCKET,
      HEARTH_S3_ENDPOINT: s3.endpoint,
      HEARTH_S3_REGION: s3.region,
      HEARTH_S3_ACCESS_KEY_ID: s3.accessKeyId,
      HEARTH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      HEARTH_S3_FORCE_PATH_STYLE: 'true',
    };
    // One proxy secret, as every node of a deployment has: a signed URL is valid on both.
    const secrets = newTestSecrets();
    a = await startTestServer(env, { secrets });
    b = await startTestServer(env, { secrets });
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await s3?.close();
  });

  const on = async (node: TestServer, path: string) => {
    const url = `${node.url}/media${externalMediaPath(node.app.services.secrets.mediaProxy, `${upstreamUrl}${path}`)}`;
    const res = await fetch(url);
    return { status: res.status, etag: res.headers.get('etag'), bytes: Buffer.from(await res.arrayBuffer()) };
  };

  it('fetches once for both nodes; each node fetches again once the entry expired; no-store is never shared', async () => {
    const path = '/nodes.png?cc=max-age=600';
    const first = await on(a, path);
    const second = await on(b, path);
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.ok(second.bytes.equals(png));
    assert.equal(second.etag, first.etag);
    assert.equal(hits.get(path), 1, 'the second node read what the first stored');
    assert.ok((await s3.listKeys(BUCKET)).includes(storedKey(path)));

    b.app.services.clock.setOffset(11 * MINUTE);
    try {
      assert.equal((await on(b, path)).status, 200);
      assert.equal(hits.get(path), 2, 'expired: fetched again');
    } finally {
      b.app.services.clock.setOffset(0);
    }

    const unshared = '/nodes-unshared.png?cc=no-store';
    await on(a, unshared);
    await on(b, unshared);
    assert.equal(hits.get(unshared), 2);
    assert.ok(!(await s3.listKeys(BUCKET)).includes(storedKey(unshared)));
  });

  it('serves a resized image one node made to the other from the shared object store', async () => {
    const original = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3355ff' } })
      .png()
      .toBuffer();
    await a.app.services.objects.put('avatars/4242/0123abcd', original, 'image/png');
    const url = (node: TestServer) => `${node.url}/media/avatars/4242/0123abcd.png?size=16`;
    const made = await fetch(url(a));
    assert.equal(made.status, 200);
    const tag = made.headers.get('etag') as string;
    const resized = Buffer.from(await made.arrayBuffer());
    assert.deepEqual([(await sharp(resized).metadata()).width, (await sharp(resized).metadata()).height], [16, 16]);
    const key = `derived-cache/${sha256Hex(tag)}`;
    assert.ok((await s3.listKeys(BUCKET)).includes(key), 'stored for the other nodes');

    // The stored entry is what the second node answers with (a marker image proves it did not re-encode).
    const marker = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    await a.app.services.objects.put(
      key,
      Buffer.concat([Buffer.from(`${JSON.stringify({ tag, type: 'image/png' })}\n`), marker]),
      'application/octet-stream',
    );
    const served = await fetch(url(b));
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('etag'), tag);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(marker));

    // Another size is the other node's own work, stored in turn.
    const other = await fetch(`${b.url}/media/avatars/4242/0123abcd.png?size=32`);
    assert.equal(other.status, 200);
    assert.equal((await sharp(Buffer.from(await other.arrayBuffer())).metadata()).width, 32);
    assert.ok((await s3.listKeys(BUCKET)).includes(`derived-cache/${sha256Hex(other.headers.get('etag') as string)}`));
  });
});

describe('external media cache byte budget', () => {
  let small: TestServer;

  // Room for two 100 KiB entries (each also has its metadata line), not three.
  before(async () => {
    small = await startTestServer({
      HEARTH_MEDIA_ALLOW_PRIVATE: '1',
      HEARTH_MEDIA_EXTERNAL_CACHE_BYTES: String(250 * KIB),
    });
  });

  after(async () => {
    small?.app.services.clock.setOffset(0);
    await small?.close();
  });

  const fetchOn = async (path: string) => {
    const url = `${small.url}/media${externalMediaPath(small.app.services.secrets.mediaProxy, `${upstreamUrl}${path}`)}`;
    const res = await fetch(url);
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const stored = async (path: string) => (await small.app.services.objects.size(storedKey(path))) !== undefined;

  it('removes the oldest stored entries when a new one would pass the budget, and stores none above it', async () => {
    const [a, b, c] = ['/blob/a?cc=max-age=600', '/blob/b?cc=max-age=600', '/blob/c?cc=max-age=600'];
    for (const path of [a, b]) {
      const answer = await fetchOn(path);
      assert.equal(answer.status, 200);
      assert.ok(answer.bytes.equals(blob(path)));
    }
    assert.deepEqual([await stored(a), await stored(b)], [true, true]);

    const third = await fetchOn(c);
    assert.equal(third.status, 200);
    assert.ok(third.bytes.equals(blob(c)));
    assert.deepEqual(
      [await stored(a), await stored(b), await stored(c)],
      [false, true, true],
      'the oldest entry made room',
    );
    // The answers are still right: from the process's memory tier, which the store's budget does not touch.
    for (const path of [a, b, c]) assert.ok((await fetchOn(path)).bytes.equals(blob(path)), path);
    assert.deepEqual([hits.get(a), hits.get(b), hits.get(c)], [1, 1, 1]);

    // Above the whole budget: served, never stored, and nothing is removed for it.
    const large = '/blob/large/x?cc=max-age=600';
    const answer = await fetchOn(large);
    assert.equal(answer.status, 200);
    assert.ok(answer.bytes.equals(blob(large)));
    assert.deepEqual([await stored(large), await stored(b), await stored(c)], [false, true, true]);
  });

  it('gives the bytes of expired entries back once the janitor removed them', async () => {
    const [b, c] = ['/blob/b?cc=max-age=600', '/blob/c?cc=max-age=600'];
    small.app.services.clock.setOffset(11 * MINUTE);
    const report = await small.app.services.janitor.sweep();
    assert.equal(report.externalCacheEntries, 2);
    assert.deepEqual([await stored(b), await stored(c)], [false, false]);

    // The budget is free again: two new entries are both kept.
    const [d, e] = ['/blob/d?cc=max-age=600', '/blob/e?cc=max-age=600'];
    for (const path of [d, e]) assert.ok((await fetchOn(path)).bytes.equals(blob(path)));
    assert.deepEqual([await stored(d), await stored(e)], [true, true]);
  });
});
