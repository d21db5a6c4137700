import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { type FakeIdp, startFakeIdp } from '../support/fake-idp.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { freePort } from '../support/spawn.ts';
import {
  adminSession,
  assertError,
  assertFormError,
  completeSso,
  configureSso,
  SSO_DEFAULTS,
  ssoLogin,
  startSso,
  updateSso,
} from '../support/sso.ts';

const CLIENT_SECRET = 'hearth-client-secret-0123456789abcdef';
const OTHER_SECRET = 'other-client-secret-0123456789abcdefgh';
let server: TestServer;
let idp: TestIdp;
let fake: FakeIdp;
let admin: TestUser;
let redirectUri: string;

function realProvider(patch: Record<string, unknown> = {}) {
  return configureSso(server, admin, {
    enabled: true,
    issuer: idp.issuer,
    client_id: 'hearth',
    client_secret: CLIENT_SECRET,
    allow_private_issuer: true,
    ...patch,
  });
}

let subjects = 0;
/** A provider account with a fresh subject and (unless given) a fresh verified address. */
function providerAccount(account: { email?: string; email_verified?: boolean | string } = {}) {
  subjects += 1;
  const sub = `subject-${subjects}-${Math.random().toString(36).slice(2, 8)}`;
  const email = account.email ?? uniqueEmail('sso');
  idp.accounts.set(sub, { email_verified: true, name: `Person ${subjects}`, ...account, email });
  return { sub, email };
}

/** A password account whose address is verified through the emailed link. */
async function verifiedLocalUser(): Promise<TestUser> {
  const user = await registerUser(server);
  const mails = await harness(server, 'GET', `/emails?recipient=${encodeURIComponent(user.email)}`);
  const link = mails.body.emails.find((m: { type: string }) => m.type === 'email_verification');
  assert.ok(link, 'no verification email');
  const verified = await request(server, 'POST', '/v1/auth/verify', { body: { token: link.metadata.token } });
  assert.equal(verified.status, 204, verified.text);
  return user;
}

before(async () => {
  server = await startTestServer();
  redirectUri = `${server.url}/auth/sso/callback`;
  idp = await startTestIdp(
    [
      { client_id: 'hearth', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri] },
      { client_id: 'other', client_secret: OTHER_SECRET, redirect_uris: [redirectUri] },
    ],
    redirectUri,
  );
  fake = await startFakeIdp('hearth-fake');
  admin = await adminSession(server);
});
after(async () => {
  await idp?.close();
  await fake?.close();
  await server?.close();
});
beforeEach(() => configureSso(server, admin, {}));
afterEach(() => harness(server, 'POST', '/clock', { offset_ms: 0 }));

