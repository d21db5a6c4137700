import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ERRORS } from '../../src/http/errors.ts';
import { createApplication } from '../support/applications.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Property: whatever `Authorization` header and body a client sends to a real route, the answer is below
 * 500 and an error carries a catalogued JSON `code`; the server stays up and no prototype is polluted.
 * Several independent property runs go in parallel (no batch barrier, so one slow password hash does not
 * stall the others); together they send at least 10,000 requests.
 */
const TOTAL_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const PARALLEL_RUNS = 12;

let server: TestServer;
let user: TestUser;
let requestsSent = 0;
const statuses = new Map<number, number>();
const profile = new Map<string, [number, number]>();

/** A real OAuth2 client, so that the OpenID parameters reach their parsers (set in `before`). */
const OIDC_REDIRECT = 'https://client.example/cb';
const oidcClient = { id: '1' };

before(async () => {
  server = await startTestServer();
  user = await registerUser(server);
  const app = await createApplication(server, user, { name: 'Fuzzed client', redirect_uris: [OIDC_REDIRECT] });
  oidcClient.id = app.id;
  consentTemplate.client_id = app.id;
  tokenTemplate.client_id = app.id;
  tokenTemplate.client_secret = app.clientSecret;
});
after(async () => {
  await server?.close();
});

interface FuzzRequest {
  method: string;
  path: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: string | undefined;
}

/** Header values are bytes: tab and printable Latin-1, never CR, LF, NUL or DEL. */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }), fc.constant(0x09))
  .map((code) => String.fromCharCode(code));
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength });

