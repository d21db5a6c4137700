import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { signCapability } from '../../src/domains/media/capability.ts';
import { externalMediaPath } from '../../src/domains/media/external-signature.ts';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let guarded: TestServer;
let upstream: http.Server;
let upstreamUrl: string;
let png: Buffer;

/** Sends a request with the path exactly as given (fetch would normalise `..`). */
function rawGet(
  target: TestServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: target.port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Upstream answers waiting to be sent (`/slow/…`). */
const held: (() => void)[] = [];

before(async () => {
  png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  upstream = http.createServer((req, res) => {
    if (req.url === '/image.png') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(png);
    } else if (req.url?.startsWith('/redirect/')) {
      const n = Number(req.url.split('/')[2]);
      res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/image.png' });
      res.end();
    } else if (req.url?.startsWith('/slow/')) {
      // Held until the test lets it go: a fetch in flight.
      held.push(() => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(png);
      });
    } else if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.alloc(21 * 1024 * 1024));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  server = await startTestServer({ HEARTH_MEDIA_ALLOW_PRIVATE: '1' });
  guarded = await startTestServer();
});

after(async () => {
  await server?.close();
  await guarded?.close();
  upstream?.close();
});

describe('stored images', () => {
  it('serves an avatar by path, re-encoded and resized, whatever the Authorization header says', async () => {
    const user = await registerUser(server);
    const patch = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { avatar: `data:image/png;base64,${png.toString('base64')}` },
    });
    assert.equal(patch.status, 200);
    const hash = patch.body.avatar as string;
    assert.match(hash, /^[0-9a-f]{8}$/);
    const plain = await fetch(`${server.url}/media/avatars/${user.id}/${hash}.png?size=16`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await plain.arrayBuffer())).metadata();
    assert.equal(meta.width, 16);
    for (const auth of [user.token, 'garbage', 'Bot 1.x', '']) {
      const res = await fetch(`${server.url}/media/avatars/${user.id}/${hash}.webp`, {
        headers: { authorization: auth },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/webp');
    }
    const missing = await request(server, 'GET', `/media/avatars/${user.id}/00000000.png`, { auth: user.token });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
  });

  it('refuses traversal segments with 400', async () => {
    for (const path of [
      '/media/attachments/1/2/..',
      '/media/attachments/1/../x',
      '/media/attachments/./2/x',
      '/media/avatars/../aaaaaaaa.png',
    ]) {
      const res = await rawGet(server, path);
      assert.ok(res.status === 400 || res.status === 404, `${path} → ${res.status}`);
      assert.ok(JSON.parse(res.body).code);
    }
    const res = await rawGet(server, '/media/attachments/1/2/..');
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.body).code, 'BAD_REQUEST');
  });
});