describe('SSO settings through the Admin API', () => {
  it('never returns the client secret and derives the redirect URI', async () => {
    await realProvider({ display_name: 'Corp login', allowed_domains: ['Corp.Example', '@corp.example'] });
    const res = await request(server, 'POST', '/v1/admin/instance-config/get', { auth: admin.token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.sso.client_secret, undefined);
    assert.equal(res.body.sso.client_secret_set, true);
    assert.equal(res.body.sso.redirect_uri, redirectUri);
    assert.equal(res.body.sso.issuer, idp.issuer);
    assert.equal(res.body.sso.scope, 'openid email profile');
    assert.deepEqual(res.body.sso.allowed_domains, ['corp.example']);
    assert.equal(res.body.sso.display_name, 'Corp login');
    assert.ok(!res.text.includes(CLIENT_SECRET));
    // At rest the client secret is sealed, not stored in clear.
    const [row] = await server.app.services.db.query<{ secret: string }>(
      `SELECT value->>'client_secret' AS secret FROM instance_config WHERE key = 'sso'`,
    );
    assert.match(row?.secret ?? '', /^s1\./);
    assert.ok(!JSON.stringify(row).includes(CLIENT_SECRET));
  });

  it('refuses issuers on loopback, private and link-local addresses unless allow_private_issuer is on', async () => {
    for (const issuer of [
      idp.issuer,
      'https://127.0.0.1:8443',
      'https://localhost/realms/corp',
      'https://10.1.2.3/application/o/hearth/',
      'https://192.168.1.20',
      'https://169.254.169.254',
      'https://[::1]:8443',
      'https://[fd00::5]',
    ]) {
      const res = await updateSso(server, admin, { issuer, client_id: 'hearth', allow_private_issuer: false });
      assertFormError(res, 'sso.issuer', 'PRIVATE_ADDRESS_NOT_ALLOWED');
    }
    const override = await updateSso(server, admin, {
      issuer: 'https://93.184.215.14',
      token_url: 'https://10.0.0.8/token',
    });
    assertFormError(override, 'sso.token_url', 'PRIVATE_ADDRESS_NOT_ALLOWED');
    assert.equal(override.body.errors.length, 1);

    const optIn = await updateSso(server, admin, {
      issuer: 'https://10.1.2.3/application/o/hearth/',
      client_id: 'hearth',
      allow_private_issuer: true,
    });
    assert.equal(optIn.status, 200, optIn.text);
    assert.equal(optIn.body.sso.issuer, 'https://10.1.2.3/application/o/hearth/');
    assert.equal(optIn.body.sso.allow_private_issuer, true);

    // Turning the opt-in off again re-checks the issuer that is already stored.
    const optOut = await updateSso(server, admin, { allow_private_issuer: false });
    assertFormError(optOut, 'sso.issuer', 'PRIVATE_ADDRESS_NOT_ALLOWED');
  });

  it('accepts a public https issuer without the opt-in', async () => {
    const res = await updateSso(server, admin, { issuer: 'https://93.184.215.14/realms/corp', client_id: 'hearth' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.sso.issuer, 'https://93.184.215.14/realms/corp');
  });

  it('names the field of every validation error', async () => {
    const res = await updateSso(server, admin, {
      enabled: 'yes',
      issuer: 'not a url',
      jwks_url: 'ftp://idp.example/jwks',
      scope: 'email profile',
      allowed_domains: ['corp.example', 'not a domain'],
      client_id: 42,
      display_name: 'x'.repeat(101),
    });
    assertFormError(res, 'sso.enabled', 'INVALID_FORMAT');
    assertFormError(res, 'sso.issuer', 'INVALID_FORMAT');
    assertFormError(res, 'sso.jwks_url', 'INVALID_FORMAT');
    assertFormError(res, 'sso.scope', 'INVALID_SCOPE');
    assertFormError(res, 'sso.allowed_domains.1', 'INVALID_FORMAT');
    assertFormError(res, 'sso.client_id', 'INVALID_FORMAT');
    assertFormError(res, 'sso.display_name', 'CONTENT_EXCEEDS_MAX_LENGTH');
    assert.equal(res.body.errors.length, 7);
    const plainHttp = await updateSso(server, admin, { issuer: 'http://93.184.215.14', client_id: 'hearth' });
    assertFormError(plainHttp, 'sso.issuer', 'PRIVATE_ADDRESS_NOT_ALLOWED');
    const notObject = await updateSso(server, admin, ['enabled'] as unknown as Record<string, unknown>);
    assertFormError(notObject, 'sso', 'INVALID_FORMAT');
  });

  it('lets enforcement take effect only while SSO is enabled and configured', async () => {
    await configureSso(server, admin, { enforced: true, issuer: idp.issuer, allow_private_issuer: true });
    let status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.deepEqual(status.body, {
      enabled: false,
      enforced: false,
      display_name: 'Single sign-on',
      redirect_uri: redirectUri,
    });
    assert.equal(
      (await request(server, 'POST', '/v1/auth/login', { body: { email: admin.email, password: admin.password } }))
        .status,
      200,
    );

    await configureSso(server, admin, {
      enabled: true,
      enforced: true,
      issuer: idp.issuer,
      allow_private_issuer: true,
    });
    status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.equal(status.body.enabled, false, 'no client_id: not configured');
    assert.equal(
      (await request(server, 'POST', '/v1/auth/login', { body: { email: admin.email, password: admin.password } }))
        .status,
      200,
    );
  });
});

describe('testing the connection to the provider (docs/sso.md#testing-the-connection)', () => {
  const test = (body: Record<string, unknown>, user: TestUser = admin) =>
    request(server, 'POST', '/v1/admin/instance-config/sso/test', { auth: user.token, body });

  it('reaches the real provider with the unsaved form, and saves nothing', async () => {
    const res = await test({ sso: { issuer: idp.issuer, client_id: 'hearth', allow_private_issuer: true } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, true);
    assert.equal(res.body.issuer, idp.issuer);
    assert.ok(res.body.authorization_endpoint.startsWith(idp.issuer), res.body.authorization_endpoint);
    assert.ok(res.body.token_endpoint.startsWith(idp.issuer), res.body.token_endpoint);
    assert.ok(res.body.jwks_keys >= 1);
    const saved = await request(server, 'POST', '/v1/admin/instance-config/get', { auth: admin.token });
    assert.equal(saved.body.sso.issuer, null);
  });

  it('tests the saved settings when no form is sent', async () => {
    assert.deepEqual((await test({})).body, { ok: false, step: 'settings', reason: 'missing_issuer' });
    await realProvider();
    const res = await test({});
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.ok, true);
  });

  it('says which step failed, without an address or a body', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await test({ sso: { issuer: closed, allow_private_issuer: true } });
    assert.equal(down.status, 200, down.text);
    assert.deepEqual(down.body, { ok: false, step: 'discovery', reason: 'network' });
    // Discovery works but the signing keys' URL does not answer.
    const keys = await test({ sso: { issuer: idp.issuer, jwks_url: `${closed}/jwks`, allow_private_issuer: true } });
    assert.deepEqual(keys.body, { ok: false, step: 'jwks', reason: 'network' });
    // The same private-address rule as saving.
    const refused = await test({ sso: { issuer: idp.issuer, allow_private_issuer: false } });
    assertFormError(refused, 'sso.issuer', 'PRIVATE_ADDRESS_NOT_ALLOWED');
  });

  it('is for administrators who may change the settings', async () => {
    const viewer = await registerUser(server);
    const acl = await harness(server, 'POST', `/users/${viewer.id}/acls`, {
      acls: ['admin:authenticate', 'instance:config:view'],
    });
    assert.equal(acl.status, 200, acl.text);
    assertError(await test({}, viewer), 403, 'MISSING_ACL');
    assertError(await test({}, await registerUser(server)), 403, 'MISSING_PERMISSIONS');
  });
});

describe('SSO start', () => {
  it('reports SSO as disabled by default and refuses to start', async () => {
    const status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.equal(status.status, 200);
    assert.deepEqual(status.body, {
      enabled: false,
      enforced: false,
      display_name: 'Single sign-on',
      redirect_uri: redirectUri,
    });
    assertError(await startSso(server), 403, 'FEATURE_TEMPORARILY_DISABLED');
    assertError(await completeSso(server, { code: 'x', state: 'y' }), 403, 'FEATURE_TEMPORARILY_DISABLED');
  });

  it('builds an authorization URL with state, nonce and an S256 PKCE challenge', async () => {
    await realProvider({ display_name: 'Corp login' });
    const status = await request(server, 'GET', '/v1/auth/sso/status');
    assert.deepEqual(status.body, {
      enabled: true,
      enforced: false,
      display_name: 'Corp login',
      redirect_uri: redirectUri,
    });
    const discovery = await request(server, 'GET', '/.well-known/service');
    assert.deepEqual(discovery.body.sso, status.body);

    const res = await startSso(server, { redirect_to: '/channels/@me', redirect_uri: redirectUri });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['authorization_url', 'redirect_uri', 'state']);
    assert.match(res.body.state, /^[A-Za-z0-9]{64}$/);
    assert.equal(res.body.redirect_uri, redirectUri);
    const url = new URL(res.body.authorization_url);
    assert.equal(`${url.origin}${url.pathname}`, `${idp.issuer}/auth`);
    const q = url.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), 'hearth');
    assert.equal(q.get('redirect_uri'), redirectUri);
    assert.equal(q.get('scope'), 'openid email profile');
    assert.equal(q.get('state'), res.body.state);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((q.get('nonce') ?? '').length >= 32);
    const second = await startSso(server);
    assert.notEqual(second.body.state, res.body.state);
    assert.notEqual(new URL(second.body.authorization_url).searchParams.get('nonce'), q.get('nonce'));
  });

  it('accepts only a relative redirect_to and the configured redirect_uri', async () => {
    await realProvider();
    for (const redirectTo of [
      'https://evil.example/',
      '//evil.example',
      '/\\evil.example',
      'channels',
      'javascript:alert(1)',
    ]) {
      assertFormError(await startSso(server, { redirect_to: redirectTo }), 'redirect_to', 'INVALID_FORMAT');
    }
    assertFormError(
      await startSso(server, { redirect_uri: 'https://evil.example/auth/sso/callback' }),
      'redirect_uri',
      'INVALID_REDIRECT_URI',
    );
  });
});