/** Insert, delete, replace or case-flip characters of a valid header. */
function mutated(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const step = fc.oneof(
    fc.record({ op: fc.constant('insert' as const), at: fc.nat(), char: headerChar }),
    fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('replace' as const), at: fc.nat(), char: headerChar }),
    fc.record({ op: fc.constant('flip-case' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  );
  return fc.tuple(base, fc.array(step, { minLength: 1, maxLength: 4 })).map(([text, steps]) => {
    let out = text;
    for (const s of steps) {
      const at = out.length === 0 ? 0 : s.at % out.length;
      if (s.op === 'insert') out = out.slice(0, at) + s.char + out.slice(at);
      else if (s.op === 'delete') out = out.slice(0, at) + out.slice(at + 1);
      else if (s.op === 'replace') out = out.slice(0, at) + s.char + out.slice(at + 1);
      else if (s.op === 'flip-case') {
        // ASCII letters only: Unicode case mapping can leave Latin-1 ('ÿ' → 'Ÿ', U+0178), which no HTTP
        // client can put in a header, so the request would never reach the server.
        const c = out.charAt(at);
        const flipped = /[a-z]/.test(c) ? c.toUpperCase() : /[A-Z]/.test(c) ? c.toLowerCase() : c;
        out = out.slice(0, at) + flipped + out.slice(at + 1);
      } else out = out.slice(0, at);
    }
    return out;
  });
}

const validHeaders = () =>
  fc.constantFrom(
    user.token,
    `Bearer ${user.token}`,
    `Bot 123456789012345678.${'a'.repeat(43)}`,
    `Bearer ${'b'.repeat(43)}`,
    `Admin fa_123_${'k'.repeat(32)}`,
    // Forms the newer parsers decide on: a token whose check part fails, an application id past 2^63−1.
    `flx_${'Q'.repeat(36)}`,
    `Bot 9223372036854775808.${'a'.repeat(43)}`,
    `Admin fa_99999999999999999999_${'k'.repeat(32)}`,
  );

const authorization = () =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: validHeaders() },
    { weight: 4, arbitrary: mutated(validHeaders()) },
    { weight: 3, arbitrary: headerText(120) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.constantFrom('Bot', 'Bearer', 'Admin', 'bot', 'BEARER', 'Basic', 'Digest', ''),
          fc.constantFrom(' ', '  ', '\t', ' \t'),
          fc.oneof(headerText(80), fc.constant(user.token), fc.stringMatching(/^\d{1,25}\.[\w-]{0,60}$/)),
        )
        .map(([scheme, gap, token]) => scheme + gap + token),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 8000 }).map((n) => `Bearer ${'x'.repeat(n)}`) },
  );

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Random JSON, including keys that would pollute a prototype if a handler merged objects naively. */
const jsonish = fc.jsonValue({ maxDepth: 2 });
const hugeString = fc.oneof(
  fc.integer({ min: 300, max: 5000 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => '\u{1F525}'.repeat(n / 2)),
  fc.string({ unit: 'grapheme', minLength: 100, maxLength: 2000 }),
);
const wrongValue = fc.oneof(
  { weight: 6, arbitrary: jsonish },
  { weight: 1, arbitrary: hugeString },
  { weight: 3, arbitrary: fc.constantFrom(null, true, 0, -1, 1e308, [], {}, '', ' ') },
);

interface RouteTemplate {
  method: string;
  path: () => fc.Arbitrary<string>;
  template: Record<string, unknown> | undefined;
  weight: number;
}

const fixed = (path: string) => () => fc.constant(path);

/** The OpenID Connect parsers: consent (prompt, max_age, nonce, PKCE), authorize with prompt=none, token. */
const consentTemplate: Record<string, unknown> = {
  client_id: '1',
  scope: 'openid email profile',
  redirect_uri: OIDC_REDIRECT,
  response_type: 'code',
  nonce: 'n-0S6_WzA2Mj',
  prompt: 'login consent',
  max_age: '600',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};
const tokenTemplate: Record<string, unknown> = {
  grant_type: 'authorization_code',
  code: 'c'.repeat(43),
  redirect_uri: OIDC_REDIRECT,
  code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  client_id: '1',
  client_secret: 'x',
};
const authorizeQuery = () =>
  fc
    .record({
      prompt: fc.oneof(
        fc.constantFrom('none', 'none', 'login', 'consent', 'none login', 'select_account', ''),
        fc.string({ unit: 'grapheme', maxLength: 20 }),
      ),
      max_age: fc.oneof(
        fc.nat().map(String),
        fc.bigInt({ min: -1n, max: 1n << 70n }).map(String),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
      ),
      nonce: fc.string({ unit: 'grapheme', maxLength: 600 }),
      scope: fc.oneof(
        fc.constantFrom('openid', 'openid email', 'openid profile identify', 'openid phone', 'bot openid', ''),
        fc.string({ unit: 'grapheme', maxLength: 30 }),
      ),
      code_challenge: fc.oneof(fc.constant(consentTemplate.code_challenge as string), fc.string({ maxLength: 50 })),
    })
    .map((query) => {
      const params = new URLSearchParams({
        response_type: 'code',
        client_id: oidcClient.id,
        redirect_uri: OIDC_REDIRECT,
      });
      for (const [name, value] of Object.entries(query)) params.set(name, value);
      params.set('code_challenge_method', 'S256');
      return `/v1/oauth2/authorize?${params}`;
    });

/** RP-initiated logout: hints that are not JWTs, JWT-shaped junk, odd client ids and post-logout URIs (the
 * confirmation shares the parser and would sign the fuzzing session out, as it should). */
const logoutQuery = () =>
  fc
    .record({
      id_token_hint: fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc
          .tuple(
            fc.base64String({ maxLength: 80 }),
            fc.base64String({ maxLength: 80 }),
            fc.base64String({ maxLength: 80 }),
          )
          .map((parts) => parts.join('.')),
      ),
      client_id: fc.oneof(fc.constantFrom('1', '9223372036854775808', '-1', ''), fc.string({ maxLength: 40 })),
      post_logout_redirect_uri: fc.oneof(fc.constant(OIDC_REDIRECT), fc.string({ unit: 'grapheme', maxLength: 60 })),
    })
    .map((query) => `/v1/oauth2/logout?${new URLSearchParams(query)}`);

