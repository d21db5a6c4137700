import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_WEB_DIST } from '../../src/web/web-client.ts';
import { request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The built client (npm ci runs `prepare` → `vite build web`); these tests read it through the server only.
let server: TestServer;
const HTML = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

/** The entry bundle (`index-<hash>.js`, the largest file) or the stylesheet. */
function builtAsset(extension: string): string {
  const name = readdirSync(`${DEFAULT_WEB_DIST}/assets`).find(
    (file) => file.startsWith('index-') && file.endsWith(extension),
  );
  assert.ok(name, `web/dist/assets has a ${extension} file (run npm run build:web)`);
  return `/assets/${name}`;
}

describe('web client serving', () => {
  it('serves index.html at / with the security headers', async () => {
    const res = await request(server, 'GET', '/', { headers: HTML });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(res.text, /<div id="root"><\/div>/);
    assert.match(res.text, /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /(^|; )script-src 'self'(;|$)/);
    assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/);
    assert.match(csp, /(^|; )object-src 'none'(;|$)/);
    assert.match(csp, /(^|; )base-uri 'none'(;|$)/);
    assert.ok(csp.includes(`connect-src 'self' ${server.url} ${server.url.replace('http', 'ws')}`), csp);
    assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'), csp);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
  });

  it('has no inline script in the HTML', async () => {
    const res = await request(server, 'GET', '/', { headers: HTML });
    const scripts = res.text.match(/<script\b[^>]*>/g) ?? [];
    assert.ok(scripts.length > 0);
    for (const tag of scripts) assert.match(tag, /\ssrc="/, `inline script: ${tag}`);
  });

  it('answers HTML navigations to app paths with index.html (history fallback)', async () => {
    for (const path of ['/login', '/verify', '/oauth2/authorize?client_id=1&scope=identify', '/some/deep/link']) {
      const res = await request(server, 'GET', path, { headers: HTML });
      assert.equal(res.status, 200, path);
      assert.match(res.text, /<div id="root"><\/div>/, path);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer', path);
    }
  });

  it('answers HEAD on an app path like GET, without a body', async () => {
    const res = await request(server, 'HEAD', '/login', { headers: HTML });
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  });

  it('keeps the JSON 404 for the server prefixes, even for HTML navigations', async () => {
    for (const path of [
      '/v1/does-not-exist',
      '/v1',
      '/gateway/nothing',
      '/media/nothing',
      '/.well-known/nothing',
      '/_health/x',
      '/test/nothing',
    ]) {
      const res = await request(server, 'GET', path, { headers: HTML });
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'Not found' }, path);
    }
  });

  it('keeps the JSON 404 for requests that do not accept HTML', async () => {
    const res = await request(server, 'GET', '/login', { headers: { accept: 'application/json' } });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'Not found' });
    const bare = await request(server, 'GET', '/some/page');
    assert.equal(bare.status, 404);
    assert.equal(bare.body.code, 'NOT_FOUND');
  });

  it('keeps other methods on app paths a JSON 404', async () => {
    const res = await request(server, 'POST', '/login', { headers: HTML, body: {} });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'Not found' });
  });

  it('serves hashed assets with a long immutable cache, gzip when accepted', async () => {
    const path = builtAsset('.js');
    const plain = await fetch(server.url + path, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(plain.headers.get('content-encoding'), null);
    const body = await plain.text();
    assert.ok(body.length > 1000);

    const css = await fetch(server.url + builtAsset('.css'));
    assert.equal(css.status, 200);
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  });

  it('gzips assets for clients that accept it', async () => {
    const path = builtAsset('.js');
    const { request: rawRequest } = await import('node:http');
    const encoding = await new Promise<string | undefined>((resolve, reject) => {
      const req = rawRequest(server.url + path, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        res.resume();
        resolve(res.headers['content-encoding']);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(encoding, 'gzip');
  });

  it('answers an unknown asset with the JSON 404, not the app', async () => {
    const res = await request(server, 'GET', '/assets/nope-123.js', { headers: HTML });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'Not found' });
  });

  it('serves the favicon with a short cache', async () => {
    const res = await request(server, 'GET', '/favicon.svg');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=3600');
  });

  it('leaves discovery and health as they were', async () => {
    const discovery = await request(server, 'GET', '/.well-known/service', { headers: HTML });
    assert.equal(discovery.status, 200);
    assert.equal(discovery.body.endpoints.api_client, server.url);
    const health = await request(server, 'GET', '/_health', { headers: HTML });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
  });
});
