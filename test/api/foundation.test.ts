import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAuthorization } from '../../src/http/auth/authorization.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { harness, registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

describe('discovery', () => {
  it('announces the configured bases with CORS open to any origin', async () => {
    const res = await request(server, 'GET', '/.well-known/service', {
      headers: { origin: 'https://elsewhere.example', host: 'evil.example' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.body.endpoints.api_public, server.url);
    assert.equal(res.body.endpoints.api_client, server.url);
    assert.equal(res.body.endpoints.api, res.body.endpoints.api_client);
    assert.equal(res.body.endpoints.gateway, `${server.url.replace('http', 'ws')}/gateway`);
    assert.equal(res.body.endpoints.media, `${server.url}/media`);
  });
});

describe('HTTP conventions', () => {
  it('answers an unknown route with 404 NOT_FOUND', async () => {
    const res = await request(server, 'GET', '/v1/does-not-exist');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'Not found' });
  });

  it('answers /v10 and /v9 (discord.js defaults) and /users/%40me as the /v1 @me route, credential checks included', async () => {
    const user = await registerUser(server);
    for (const path of ['/v10/users/@me', '/v9/users/@me', '/v1/users/%40me', '/v10/users/%40me']) {
      const res = await request(server, 'GET', path, { auth: user.token });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.body.id, user.id);
      const anonymous = await request(server, 'GET', path);
      assert.equal(anonymous.status, 401, path);
      assert.equal(anonymous.body.code, 'UNAUTHORIZED');
    }
    const other = await request(server, 'GET', '/v2/users/@me', { auth: user.token });
    assert.equal(other.status, 404);
    assert.equal(other.body.code, 'NOT_FOUND');
  });

  it('is strict about trailing slashes', async () => {
    const res = await request(server, 'GET', '/v1/users/@me/');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'NOT_FOUND');
  });

  it('answers malformed JSON with 400 INVALID_FORM_BODY on body', async () => {
    const res = await request(server, 'POST', '/v1/auth/login', {
      raw: '{"email":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(res.body.errors[0].path, 'body');
    assert.equal(res.body.errors[0].code, 'INVALID_FORMAT');
  });

  it('answers an oversized body with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await request(server, 'POST', '/v1/auth/login', {
      raw: `{"email":"${'a'.repeat(1024 * 1024 + 10)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
  });

  it('reports per-field validation errors', async () => {
    const res = await request(server, 'POST', '/v1/auth/register', {
      body: { email: 'not-an-email', password: 'short' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    const byPath = Object.fromEntries(res.body.errors.map((e: any) => [e.path, e.code]));
    assert.equal(byPath.email, 'INVALID_EMAIL_ADDRESS');
    assert.equal(byPath.password, 'INVALID_FORMAT');
  });

  it('echoes X-Request-ID', async () => {
    const res = await request(server, 'GET', '/.well-known/service', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.headers.get('x-request-id'), 'abc-123');
  });

  it('answers HEAD on GET routes', async () => {
    const res = await request(server, 'HEAD', '/.well-known/service');
    assert.equal(res.status, 200);
  });
});

describe('accounts and sessions', () => {
  it('registers, reads @me, logs in and lists sessions', async () => {
    const user = await registerUser(server);
    assert.match(user.token, /^flx_[A-Za-z0-9]{36}$/);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, user.id);
    assert.equal(me.body.email, user.email);
    assert.equal(me.body.discriminator, '0001');

    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(login.status, 200);
    assert.equal(login.body.user_id, user.id);

    const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: login.body.token });
    assert.equal(sessions.status, 200);
    assert.equal(sessions.body.length, 2);
    assert.equal(sessions.body.filter((s: any) => s.current).length, 1);
    for (const session of sessions.body) {
      assert.match(session.id, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(session.id_hash, session.id, 'id_hash is an alias of id');
      assert.equal(session.client_os, session.client_info.os);
      assert.equal(session.client_platform, session.client_info.platform);
      assert.equal(session.client_location, session.client_info.location);
      for (const key of ['client_os', 'client_platform', 'client_location']) assert.ok(key in session, key);
    }
  });

  it('refuses an empty or malformed session hash with 400, and ignores a well-formed unknown one', async () => {
    const user = await registerUser(server);
    for (const bad of ['', 'abc', 'x'.repeat(42), `${'a'.repeat(42)}=`, 'a'.repeat(44)]) {
      const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
        auth: user.token,
        body: { session_id_hashes: [bad], password: user.password },
      });
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.equal(res.body.errors[0].path, 'session_id_hashes.0');
    }
    const gone = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: user.token,
      body: { session_id_hashes: ['A'.repeat(43)], password: user.password },
    });
    assert.equal(gone.status, 204, gone.text);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
  });

  it('answers @me from a warm cache yet shows a profile change at once', async () => {
    const user = await registerUser(server);
    for (let i = 0; i < 3; i++) {
      const warm = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(warm.body.bio, null);
    }
    const patched = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { bio: 'changed', pronouns: 'they/them' },
    });
    assert.equal(patched.status, 200);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 200);
    assert.equal(me.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(me.body.bio, 'changed');
    assert.equal(me.body.pronouns, 'they/them');
    assert.equal(me.body.email, user.email);
  });

  it('does not cache a session look-up that raced its revocation', async () => {
    const user = await registerUser(server);
    const { credentials, db } = server.app.services;
    const credential = parseAuthorization(user.token, { adminArea: false });
    const racing = credentials.resolve(credential);
    assert.ok(racing instanceof Promise, 'a cold look-up reads the database');
    // The revocation lands while the look-up's read is in flight: the read still sees the row.
    const revoked = Promise.all([
      db.query('DELETE FROM sessions WHERE token_hash = $1', [digest(user.token)]),
      credentials.invalidate({ tokenHash: digest(user.token) }),
    ]);
    await racing;
    await revoked;
    assert.equal(await credentials.resolve(credential), undefined);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 401);
  });

  it('gives an unknown email and a wrong password the same answer', async () => {
    const user = await registerUser(server);
    const wrong = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: 'wrong-password' },
    });
    const unknown = await request(server, 'POST', '/v1/auth/login', {
      body: { email: 'nobody@example.test', password: 'wrong-password' },
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.body, unknown.body);
    assert.deepEqual(
      wrong.body.errors.map((e: any) => [e.path, e.code]),
      [
        ['email', 'INVALID_EMAIL_OR_PASSWORD'],
        ['password', 'INVALID_EMAIL_OR_PASSWORD'],
      ],
    );
  });

  it('logout revokes the session named by either scheme', async () => {
    const user = await registerUser(server);
    const out = await request(server, 'POST', '/v1/auth/logout', { auth: `Bearer ${user.token}` });
    assert.equal(out.status, 204);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 401);
    assert.equal(me.body.code, 'UNAUTHORIZED');
    assert.equal(me.headers.get('www-authenticate'), null);
  });

  it('rejects a duplicate email', async () => {
    const user = await registerUser(server);
    const res = await request(server, 'POST', '/v1/auth/register', {
      body: { email: user.email.toUpperCase(), password: 'another-password' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].code, 'EMAIL_ALREADY_IN_USE');
  });

  it('gets another user as a partial user', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    const res = await request(server, 'GET', `/v1/users/${b.id}`, { auth: a.token });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, b.id);
    assert.equal(res.body.email, undefined);
    const missing = await request(server, 'GET', '/v1/users/123', { auth: a.token });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_USER');
  });
});

describe('test harness', () => {
  it('needs the token', async () => {
    const res = await request(server, 'GET', '/v1/test/emails');
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'TEST_HARNESS_FORBIDDEN');
  });

  it('sets suspicious flags that gate ordinary routes', async () => {
    const user = await registerUser(server);
    const set = await harness(server, 'POST', `/users/${user.id}/security-flags`, {
      suspicious_activity_flag_names: ['REQUIRE_VERIFIED_PHONE'],
    });
    assert.equal(set.status, 200);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 403);
    assert.equal(me.body.code, 'ACCOUNT_SUSPICIOUS_ACTIVITY');
    assert.deepEqual(me.body.data, { suspicious_activity_flags: 4 });
    const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: user.token });
    assert.equal(sessions.status, 200);
  });
});