describe('SSO completion against a real OpenID provider', () => {
  it('auto-provisions an account with the verified address, then links by subject', async () => {
    await realProvider({ auto_provision: true });
    const { sub, email } = providerAccount();
    const first = await ssoLogin(server, idp, sub, { redirect_to: '/channels/@me' });
    assert.equal(first.status, 200, first.text);
    assert.match(first.body.token, /^flx_[A-Za-z0-9]{36}$/);
    assert.equal(first.body.redirect_to, '/channels/@me');
    assert.equal(first.body.user.email, email);
    assert.equal(first.body.user.verified, true);
    assert.equal(first.body.user_id, first.body.user.id);
    assert.equal(first.body.mfa, undefined);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: first.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, first.body.user_id);

    // The provider changes the address: the link is by subject, so the same account signs in.
    const changed = uniqueEmail('renamed');
    idp.accounts.set(sub, { ...idp.accounts.get(sub), email: changed });
    const again = await ssoLogin(server, idp, sub);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.user_id, first.body.user_id);
    assert.equal(again.body.redirect_to, null);
    assert.notEqual(again.body.token, first.body.token);
  });

  it('links by subject even after auto-provisioning is switched off', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const first = await ssoLogin(server, idp, sub);
    assert.equal(first.status, 200, first.text);
    await realProvider({ auto_provision: false });
    const again = await ssoLogin(server, idp, sub);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.user_id, first.body.user_id);
  });

  it('answers 403 SSO_REQUIRED when no account matches and auto-provisioning is off', async () => {
    await realProvider();
    const { sub, email } = providerAccount();
    assertError(await ssoLogin(server, idp, sub), 403, 'SSO_REQUIRED');
    const login = await request(server, 'POST', '/v1/auth/register', {
      body: { email, password: 'a-long-password-1' },
    });
    assert.equal(login.status, 200, 'no account was created for the address');
  });

  it('links an existing account by verified email only when link_by_email is on', async () => {
    const local = await verifiedLocalUser();
    const { sub } = providerAccount({ email: local.email.toUpperCase() });
    await realProvider();
    assertError(await ssoLogin(server, idp, sub), 403, 'SSO_REQUIRED');
    await realProvider({ auto_provision: true });
    assertFormError(await ssoLogin(server, idp, sub), 'code', 'SSO_IDENTITY_MISMATCH');

    await realProvider({ link_by_email: true });
    const linked = await ssoLogin(server, idp, sub);
    assert.equal(linked.status, 200, linked.text);
    assert.equal(linked.body.user_id, local.id);
    // The link now exists: linking by email is no longer needed for this subject.
    await realProvider();
    const again = await ssoLogin(server, idp, sub);
    assert.equal(again.body.user_id, local.id);
  });

  it('does not link by email to an account whose own address is unverified', async () => {
    const local = await registerUser(server);
    const { sub } = providerAccount({ email: local.email });
    await realProvider({ link_by_email: true });
    assertError(await ssoLogin(server, idp, sub), 403, 'SSO_REQUIRED');
  });

  it('maps one subject to one account: a second subject cannot take a linked account', async () => {
    const local = await verifiedLocalUser();
    const first = providerAccount({ email: local.email });
    await realProvider({ link_by_email: true });
    assert.equal((await ssoLogin(server, idp, first.sub)).body.user_id, local.id);
    const second = providerAccount({ email: local.email });
    assertFormError(await ssoLogin(server, idp, second.sub), 'code', 'SSO_IDENTITY_MISMATCH');
  });

  it('refuses a bot account with 403 BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED', async () => {
    const local = await verifiedLocalUser();
    const flagged = await harness(server, 'POST', `/users/${local.id}/set-bot-flag`, { is_bot: true });
    assert.equal(flagged.status, 200, flagged.text);
    const { sub } = providerAccount({ email: local.email });
    await realProvider({ link_by_email: true });
    assertError(await ssoLogin(server, idp, sub), 403, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
  });

  it('requires a verified email', async () => {
    await realProvider({ auto_provision: true });
    const unverified = providerAccount({ email_verified: false });
    assertFormError(await ssoLogin(server, idp, unverified.sub), 'code', 'SSO_IDENTITY_MISMATCH');
    const noEmail = providerAccount();
    idp.accounts.set(noEmail.sub, { name: 'No mail' });
    assertFormError(await ssoLogin(server, idp, noEmail.sub), 'code', 'SSO_IDENTITY_MISMATCH');
    // The same subject signs in once the provider vouches for the address.
    idp.accounts.set(unverified.sub, { email: unverified.email, email_verified: true });
    assert.equal((await ssoLogin(server, idp, unverified.sub)).status, 200);
  });

  it('enforces the allowed email domains', async () => {
    await realProvider({ auto_provision: true, allowed_domains: ['corp.example'] });
    const outsider = providerAccount({ email: `x${Date.now()}@elsewhere.example` });
    assertFormError(await ssoLogin(server, idp, outsider.sub), 'code', 'SSO_IDENTITY_MISMATCH');
    const sub = providerAccount({ email: `x${Date.now()}@mail.corp.example` });
    assertFormError(await ssoLogin(server, idp, sub.sub), 'code', 'SSO_IDENTITY_MISMATCH');
    const insider = providerAccount({ email: `Someone.${Date.now()}@Corp.Example` });
    const res = await ssoLogin(server, idp, insider.sub);
    assert.equal(res.status, 200, res.text);
  });

  it('refuses a tampered state', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const started = await startSso(server);
    const back = await idp.authorize(started.body.authorization_url, sub);
    const state = back.get('state') as string;
    const tampered = (state[0] === 'A' ? 'B' : 'A') + state.slice(1);
    const res = await completeSso(server, { code: back.get('code'), state: tampered });
    assertFormError(res, 'state', 'INVALID_OR_EXPIRED_SSO_STATE');
    assertFormError(
      await completeSso(server, { code: back.get('code'), state: '' }),
      'state',
      'INVALID_OR_EXPIRED_SSO_STATE',
    );
  });

  it('refuses a replayed state, even after a successful sign-in', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const started = await startSso(server);
    const back = await idp.authorize(started.body.authorization_url, sub);
    const body = { code: back.get('code'), state: back.get('state') };
    const first = await completeSso(server, body);
    assert.equal(first.status, 200, first.text);
    assertFormError(await completeSso(server, body), 'state', 'INVALID_OR_EXPIRED_SSO_STATE');
  });

  it('refuses a state older than ten minutes', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const started = await startSso(server);
    const back = await idp.authorize(started.body.authorization_url, sub);
    await harness(server, 'POST', '/clock', { offset_ms: 10 * 60_000 + 1000 });
    assertFormError(
      await completeSso(server, { code: back.get('code'), state: back.get('state') }),
      'state',
      'INVALID_OR_EXPIRED_SSO_STATE',
    );
  });

  it('refuses an ID token whose nonce is not the one bound to the state', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const started = await startSso(server);
    const url = new URL(started.body.authorization_url);
    url.searchParams.set('nonce', 'a-nonce-chosen-by-an-attacker-0123456789');
    const back = await idp.authorize(url.toString(), sub);
    assert.ok(back.get('code'));
    assertFormError(
      await completeSso(server, { code: back.get('code'), state: back.get('state') }),
      'code',
      'INVALID_SSO_TOKEN',
    );
  });

  it('refuses a code issued to another client of the provider', async () => {
    await realProvider({ auto_provision: true });
    const { sub } = providerAccount();
    const started = await startSso(server);
    const url = new URL(started.body.authorization_url);
    url.searchParams.set('client_id', 'other');
    const back = await idp.authorize(url.toString(), sub);
    assert.ok(back.get('code'));
    assertFormError(
      await completeSso(server, { code: back.get('code'), state: back.get('state') }),
      'code',
      'INVALID_SSO_TOKEN',
    );
  });

  it('refuses a code that was not issued by the provider', async () => {
    await realProvider({ auto_provision: true });
    const started = await startSso(server);
    assertFormError(
      await completeSso(server, { code: 'made-up-code', state: started.body.state }),
      'code',
      'INVALID_SSO_TOKEN',
    );
  });

  it('never answers with an MFA challenge', async () => {
    const local = await verifiedLocalUser();
    const { Secret, TOTP } = await import('otpauth');
    const secret = new Secret({ size: 20 }).base32;
    const enable = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
      auth: local.token,
      body: { secret, code: new TOTP({ secret: Secret.fromBase32(secret) }).generate() },
    });
    assert.equal(enable.status, 200, enable.text);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: local.email, password: local.password },
    });
    assert.equal(login.body.mfa, true, 'password login asks for the second factor');
    const { sub } = providerAccount({ email: local.email });
    await realProvider({ link_by_email: true });
    const res = await ssoLogin(server, idp, sub);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.user_id, local.id);
    assert.match(res.body.token, /^flx_/);
    assert.equal(res.body.mfa, undefined);
  });
});