const ROUTES: RouteTemplate[] = [
  {
    method: 'POST',
    path: fixed('/v1/auth/login'),
    template: { email: 'fuzz@example.test', password: 'wrong-password' },
    weight: 1,
  },
  {
    method: 'POST',
    path: fixed('/v1/auth/register'),
    template: { email: 'new@example.test', username: 'fuzzer', password: 'x', date_of_birth: '2000-01-01' },
    weight: 1,
  },
  {
    method: 'PATCH',
    path: fixed('/v1/users/@me'),
    template: {
      global_name: 'Fuzz',
      bio: 'hi',
      accent_color: 1,
      avatar: 'data:image/png;base64,iVBORw0KGgo=',
      new_password: 'another-password',
    },
    weight: 8,
  },
  {
    method: 'POST',
    path: fixed('/v1/auth/sessions/logout'),
    template: { session_id_hashes: ['abc'], password: 'nope' },
    weight: 4,
  },
  { method: 'GET', path: fixed('/.well-known/service'), template: undefined, weight: 2 },
  { method: 'GET', path: fixed('/v1/users/@me'), template: undefined, weight: 4 },
  { method: 'GET', path: fixed('/v1/auth/sessions'), template: undefined, weight: 2 },
  {
    method: 'GET',
    path: () =>
      fc
        .oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.bigInt({ min: -1n, max: 1n << 70n }).map(String))
        .map((id) => `/v1/users/${encodeURIComponent(id) || '0'}`),
    template: undefined,
    weight: 2,
  },
  {
    method: 'GET',
    path: () =>
      fc
        .string({ unit: 'grapheme', maxLength: 80 })
        .map((t) => `/v1/auth/ip-authorization/poll?ticket=${encodeURIComponent(t)}`),
    template: undefined,
    weight: 2,
  },
  { method: 'POST', path: fixed('/v1/auth/verify'), template: { token: 'x'.repeat(64) }, weight: 2 },
  {
    method: 'POST',
    path: () => fc.string({ unit: 'grapheme', maxLength: 40 }).map((t) => `/v1/admin/${encodeURIComponent(t)}`),
    template: { query: 'x' },
    weight: 2,
  },
  {
    method: 'POST',
    path: fixed('/v1/auth/register'),
    template: { email: 'dob@example.test', password: 'a-long-password', date_of_birth: '2000-02-30' },
    weight: 1,
  },
  {
    method: 'POST',
    path: () => fc.integer({ min: 4000, max: 9000 }).map((n) => `/v1/webhooks/1/${'t'.repeat(n)}`),
    template: { content: 'x' },
    weight: 1,
  },
  { method: 'POST', path: fixed('/v1/oauth2/authorize/consent'), template: consentTemplate, weight: 3 },
  { method: 'GET', path: authorizeQuery, template: undefined, weight: 3 },
  { method: 'POST', path: fixed('/v1/oauth2/token'), template: tokenTemplate, weight: 2 },
  { method: 'GET', path: fixed('/.well-known/openid-configuration'), template: undefined, weight: 1 },
  { method: 'GET', path: fixed('/v1/oauth2/jwks'), template: undefined, weight: 1 },
  { method: 'GET', path: logoutQuery, template: undefined, weight: 2 },
];

/** A body derived from the route's template: wrong types, dropped or prototype keys, or raw text. */
function bodyFor(template: Record<string, unknown> | undefined): fc.Arbitrary<string | undefined> {
  const base = template ?? {};
  const keys = Object.keys(base);
  const mutatedObject = fc
    .record({
      replace: fc.array(fc.tuple(fc.constantFrom(...keys, 'unknown_member'), wrongValue), { maxLength: 2 }),
      drop: fc.subarray(keys),
      extra: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 8 })), jsonish), {
        maxLength: 2,
      }),
    })
    .map(({ replace, drop, extra }) => {
      const members = new Map<string, unknown>(Object.entries(base).filter(([key]) => !drop.includes(key)));
      for (const [key, value] of replace) members.set(key, value);
      // Built as text so that `__proto__` stays an own key on the wire (and may repeat).
      const parts = [...members, ...extra].map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
      return `{${parts.join(',')}}`;
    });
  const pollution = fc.constantFrom(
    '{"__proto__":{"polluted":true},"email":"a@b.c","password":"p"}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"__proto__":null}',
    '[{"__proto__":{"polluted":true}}]',
  );
  const rawText = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom('', '{', '}', '[', 'null', 'true', '"str"', '1e999', '{"a":1,}', '\uFEFF{}', 'NaN'),
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constant(template ? JSON.stringify(template) : undefined) },
    { weight: 12, arbitrary: mutatedObject },
    { weight: 4, arbitrary: jsonish.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: pollution },
    { weight: 4, arbitrary: rawText },
    { weight: 1, arbitrary: fc.integer({ min: 1_048_000, max: 1_050_000 }).map((n) => `{"bio":"${'b'.repeat(n)}"}`) },
  );
}

