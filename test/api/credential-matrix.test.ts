import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * docs/conventions.md (the Authorization header, policies) as a table: every header form × valid / unknown / revoked × every policy.
 * Valid bot and OAuth2 tokens live with the applications tests; here the bot, bearer and admin forms are
 * unknown or malformed. Every answer is checked for status, `code` and the absence of `WWW-Authenticate`.
 */

/** What a header resolves to on a given route. */
type Resolution = 'absent' | 'session' | 'suspicious' | 'unresolved';

interface Tokens {
  /** A live session token; for routes that consume it (logout) a fresh one per case. */
  valid: string;
  suspicious: string;
  revoked: string;
}

interface HeaderForm {
  name: string;
  header(tokens: Tokens): string | undefined;
  /** How the form resolves outside /v1/admin and inside it (Admin keys are read only there). */
  outside: Resolution;
  inside?: Resolution;
}

const UNKNOWN_SESSION = `flx_${'Q'.repeat(18)}${'7'.repeat(18)}`;
const UNKNOWN_BOT = `Bot 123456789012345678.${'a'.repeat(43)}`;
const UNKNOWN_BEARER = `Bearer ${'b'.repeat(21)}-${'C'.repeat(21)}`;
const UNKNOWN_ADMIN_KEY = `fa_1234567890_${'k'.repeat(32)}`;

const FORMS: HeaderForm[] = [
  { name: 'no Authorization header', header: () => undefined, outside: 'absent' },
  { name: 'bare session token', header: (t) => t.valid, outside: 'session' },
  { name: 'Bearer flx_ session token', header: (t) => `Bearer ${t.valid}`, outside: 'session' },
  { name: 'bare session token of a suspicious account', header: (t) => t.suspicious, outside: 'suspicious' },
  { name: 'Bearer flx_ token of a suspicious account', header: (t) => `Bearer ${t.suspicious}`, outside: 'suspicious' },
  { name: 'bare unknown session token', header: () => UNKNOWN_SESSION, outside: 'unresolved' },
  { name: 'Bearer unknown flx_ token', header: () => `Bearer ${UNKNOWN_SESSION}`, outside: 'unresolved' },
  { name: 'bare revoked session token', header: (t) => t.revoked, outside: 'unresolved' },
  { name: 'Bearer revoked flx_ token', header: (t) => `Bearer ${t.revoked}`, outside: 'unresolved' },
  { name: 'Bot unknown token', header: () => UNKNOWN_BOT, outside: 'unresolved' },
  { name: 'Bot malformed token (no id)', header: () => 'Bot not-a-bot-token', outside: 'unresolved' },
  { name: 'Bot with a session token', header: (t) => `Bot ${t.valid}`, outside: 'unresolved' },
  { name: 'Bearer unknown OAuth2-like token', header: () => UNKNOWN_BEARER, outside: 'unresolved' },
  { name: 'Bearer flx_ with 35 characters', header: (t) => `Bearer ${t.valid.slice(0, -1)}`, outside: 'unresolved' },
  { name: 'Admin unknown key', header: () => `Admin ${UNKNOWN_ADMIN_KEY}`, outside: 'absent', inside: 'unresolved' },
  { name: 'Admin with a session token', header: (t) => `Admin ${t.valid}`, outside: 'absent', inside: 'unresolved' },
  { name: 'Admin malformed key', header: () => 'Admin x', outside: 'absent', inside: 'unresolved' },
  { name: 'bare garbage', header: () => '%%garbage%%', outside: 'unresolved' },
  { name: 'bare non-ASCII', header: () => 't\u00f6k\u00e9n', outside: 'unresolved' },
  { name: 'Basic scheme', header: () => 'Basic dXNlcjpwYXNz', outside: 'unresolved' },
  { name: 'lower-case bearer with a valid token', header: (t) => `bearer ${t.valid}`, outside: 'unresolved' },
  { name: 'upper-case BEARER with a valid token', header: (t) => `BEARER ${t.valid}`, outside: 'unresolved' },
  { name: 'upper-case BOT', header: () => UNKNOWN_BOT.replace('Bot', 'BOT'), outside: 'unresolved' },
  { name: 'lower-case bot', header: () => UNKNOWN_BOT.replace('Bot', 'bot'), outside: 'unresolved' },
  { name: 'lower-case admin', header: () => `admin ${UNKNOWN_ADMIN_KEY}`, outside: 'unresolved' },
  { name: 'two spaces after Bearer', header: (t) => `Bearer  ${t.valid}`, outside: 'unresolved' },
  { name: 'two spaces after Bot', header: () => UNKNOWN_BOT.replace('Bot ', 'Bot  '), outside: 'unresolved' },
  { name: 'token padded with NBSP', header: (t) => `\u00a0${t.valid}`, outside: 'unresolved' },
  { name: 'token followed by NBSP', header: (t) => `${t.valid}\u00a0`, outside: 'unresolved' },
  { name: 'scheme and token padded with a tab', header: (t) => `Bearer\t${t.valid}`, outside: 'unresolved' },
  { name: 'Bearer scheme with an NBSP-padded token', header: (t) => `Bearer ${t.valid}\u00a0`, outside: 'unresolved' },
  { name: 'empty value', header: () => '', outside: 'unresolved' },
  { name: 'scheme without token', header: () => 'Bot', outside: 'unresolved' },
];