describe('external media', () => {
  it('serves a signed target and sniffs the type from the bytes', async () => {
    const path = externalMediaPath(server.app.services.secrets.mediaProxy, `${upstreamUrl}/image.png`);
    const res = await fetch(`${server.url}/media${path}`, { headers: { authorization: 'Bot nonsense' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
  });

  it('refuses tampered signatures of every length with 401, never 500', async () => {
    const path = externalMediaPath(server.app.services.secrets.mediaProxy, `${upstreamUrl}/image.png`);
    const [, , signature, ...rest] = path.split('/');
    const target = rest.join('/');
    for (let length = 1; length <= 90; length++) {
      const forged = (signature as string).slice(0, length).padEnd(length, 'A');
      if (forged === signature) continue;
      const res = await request(server, 'GET', `/media/external/${forged}/${target}`);
      assert.equal(res.status, 401, `length ${length}`);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
    const flipped = `${(signature as string).slice(0, -1)}${(signature as string).endsWith('A') ? 'B' : 'A'}`;
    const res = await request(server, 'GET', `/media/external/${flipped}/${target}`);
    assert.equal(res.status, 401);
  });

  it('refuses loopback targets unless private targets are allowed (SSRF guard)', async () => {
    const path = externalMediaPath(guarded.app.services.secrets.mediaProxy, `${upstreamUrl}/image.png`);
    const res = await request(guarded, 'GET', `/media${path}`);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'FORBIDDEN');
    const named = externalMediaPath(
      guarded.app.services.secrets.mediaProxy,
      `http://localhost:${new URL(upstreamUrl).port}/image.png`,
    );
    const viaName = await request(guarded, 'GET', `/media${named}`);
    assert.equal(viaName.status, 403);
  });

  it('follows at most five redirects and bounds the size', async () => {
    const secret = server.app.services.secrets.mediaProxy;
    const ok = await request(server, 'GET', `/media${externalMediaPath(secret, `${upstreamUrl}/redirect/4`)}`);
    assert.equal(ok.status, 200);
    const tooMany = await request(server, 'GET', `/media${externalMediaPath(secret, `${upstreamUrl}/redirect/6`)}`);
    assert.equal(tooMany.status, 404);
    const huge = await request(server, 'GET', `/media${externalMediaPath(secret, `${upstreamUrl}/huge`)}`);
    assert.equal(huge.status, 413);
    assert.equal(huge.body.code, 'PAYLOAD_TOO_LARGE');
  });
});

describe('external fetches in flight', () => {
  it('one address holds at most 4 at once: the fifth gets 429 RATE_LIMITED (scope user) until one ends', async () => {
    const secret = server.app.services.secrets.mediaProxy;
    const slow = (n: number) => `${server.url}/media${externalMediaPath(secret, `${upstreamUrl}/slow/${n}`)}`;
    const inFlight = [1, 2, 3, 4].map((n) => fetch(slow(n)));
    for (let i = 0; i < 100 && held.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(held.length, 4, 'four fetches reached the upstream');
    const fifth = await fetch(slow(5));
    assert.equal(fifth.status, 429);
    assert.equal(fifth.headers.get('x-ratelimit-scope'), 'user');
    assert.equal(((await fifth.json()) as { code: string }).code, 'RATE_LIMITED');
    assert.equal(held.length, 4, 'the refused fetch never reached the upstream');
    for (const answer of held.splice(0)) answer();
    for (const res of await Promise.all(inFlight)) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/png');
    }
    // The slots are free again.
    const again = fetch(slow(6));
    for (let i = 0; i < 100 && held.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    for (const answer of held.splice(0)) answer();
    assert.equal((await again).status, 200);
  });
});

describe('upload relay', () => {
  const nowS = () => Math.floor(Date.now() / 1000);
  const cap = (over: Partial<Parameters<typeof signCapability>[1]> = {}) =>
    signCapability(server.app.services.secrets.relay, {
      b: 'uploads',
      k: 'key-1',
      m: 'put',
      mb: 5,
      e: nowS() + 900,
      ...over,
    });

  it('stores exactly the declared bytes under a valid capability', async () => {
    const res = await fetch(`${server.url}/media/v1/relay/key-1?t=${cap()}`, {
      method: 'PUT',
      body: 'hello',
      headers: { authorization: 'garbage' },
    });
    assert.equal(res.status, 200);
    const stored = await server.app.services.objects.get('uploads/key-1');
    assert.equal(stored?.bytes.toString(), 'hello');
  });

  it('answers missing, tampered, expired, mismatched, oversized and short uploads exactly', async () => {
    const put = (path: string, body: string) =>
      request(server, 'PUT', path, { raw: body, headers: { 'content-type': 'application/octet-stream' } });
    const good = cap();
    const cases: [string, string, number, string][] = [
      ['/media/v1/relay/key-1', 'hello', 401, 'UNAUTHORIZED'],
      [`/media/v1/relay/key-1?t=${good.slice(0, -2)}`, 'hello', 401, 'UNAUTHORIZED'],
      [`/media/v1/relay/key-1?t=${good}AA`, 'hello', 401, 'UNAUTHORIZED'],
      [`/media/v1/relay/key-1?t=${good.split('.')[0]}.`, 'hello', 401, 'UNAUTHORIZED'],
      [`/media/v1/relay/key-1?t=${cap({ e: nowS() - 1 })}`, 'hello', 401, 'UNAUTHORIZED'],
      [`/media/v1/relay/other?t=${good}`, 'hello', 403, 'FORBIDDEN'],
      [`/media/v1/relay/key-1?t=${cap({ b: 'avatars' })}`, 'hello', 403, 'FORBIDDEN'],
      [`/media/v1/relay/key-1?t=${good}`, 'hello world', 413, 'PAYLOAD_TOO_LARGE'],
      [`/media/v1/relay/key-1?t=${good}`, 'hi', 400, 'BAD_REQUEST'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await put(path, body);
      assert.equal(res.status, status, path);
      assert.equal(res.body.code, code, path);
    }
  });
});