describe('ID token verification (test-controlled provider)', () => {
  beforeEach(() =>
    configureSso(server, admin, {
      enabled: true,
      issuer: fake.issuer,
      client_id: 'hearth-fake',
      client_secret: 'fake-secret',
      allow_private_issuer: true,
      auto_provision: true,
    }),
  );
  afterEach(() => {
    fake.mint({});
    fake.signWithForeignKey(false);
  });

  async function completeWith(claims: Record<string, unknown>) {
    const started = await startSso(server);
    assert.equal(started.status, 200, started.text);
    const nonce = new URL(started.body.authorization_url).searchParams.get('nonce') as string;
    fake.mint({ nonce, email: uniqueEmail('fake'), email_verified: true, ...claims });
    return { started, res: await completeSso(server, { code: 'any', state: started.body.state }) };
  }

  it('accepts a correct token and sends the PKCE verifier and client credentials', async () => {
    const sub = `fake-${Date.now()}`;
    const { started, res } = await completeWith({ sub });
    assert.equal(res.status, 200, res.text);
    const sent = fake.tokenRequests.at(-1);
    assert.ok(sent);
    assert.equal(sent.form.get('grant_type'), 'authorization_code');
    assert.equal(sent.form.get('code'), 'any');
    assert.equal(sent.form.get('redirect_uri'), redirectUri);
    const challenge = new URL(started.body.authorization_url).searchParams.get('code_challenge');
    const verifier = sent.form.get('code_verifier') as string;
    assert.match(verifier, /^[A-Za-z0-9_-]{43,128}$/);
    assert.equal(createHash('sha256').update(verifier).digest('base64url'), challenge);
    // RFC 6749 §2.3.1: each part is form-urlencoded before the Basic encoding (how strictly is the client's choice).
    const basic = /^Basic (.+)$/.exec(sent.authorization ?? '')?.[1] ?? '';
    const [user, pass] = Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent);
    assert.deepEqual([user, pass], ['hearth-fake', 'fake-secret']);
    assert.equal(sent.form.get('client_secret'), null);
  });

  it('refuses a token for another audience', async () => {
    assertFormError((await completeWith({ aud: 'someone-else' })).res, 'code', 'INVALID_SSO_TOKEN');
    assertFormError(
      (await completeWith({ aud: ['someone-else', 'hearth-fake'], azp: 'someone-else' })).res,
      'code',
      'INVALID_SSO_TOKEN',
    );
  });

  it('refuses a token from another issuer', async () => {
    assertFormError((await completeWith({ iss: 'https://evil.example' })).res, 'code', 'INVALID_SSO_TOKEN');
  });

  it('refuses an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    assertFormError((await completeWith({ iat: now - 3600, exp: now - 600 })).res, 'code', 'INVALID_SSO_TOKEN');
  });

  it('refuses a token signed with a key the provider does not publish', async () => {
    fake.signWithForeignKey(true);
    assertFormError((await completeWith({})).res, 'code', 'INVALID_SSO_TOKEN');
  });

  it('refuses a token without the nonce', async () => {
    assertFormError((await completeWith({ nonce: undefined })).res, 'code', 'INVALID_SSO_TOKEN');
  });
});