interface Expectation {
  status: number;
  code?: string;
}

interface PolicyRoute {
  policy: string;
  method: string;
  path: string;
  body?: unknown;
  harness?: boolean;
  /** The route revokes the session it is called with. */
  consumesSession?: boolean;
  adminArea?: boolean;
  expect(resolution: Resolution): Expectation;
}

const UNAUTHORIZED: Expectation = { status: 401, code: 'UNAUTHORIZED' };

const POLICIES: PolicyRoute[] = [
  {
    policy: 'none (GET /.well-known/service)',
    method: 'GET',
    path: '/.well-known/service',
    // An unresolved credential on an open route is only a failure signal, never a refusal.
    expect: () => ({ status: 200 }),
  },
  {
    policy: 'none·L (POST /auth/login, wrong password)',
    method: 'POST',
    path: '/v1/auth/login',
    body: { email: 'nobody@example.test', password: 'wrong-password' },
    expect: () => ({ status: 400, code: 'INVALID_FORM_BODY' }),
  },
  {
    policy: 'user (GET /users/@me)',
    method: 'GET',
    path: '/v1/users/@me',
    expect: (r) =>
      r === 'session'
        ? { status: 200 }
        : r === 'suspicious'
          ? { status: 403, code: 'ACCOUNT_SUSPICIOUS_ACTIVITY' }
          : UNAUTHORIZED,
  },
  {
    policy: 'user+S (POST /auth/logout)',
    method: 'POST',
    path: '/v1/auth/logout',
    consumesSession: true,
    expect: (r) => (r === 'session' || r === 'suspicious' ? { status: 204 } : UNAUTHORIZED),
  },
  {
    policy: 'user-only+S (GET /auth/sessions)',
    method: 'GET',
    path: '/v1/auth/sessions',
    expect: (r) => (r === 'session' || r === 'suspicious' ? { status: 200 } : UNAUTHORIZED),
  },
  {
    policy: 'oauth2 (GET /oauth2/@me)',
    method: 'GET',
    path: '/v1/oauth2/@me',
    // Bearer-only: a session token is refused like no credential (docs/conventions.md#policies).
    expect: () => UNAUTHORIZED,
  },
  {
    policy: 'admin (GET /admin/users/me)',
    method: 'GET',
    path: '/v1/admin/users/me',
    adminArea: true,
    // No suspicious gate on Admin operations; these accounts hold no admin ACL.
    expect: (r) =>
      r === 'session' || r === 'suspicious' ? { status: 403, code: 'MISSING_PERMISSIONS' } : UNAUTHORIZED,
  },
  {
    policy: 'test (GET /test/emails with X-Test-Token)',
    method: 'GET',
    path: '/v1/test/emails',
    harness: true,
    expect: () => ({ status: 200 }),
  },
];

let server: TestServer;
let owner: TestUser;
let suspect: TestUser;
let shared: Tokens;