const fuzzRequest = (): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    ...ROUTES.map((r) => ({
      weight: r.weight,
      arbitrary: fc.record({
        method: fc.constant(r.method),
        path: r.path(),
        auth: authorization(),
        contentType: fc.constantFrom(
          'application/json',
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=zz',
          undefined,
        ),
        body: r.method === 'GET' ? fc.constant(undefined) : bodyFor(r.template),
      }),
    })),
  );

const KNOWN_CODES = new Set(Object.keys(ERRORS));

async function send(req: FuzzRequest): Promise<void> {
  const headers: Record<string, string> = {};
  if (req.auth !== undefined) headers.authorization = req.auth;
  if (req.contentType !== undefined && req.body !== undefined) headers['content-type'] = req.contentType;
  const started = performance.now();
  // Redirects (the authorize endpoint's) are answers too: judged here, not followed off the test server.
  const res = await fetch(server.url + req.path, { method: req.method, headers, body: req.body, redirect: 'manual' });
  const text = await res.text();
  requestsSent += 1;
  if (process.env.FUZZ_PROFILE) {
    const key = `${req.method} ${req.path.split('?')[0]!.slice(0, 20)} ${res.status}`;
    const t = performance.now() - started;
    const p = profile.get(key) ?? [0, 0];
    profile.set(key, [p[0] + 1, p[1] + t]);
  }
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  const where = `${req.method} ${req.path} → ${res.status} ${text.slice(0, 200)}`;
  assert.ok(res.status < 500, where);
  if (res.status >= 400) {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, where);
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    assert.equal(typeof body.code, 'string', where);
    assert.ok(KNOWN_CODES.has(body.code as string), where);
    assert.equal(typeof body.message, 'string', where);
  }
}

describe('fuzzing Authorization headers and JSON bodies', () => {
  it(`answers ${TOTAL_REQUESTS} random requests below 500 with a JSON code`, { timeout: 400_000 }, async () => {
    const runs = Array.from({ length: PARALLEL_RUNS }, () =>
      fc.assert(fc.asyncProperty(fuzzRequest(), send), {
        numRuns: Math.ceil(TOTAL_REQUESTS / PARALLEL_RUNS),
        endOnFailure: true,
      }),
    );
    await Promise.all(runs);
    if (process.env.FUZZ_PROFILE) console.log([...profile].sort((a, b) => b[1][1] - a[1][1]).slice(0, 25));
    assert.ok(requestsSent >= TOTAL_REQUESTS, `sent ${requestsSent}`);
    // The run must exercise real outcomes, not one error path.
    for (const status of [200, 400, 401, 403, 404, 413]) assert.ok(statuses.has(status), `no ${status} seen`);
  });

  it('is still up, its session still works, and nothing polluted Object.prototype', async () => {
    const health = await fetch(`${server.url}/_health`);
    assert.equal(health.status, 200);
    const me = await fetch(`${server.url}/v1/users/@me`, { headers: { authorization: user.token } });
    assert.equal(me.status, 200);
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('answers an oversized header block with 431 and a JSON code', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`GET /v1/users/@me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'x'.repeat(20_000)}\r\n\r\n`);
      });
      let out = '';
      socket.on('data', (chunk) => {
        out += chunk;
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 431 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(body, { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: 'Request header fields too large' });
  });

  it('answers a garbled request line with 400 and a JSON code', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let out = '';
      socket.on('data', (chunk) => {
        out += chunk;
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 /);
    assert.equal(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).code, 'BAD_REQUEST');
  });
});
