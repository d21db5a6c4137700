import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildRoutes } from '../../src/routes.ts';
import {
  adminApplicationId,
  adminCall,
  adminUser,
  createKey,
  insertApplicationWithBot,
  insertBearerToken,
  setAcls,
} from '../support/admin.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The authorisation sweep (docs/admin.md#credentials-and-checks, docs/conventions.md#policies): every Admin route against every kind of
 * credential, asserting status and code exactly.
 */

interface Expected {
  status: number;
  code?: string;
}

interface AdminRouteCase {
  method: string;
  path: string;
  acl: string;
  /** A request that succeeds (or fails in the handler, past every check) for an authorised caller. */
  body?: (caller: { password: string }) => unknown;
  ok: Expected;
}

let server: TestServer;
let victim: TestUser;

const OK: Expected = { status: 200 };

function routes(): AdminRouteCase[] {
  const target = () => ({ user_id: victim.id });
  return [
    { method: 'GET', path: '/users/me', acl: 'admin:authenticate', ok: OK },
    {
      method: 'POST',
      path: '/api-keys',
      acl: 'admin_api_key:manage',
      body: (caller) => ({ name: 'sweep', acls: ['admin_api_key:manage'], password: caller.password }),
      ok: OK,
    },
    { method: 'GET', path: '/api-keys', acl: 'admin_api_key:manage', ok: OK },
    {
      method: 'GET',
      path: '/api-keys/1',
      acl: 'admin_api_key:manage',
      ok: { status: 404, code: 'ADMIN_API_KEY_NOT_FOUND' },
    },
    {
      method: 'PATCH',
      path: '/api-keys/1',
      acl: 'admin_api_key:manage',
      body: () => ({ name: 'renamed' }),
      ok: { status: 404, code: 'ADMIN_API_KEY_NOT_FOUND' },
    },
    {
      method: 'DELETE',
      path: '/api-keys/1',
      acl: 'admin_api_key:manage',
      ok: { status: 404, code: 'ADMIN_API_KEY_NOT_FOUND' },
    },
    { method: 'POST', path: '/users/lookup', acl: 'user:lookup', body: () => ({ query: victim.email }), ok: OK },
    {
      method: 'POST',
      path: '/users/update-flags',
      acl: 'user:update:flags',
      body: () => ({ ...target(), add_flags: '1' }),
      ok: OK,
    },
    {
      method: 'POST',
      path: '/users/update-suspicious-activity-flags',
      acl: 'user:update:suspicious_activity',
      body: () => ({ ...target(), flags: 0 }),
      ok: OK,
    },
    {
      method: 'POST',
      path: '/users/set-acls',
      acl: 'acl:set:user',
      body: () => ({ ...target(), acls: ['acl:set:user'] }),
      ok: OK,
    },
    {
      method: 'POST',
      path: '/users/disable-suspicious',
      acl: 'user:disable:suspicious',
      body: () => ({ ...target(), flags: 0 }),
      ok: OK,
    },
    {
      method: 'POST',
      path: '/users/temp-ban',
      acl: 'user:temp_ban',
      body: () => ({ ...target(), duration_hours: 1 }),
      ok: OK,
    },
    { method: 'POST', path: '/users/unban', acl: 'user:temp_ban', body: target, ok: OK },
    {
      method: 'POST',
      path: '/users/schedule-deletion',
      acl: 'user:delete',
      body: () => ({ ...target(), reason_code: 1 }),
      ok: OK,
    },
    { method: 'POST', path: '/users/cancel-deletion', acl: 'user:delete', body: target, ok: OK },
    { method: 'POST', path: '/users/list-sessions', acl: 'user:list:sessions', body: target, ok: OK },
    { method: 'POST', path: '/users/terminate-sessions', acl: 'user:update:flags', body: target, ok: OK },
    { method: 'POST', path: '/users/disable-mfa', acl: 'user:update:mfa', body: target, ok: OK },
    {
      method: 'POST',
      path: '/bans/ip/add',
      acl: 'ban:ip:add',
      body: () => ({ ip: '198.51.100.0/24', expires_in_seconds: 60 }),
      ok: OK,
    },
    {
      method: 'POST',
      path: '/bans/ip/remove',
      acl: 'ban:ip:remove',
      body: () => ({ ip: '192.0.2.55' }),
      ok: { status: 404, code: 'UNKNOWN_BAN' },
    },
    { method: 'POST', path: '/bans/ip/check', acl: 'ban:ip:check', body: () => ({ ip: '192.0.2.55' }), ok: OK },
    { method: 'POST', path: '/bans/ip/list', acl: 'ban:ip:check', ok: OK },
    { method: 'POST', path: '/instance-config/get', acl: 'instance:config:view', ok: OK },
    {
      method: 'POST',
      path: '/instance-config/update',
      acl: 'instance:config:update',
      body: () => ({ registration: { mode: 'open' } }),
      ok: OK,
    },
    // With no issuer saved, the test answers at once without reaching out.
    { method: 'POST', path: '/instance-config/sso/test', acl: 'instance:config:update', ok: OK },
    { method: 'POST', path: '/audit-logs', acl: 'audit_log:view', body: () => ({ limit: 5 }), ok: OK },
    { method: 'POST', path: '/reports/list', acl: 'report:view', body: () => ({ status: 'open' }), ok: OK },
    { method: 'GET', path: '/reports/1', acl: 'report:view', ok: { status: 404, code: 'UNKNOWN_REPORT' } },
    {
      method: 'POST',
      path: '/reports/resolve',
      acl: 'report:resolve',
      body: () => ({ report_id: '1' }),
      ok: { status: 404, code: 'UNKNOWN_REPORT' },
    },
    {
      method: 'POST',
      path: '/reports/dismiss',
      acl: 'report:resolve',
      body: () => ({ report_id: '1' }),
      ok: { status: 404, code: 'UNKNOWN_REPORT' },
    },
  ];
}