async function login(user: TestUser): Promise<string> {
  const res = await request(server, 'POST', '/v1/auth/login', { body: { email: user.email, password: user.password } });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  suspect = await registerUser(server);
  const flagged = await harness(server, 'POST', `/users/${suspect.id}/security-flags`, {
    suspicious_activity_flag_names: ['REQUIRE_VERIFIED_PHONE'],
  });
  assert.equal(flagged.status, 200);
  const revoked = await login(owner);
  assert.equal((await request(server, 'POST', '/v1/auth/logout', { auth: revoked })).status, 204);
  shared = { valid: owner.token, suspicious: suspect.token, revoked };
});
after(async () => {
  await server?.close();
});

for (const policy of POLICIES) {
  describe(`credential matrix: ${policy.policy}`, () => {
    for (const form of FORMS) {
      const resolution = policy.adminArea ? (form.inside ?? form.outside) : form.outside;
      const expected = policy.expect(resolution);
      it(`${form.name} → ${expected.status}${expected.code ? ` ${expected.code}` : ''}`, async () => {
        const fresh = policy.consumesSession && (resolution === 'session' || resolution === 'suspicious');
        const tokens = fresh ? { ...shared, valid: await login(owner), suspicious: await login(suspect) } : shared;
        const header = form.header(tokens);
        const res = await request(server, policy.method, policy.path, {
          ...(header !== undefined ? { auth: header } : {}),
          ...(policy.body !== undefined ? { body: policy.body } : {}),
          ...(policy.harness ? { harness: true } : {}),
        });
        assert.equal(res.status, expected.status, `${res.status} ${res.text}`);
        if (expected.code) assert.equal(res.body.code, expected.code);
        else if (res.status !== 204) assert.equal(res.body.code, undefined);
        assert.equal(res.headers.get('www-authenticate'), null);
      });
    }
  });
}

describe('credential matrix: details', () => {
  it('every 401 body is identical, whatever made the credential fail', async () => {
    const bodies = new Set<string>();
    for (const form of FORMS.filter((f) => f.outside !== 'session' && f.outside !== 'suspicious')) {
      const header = form.header(shared);
      const res = await request(server, 'GET', '/v1/users/@me', header === undefined ? {} : { auth: header });
      assert.equal(res.status, 401);
      bodies.add(res.text);
    }
    assert.deepEqual([...bodies], [JSON.stringify({ code: 'UNAUTHORIZED', message: 'Unauthorized' })]);
  });

  it('the test harness refuses a missing X-Test-Token whatever the credential', async () => {
    for (const auth of [shared.valid, `Bearer ${shared.valid}`, UNKNOWN_BOT]) {
      const res = await request(server, 'GET', '/v1/test/emails', { auth });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'TEST_HARNESS_FORBIDDEN');
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });

  it('logout revokes exactly the session its credential names, through either scheme', async () => {
    const first = await login(owner);
    const second = await login(owner);
    assert.equal((await request(server, 'POST', '/v1/auth/logout', { auth: `Bearer ${first}` })).status, 204);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: first })).status, 401);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${first}` })).status, 401);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: second })).status, 200);
    assert.equal((await request(server, 'POST', '/v1/auth/logout', { auth: second })).status, 204);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${second}` })).status, 401);
  });

  it('spaces and tabs around the whole header value are HTTP whitespace, not part of the credential', async () => {
    // RFC 9110 §5.5: optional whitespace around a field value is not part of it, and Node's parser drops it.
    // Padding that is part of the value (two spaces after the scheme, NBSP) is refused above.
    for (const value of [` ${shared.valid}`, `${shared.valid} `, `\t${shared.valid}\t`]) {
      const raw = await rawGet(server.port, '/v1/users/@me', value);
      assert.match(raw, /^HTTP\/1\.1 200 /, JSON.stringify(value));
    }
    const raw = await rawGet(server.port, '/v1/users/@me', ` Bearer  ${shared.valid}`);
    assert.match(raw, /^HTTP\/1\.1 401 /);
    assert.doesNotMatch(raw, /www-authenticate/i);
  });
});

/** One request over a raw socket, so the header bytes are exactly what the test wrote. */
function rawGet(port: number, path: string, authorization: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization:${authorization}\r\n\r\n`,
      );
    });
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      out += chunk;
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}