describe('SSO rate limits (docs/conventions.md#rate-limits)', () => {
  afterEach(() => harness(server, 'POST', '/rate-limits/reset'));

  it('allows 10 status or start calls and 15 completions per 10 s', async () => {
    const strict = { 'x-test-strict': 'true' };
    // The server's clock stands still (the file's afterEach lets it run again), so the allowances do not refill
    // while the calls go out one by one on a slow machine (one run saw an 11th status call pass).
    await harness(server, 'POST', '/clock', { offset_ms: 0, frozen: true });
    // What the file's earlier tests spent in this (still) second would count too.
    await harness(server, 'POST', '/rate-limits/reset');
    for (const [method, path, limit] of [
      ['GET', '/v1/auth/sso/status', 10],
      ['POST', '/v1/auth/sso/start', 10],
      ['POST', '/v1/auth/sso/complete', 15],
    ] as const) {
      const body = path.endsWith('complete') ? { code: 'c', state: 's' } : method === 'POST' ? {} : undefined;
      for (let i = 0; i < limit; i++) {
        const res = await request(server, method, path, { headers: strict, ...(body ? { body } : {}) });
        assert.notEqual(res.status, 429, `${path} call ${i + 1}: ${JSON.stringify(res.body)}`);
      }
      const limited = await request(server, method, path, { headers: strict, ...(body ? { body } : {}) });
      assertError(limited, 429, 'RATE_LIMITED');
    }
  });
});

describe('private-address rule at request time', () => {
  it('does not contact a loopback provider without the opt-in, even if the settings say so', async () => {
    // Settings written behind the Admin API's back, as if the issuer's DNS had changed since saving.
    for (const issuer of [
      fake.issuer,
      fake.issuer.replace('http:', 'https:'),
      fake.issuer.replace('http://127.0.0.1', 'https://localhost'),
    ]) {
      await server.app.services.settings.update('sso', {
        ...server.app.services.settings.get().sso,
        enabled: true,
        issuer,
        client_id: 'hearth-fake',
        allow_private_issuer: false,
      });
      const before = fake.connections();
      assertError(await startSso(server), 503, 'SERVICE_UNAVAILABLE');
      assert.equal(fake.connections(), before, `${issuer} was contacted`);
    }
    await configureSso(server, admin, { ...SSO_DEFAULTS });
  });
});