const ROUTE_ACLS = [...new Set(routes().map((r) => r.acl))];

// Callers. `aclUser` gets `admin:authenticate` plus the ACL of the route under test before each route.
let plainUser: TestUser;
let authOnlyUser: TestUser;
let aclUser: TestUser;
let starUser: TestUser;
let loserUser: TestUser;
let botToken: string;
let otherAppBearer: string;
let adminBearerWithAcl: string;
let adminBearerWithoutAcl: string;
const keyByAcl = new Map<string, string>();
let keyWithoutAcl: string;
let keyOfLoser: string;

before(async () => {
  server = await startTestServer();
  victim = await registerUser(server);
  plainUser = await registerUser(server);
  authOnlyUser = await adminUser(server, ['admin:authenticate']);
  aclUser = await adminUser(server, ['admin:authenticate']);
  starUser = await adminUser(server, ['*']);
  loserUser = await adminUser(server, ['admin:authenticate', ...ROUTE_ACLS]);

  const thirdParty = await insertApplicationWithBot(server, plainUser.id);
  botToken = `Bot ${thirdParty.botToken}`;
  otherAppBearer = `Bearer ${await insertBearerToken(server, starUser.id, thirdParty.applicationId)}`;
  const adminApp = adminApplicationId(server);
  adminBearerWithAcl = `Bearer ${await insertBearerToken(server, aclUser.id, adminApp)}`;
  adminBearerWithoutAcl = `Bearer ${await insertBearerToken(server, authOnlyUser.id, adminApp)}`;

  for (const acl of ROUTE_ACLS) keyByAcl.set(acl, `Admin ${(await createKey(server, starUser, [acl])).key}`);
  // A reserved ACL that no route checks.
  keyWithoutAcl = `Admin ${(await createKey(server, starUser, ['guild:lookup'])).key}`;
  keyOfLoser = `Admin ${(await createKey(server, loserUser, ROUTE_ACLS)).key}`;
  // The owner loses every route ACL after minting: the key must narrow at once.
  await setAcls(server, loserUser.id, ['admin:authenticate']);
});

after(async () => {
  await server?.close();
});

function missingAcl(route: AdminRouteCase): Expected {
  return route.acl === 'admin:authenticate' ? route.ok : { status: 403, code: 'MISSING_ACL' };
}

