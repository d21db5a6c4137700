import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { buildRoutes } from '../../src/routes.ts';
import { registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { adminSession, assertError, configureSso, ssoLogin } from '../support/sso.ts';

const CLIENT_SECRET = 'hearth-client-secret-0123456789abcdef';
const APP_REDIRECT = 'https://app.example/callback';

/** The `·L` rows of docs/accounts.md: each one that exists in the route table must be gated. */
const LOCAL_AUTH_ROUTES = [
  'POST /auth/register',
  'POST /auth/login',
  'POST /auth/login/mfa/totp',
  'POST /auth/login/mfa/webauthn/authentication-options',
  'POST /auth/login/mfa/webauthn',
  'POST /auth/webauthn/authentication-options',
  'POST /auth/webauthn/authenticate',
  'POST /auth/verify',
  'POST /auth/verify/resend',
  'POST /auth/forgot',
  'GET /auth/reset/:token',
  'POST /auth/reset',
  'POST /auth/email-revert',
  'POST /auth/authorize-ip',
  'POST /auth/ip-authorization/resend',
  'GET /auth/ip-authorization/poll',
];

let server: TestServer;
let idp: TestIdp;
let admin: TestUser;
let user: TestUser;
let botToken: string;
let accessToken: string;
let adminKey: string;

async function setEnforcement(patch: Record<string, unknown>): Promise<void> {
  await configureSso(server, admin, {
    issuer: idp.issuer,
    client_id: 'hearth',
    client_secret: CLIENT_SECRET,
    allow_private_issuer: true,
    auto_provision: true,
    ...patch,
  });
}

/** Credentials of every kind, all issued before enforcement is switched on. */
async function issueCredentials(): Promise<void> {
  user = await registerUser(server);

  const app = await request(server, 'POST', '/v1/oauth2/applications', {
    auth: user.token,
    body: { name: 'Enforcement probe', redirect_uris: [APP_REDIRECT] },
  });
  assert.equal(app.status, 200, app.text);
  botToken = app.body.bot.token;
  const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
    auth: user.token,
    body: { client_id: app.body.id, scope: 'identify', redirect_uri: APP_REDIRECT, response_type: 'code' },
  });
  assert.equal(consent.status, 200, consent.text);
  const code = new URL(consent.body.redirect_to).searchParams.get('code') as string;
  const token = await request(server, 'POST', '/v1/oauth2/token', {
    raw: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: APP_REDIRECT,
      client_id: app.body.id,
      client_secret: app.body.client_secret,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(token.status, 200, token.text);
  accessToken = token.body.access_token;

  const key = await request(server, 'POST', '/v1/admin/api-keys', {
    auth: admin.token,
    body: { name: 'probe', acls: ['admin:authenticate', 'instance:config:view'], password: admin.password },
  });
  assert.equal(key.status, 200, key.text);
  adminKey = key.body.key;
}

before(async () => {
  server = await startTestServer();
  const redirectUri = `${server.url}/auth/sso/callback`;
  idp = await startTestIdp(
    [{ client_id: 'hearth', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri] }],
    redirectUri,
  );
  admin = await adminSession(server);
  await issueCredentials();
  await setEnforcement({ enabled: true, enforced: true });
});
after(async () => {
  await idp?.close();
  await server?.close();
});

