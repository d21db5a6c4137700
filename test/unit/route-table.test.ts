import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { AnyRoute, Policy } from '../../src/http/route.ts';
import { ROUTES_END, ROUTES_START, renderRouteTable } from '../../src/http/route-reference.ts';
import { buildRoutes } from '../../src/routes.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Walks the route table (`buildRoutes` with a started server's services): every route declares a valid
 * policy and the metadata that policy needs, and docs/api-reference.md lists exactly this table.
 */
const POLICIES: readonly Policy[] = [
  'none',
  'user',
  'user-only',
  'bot',
  'oauth2',
  'admin',
  'credential-free',
  'self',
  'test',
];
const SCOPES = ['identify', 'email', 'guilds', 'connections', 'bot', 'openid', 'profile'];

/** Routes marked `user│oauth2:X` or `oauth2:X`: the scope each must declare. */
const REQUIRED_SCOPES: Record<string, string> = {
  'GET /users/@me': 'identify',
  'GET /users/@me/guilds': 'guilds',
  'GET /users/@me/connections': 'connections',
  'GET /oauth2/userinfo': 'identify',
};

let server: TestServer;
let routes: AnyRoute[];
before(async () => {
  server = await startTestServer();
  routes = buildRoutes(server.app.services);
});
after(async () => {
  await server?.close();
});

const key = (r: AnyRoute) => `${r.method} ${r.path}`;

describe('route table', () => {
  it('is not empty and has no duplicate method + path', () => {
    assert.ok(routes.length > 10);
    const seen = new Set<string>();
    for (const r of routes) {
      const k = `${r.root ? 'root' : 'v1'} ${key(r)}`;
      assert.ok(!seen.has(k), `duplicate route ${k}`);
      seen.add(k);
    }
  });

  it('gives every route a valid policy', () => {
    for (const r of routes) assert.ok(POLICIES.includes(r.policy), `${key(r)} declares policy ${String(r.policy)}`);
  });

  it('declares the documented scopes on OAuth2-capable routes, and scopes only where a bearer can arrive', () => {
    for (const r of routes) {
      const required = REQUIRED_SCOPES[key(r)];
      if (required) assert.equal(r.scope, required, `${key(r)} must declare scope ${required}`);
      if (r.scope !== undefined) {
        assert.ok(SCOPES.includes(r.scope), `${key(r)}: unknown scope ${r.scope}`);
        assert.ok(r.policy === 'user' || r.policy === 'oauth2', `${key(r)}: scope on a ${r.policy} route`);
      }
    }
  });

  it('gives every admin route an ACL, and keeps admin routes (and only them) below /admin', () => {
    for (const r of routes) {
      if (r.policy === 'admin') {
        assert.equal(typeof r.acl, 'string', `${key(r)} must declare an acl`);
        assert.match(r.acl!, /^[a-z_*]+(:[a-z_*]+)*$|^\*$/, `${key(r)}: acl ${r.acl}`);
        assert.ok(r.path.startsWith('/admin/') || r.path === '/admin', `${key(r)}: admin route outside /admin`);
      } else {
        assert.equal(r.acl, undefined, `${key(r)}: acl on a ${r.policy} route`);
        // Admin keys are read only on admin-policy routes, so nothing else may live in the Admin area.
        assert.ok(!r.path.startsWith('/admin/'), `${key(r)} lives below /admin with policy ${r.policy}`);
      }
    }
  });

  it('keeps test routes below /test and nothing else there', () => {
    for (const r of routes) {
      assert.equal(r.policy === 'test', r.path.startsWith('/test/'), `${key(r)} (${r.policy})`);
    }
  });

  it('asks for sudo, +S and suspicious admission only on authenticated routes', () => {
    const authenticated: Policy[] = ['user', 'user-only', 'bot', 'oauth2', 'admin'];
    for (const r of routes) {
      if (r.sudo !== undefined) assert.ok(authenticated.includes(r.policy), `${key(r)}: sudo on ${r.policy}`);
      if (r.admitsSuspicious) assert.ok(authenticated.includes(r.policy), `${key(r)}: +S on ${r.policy}`);
    }
  });

  it('declares sane rate-limit buckets', () => {
    for (const r of routes) {
      if (!r.rateLimit) continue;
      assert.match(r.rateLimit.bucket, /^[a-z0-9_:.@-]+$/i, `${key(r)}: bucket ${r.rateLimit.bucket}`);
      assert.ok(Number.isInteger(r.rateLimit.limit) && r.rateLimit.limit >= 1, `${key(r)}: limit`);
      assert.ok(r.rateLimit.windowSeconds > 0, `${key(r)}: window`);
      for (const param of r.rateLimit.keyParams ?? [])
        assert.ok(r.path.includes(`:${param}`), `${key(r)}: bucket keyed by missing :${param}`);
    }
  });

  it('is what docs/api-reference.md lists, route for route (npm run docs:api rewrites it)', async () => {
    const text = await readFile('docs/api-reference.md', 'utf8');
    const start = text.indexOf(ROUTES_START);
    const end = text.indexOf(ROUTES_END);
    assert.ok(start >= 0 && end > start, 'the generated-table markers are in docs/api-reference.md');
    const documented = text.slice(start + ROUTES_START.length, end).trim();
    assert.equal(documented, renderRouteTable(routes), 'docs/api-reference.md is stale: run npm run docs:api');
    const rows = documented.split('\n').length - 2;
    assert.equal(rows, routes.filter((r) => r.policy !== 'test').length);
  });
});