describe('Admin authorisation sweep', () => {
  for (const route of routes()) {
    it(`${route.method} /v1/admin${route.path} (${route.acl})`, async () => {
      await setAcls(server, aclUser.id, ['admin:authenticate', route.acl]);
      const cases: [string, string | undefined, { password: string }, Expected][] = [
        ['no credential', undefined, plainUser, { status: 401, code: 'UNAUTHORIZED' }],
        ['session without ACL', plainUser.token, plainUser, { status: 403, code: 'MISSING_PERMISSIONS' }],
        ['session with admin:authenticate only', authOnlyUser.token, authOnlyUser, missingAcl(route)],
        ['session with the route ACL', aclUser.token, aclUser, route.ok],
        ['session with the wildcard', starUser.token, starUser, route.ok],
        ['bot token', botToken, plainUser, { status: 401, code: 'UNAUTHORIZED' }],
        ['bearer of another application', otherAppBearer, starUser, { status: 403, code: 'ACCESS_DENIED' }],
        ['Admin-app bearer with the ACL', adminBearerWithAcl, aclUser, route.ok],
        ['Admin-app bearer without the ACL', adminBearerWithoutAcl, authOnlyUser, missingAcl(route)],
        ['key with the ACL', keyByAcl.get(route.acl), starUser, route.ok],
        ['key without the ACL', keyWithoutAcl, starUser, missingAcl(route)],
        ['key whose owner lost the ACL', keyOfLoser, loserUser, missingAcl(route)],
      ];
      for (const [label, auth, caller, expected] of cases) {
        const res = await adminCall(server, route.method, route.path, auth, route.body?.(caller));
        assert.equal(res.status, expected.status, `${label}: ${res.status} ${res.text}`);
        assert.equal(res.body?.code, expected.code, `${label}: ${res.text}`);
        if (expected.code === 'MISSING_ACL') assert.equal(res.body.required_acl, route.acl, label);
        if (expected.code === 'MISSING_PERMISSIONS') assert.equal(res.body.required_acl, 'admin:authenticate');
        if (expected.status === 401) assert.equal(res.headers.get('www-authenticate'), null, label);
      }
    });
  }

  it('covers every Admin route in the route table, each with the ACL swept', () => {
    // The `/admin/*` wildcard is no operation: it answers 401/403/404 for unknown paths (tested below).
    const declared = buildRoutes(server.app.services)
      .filter((r) => r.policy === 'admin' && r.path !== '/admin/*')
      .map((r) => `${r.method} /v1${r.path} ${r.acl}`)
      .sort();
    const swept = routes()
      .map(
        (r) =>
          `${r.method} /v1/admin${r.path.replace(/^\/api-keys\/1$/, '/api-keys/:keyId').replace(/^\/reports\/1$/, '/reports/:reportId')} ${r.acl}`,
      )
      .sort();
    assert.deepEqual(declared, swept);
  });
});

describe('Admin credential rules around the sweep', () => {
  it('ignores an Admin key outside /v1/admin, as if no credential were sent', async () => {
    const res = await request(server, 'GET', '/v1/users/@me', { auth: keyByAcl.get('admin:authenticate') });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'UNAUTHORIZED');
  });

  it('accepts a session named through Bearer flx_…', async () => {
    const res = await adminCall(server, 'GET', '/users/me', `Bearer ${starUser.token}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.user.id, starUser.id);
  });

  it('refuses a key whose owner lost admin:authenticate with MISSING_PERMISSIONS', async () => {
    const owner = await adminUser(server, ['*']);
    const { key } = await createKey(server, owner, ['user:lookup']);
    const before = await adminCall(server, 'POST', '/users/lookup', `Admin ${key}`, { query: owner.email });
    assert.equal(before.status, 200);
    await setAcls(server, owner.id, []);
    const res = await adminCall(server, 'POST', '/users/lookup', `Admin ${key}`, { query: owner.email });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_PERMISSIONS');
  });

  it('treats malformed, unknown and tampered keys as no credential (401)', async () => {
    const owner = await adminUser(server, ['*']);
    const { key } = await createKey(server, owner, ['*']);
    const tampered = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
    for (const value of ['Admin nope', `Admin fa_1_${'a'.repeat(32)}`, `Admin ${tampered}`, `admin ${key}`]) {
      const res = await adminCall(server, 'GET', '/users/me', value);
      assert.equal(res.status, 401, value);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
  });

  it('answers unknown paths and methods below /admin 401, then 403, and only then 404', async () => {
    for (const [method, path] of [
      ['GET', '/nothing-here'],
      ['POST', '/users/nope/at/all'],
      ['DELETE', '/users/me'],
      ['PUT', '/instance-config/get'],
    ] as const) {
      const anonymous = await adminCall(server, method, path, undefined);
      assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'UNAUTHORIZED'], `${method} ${path}`);
      const plain = await adminCall(server, method, path, plainUser.token);
      assert.deepEqual([plain.status, plain.body.code], [403, 'MISSING_PERMISSIONS'], `${method} ${path}`);
      const admin = await adminCall(server, method, path, starUser.token);
      assert.deepEqual([admin.status, admin.body.code], [404, 'NOT_FOUND'], `${method} ${path}`);
    }
  });
});