describe('SSO enforcement', () => {
  it('announces enforcement in the status route and discovery', async () => {
    const status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.equal(status.status, 200);
    assert.equal(status.body.enabled, true);
    assert.equal(status.body.enforced, true);
    const discovery = await request(server, 'GET', '/.well-known/service');
    assert.deepEqual(discovery.body.sso, status.body);
  });

  it('flags every local-authentication route of docs/accounts.md, and only /auth routes', () => {
    const table = buildRoutes(server.app.services);
    const flagged = table.filter((r) => r.localAuth).map((r) => `${r.method} ${r.path}`);
    for (const row of table) {
      const name = `${row.method} ${row.path}`;
      if (LOCAL_AUTH_ROUTES.includes(name)) assert.equal(row.localAuth, true, `${name} must be ·L`);
    }
    for (const name of flagged) assert.ok(LOCAL_AUTH_ROUTES.includes(name), `${name} is ·L but not in the ·L list`);
    assert.ok(flagged.includes('POST /auth/register') && flagged.includes('POST /auth/login'));
    // SSO itself, logout, sessions and handoff are the way in (or out) while enforced: never gated.
    for (const row of table.filter((r) => /^\/auth\/(sso|logout|sessions|handoff)/.test(r.path)))
      assert.notEqual(row.localAuth, true, `${row.method} ${row.path} must not be ·L`);
  });

  it('answers 403 SSO_REQUIRED on every local-authentication route', async () => {
    const table = buildRoutes(server.app.services).filter((r) => r.localAuth);
    assert.ok(table.length >= 2);
    const bodies: Record<string, unknown> = {
      'POST /auth/register': { email: uniqueEmail('blocked'), password: 'a-long-password-1', username: 'blocked' },
      'POST /auth/login': { email: user.email, password: user.password },
      'POST /auth/forgot': { email: user.email },
    };
    for (const row of table) {
      const name = `${row.method} ${row.path}`;
      const path = `/v1${row.path.replace(/:[A-Za-z]+/g, 'x'.repeat(64))}`;
      const body = row.method === 'GET' ? undefined : (bodies[name] ?? {});
      // Anonymous and with a valid session (the `user-only ·L` rows need one to reach the gate).
      for (const auth of [undefined, user.token]) {
        const res = await request(server, row.method, path, {
          ...(auth ? { auth } : {}),
          ...(body !== undefined ? { body } : {}),
        });
        if (auth === undefined && row.policy !== 'none' && row.policy !== 'self') {
          assertError(res, 401, 'UNAUTHORIZED');
          continue;
        }
        assert.equal(res.status, 403, `${name}: ${res.text}`);
        assert.equal(res.body.code, 'SSO_REQUIRED', name);
      }
    }
    // Nothing was created behind the refusal.
    const blocked = bodies['POST /auth/register'] as { email: string };
    const taken = await server.app.services.users.findByEmail(blocked.email);
    assert.equal(taken, undefined);
  });

  it('keeps session tokens, bot tokens, OAuth2 access tokens and Admin API keys issued before valid', async () => {
    const session = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.id, user.id);
    const bot = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${botToken}` });
    assert.equal(bot.status, 200, bot.text);
    assert.equal(bot.body.bot, true);
    const bearer = await request(server, 'GET', '/v1/oauth2/@me', { auth: `Bearer ${accessToken}` });
    assert.equal(bearer.status, 200, bearer.text);
    assert.equal(bearer.body.user.id, user.id);
    const key = await request(server, 'POST', '/v1/admin/instance-config/get', { auth: `Admin ${adminKey}` });
    assert.equal(key.status, 200, key.text);
    assert.equal(key.body.sso.enforced, true);
  });

  it('keeps MFA management and password change available on an authenticated account', async () => {
    const secret = new Secret({ size: 20 }).base32;
    const enable = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: user.token,
      body: { secret, code: new TOTP({ secret: Secret.fromBase32(secret) }).generate() },
    });
    assert.equal(enable.status, 200, enable.text);
    assert.equal(enable.body.backup_codes.length, 10);
    const credentials = await request(server, 'GET', '/v1/users/@me/mfa/webauthn/credentials', { auth: user.token });
    assert.equal(credentials.status, 200, credentials.text);

    // With TOTP on, the password change proves sudo mode with a TOTP code.
    const change = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: {
        password: user.password,
        new_password: 'a-brand-new-password-2',
        mfa_method: 'totp',
        mfa_code: new TOTP({ secret: Secret.fromBase32(secret) }).generate(),
      },
    });
    assert.equal(change.status, 200, change.text);
    // The new password still cannot be used to sign in while SSO is enforced.
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: 'a-brand-new-password-2' },
    });
    assertError(login, 403, 'SSO_REQUIRED');
  });

  it('lets users sign in through SSO while enforced', async () => {
    const sub = `enforced-${Date.now()}`;
    idp.accounts.set(sub, { email: uniqueEmail('enforced'), email_verified: true });
    const res = await ssoLogin(server, idp, sub);
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.token, /^flx_/);
    const logout = await request(server, 'POST', '/v1/auth/logout', { auth: res.body.token });
    assert.equal(logout.status, 204);
  });

  it('lifts the gate once SSO is disabled, even with enforced still set', async () => {
    await setEnforcement({ enabled: false, enforced: true });
    const status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.equal(status.body.enforced, false);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: admin.email, password: admin.password },
    });
    assert.equal(login.status, 200, login.text);
    await setEnforcement({ enabled: true, enforced: true });
    assertError(
      await request(server, 'POST', '/v1/auth/login', { body: { email: admin.email, password: admin.password } }),
      403,
      'SSO_REQUIRED',
    );
  });
});
