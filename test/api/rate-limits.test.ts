import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createApplication } from '../support/applications.ts';
import { type ApiResponse, harness, registerUser, request, uniqueEmail } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * docs/conventions.md#rate-limits–5.2 over HTTP. Test mode turns limits off unless a request carries `X-Test-Strict: true`;
 * small bucket overrides (HEARTH_RATE_LIMITS) keep the route-bucket cases fast and exact.
 */
const STRICT = { 'x-test-strict': 'true' };
const ROUTE_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-reset-after',
  'x-ratelimit-bucket',
  'x-ratelimit-scope',
  'x-ratelimit-global',
];

let server: TestServer;
before(async () => {
  server = await startTestServer({
    HEARTH_RATE_LIMITS: JSON.stringify({
      'users:read': { limit: 3, windowSeconds: 60 },
      discovery: { limit: 100_000, windowSeconds: 10 },
    }),
  });
});
after(async () => {
  await server?.close();
});
beforeEach(async () => {
  const reset = await harness(server, 'POST', '/rate-limits/reset');
  assert.equal(reset.status, 200);
});

const bucketHash = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 16);

function assertNoRateLimitHeaders(res: ApiResponse): void {
  for (const name of ROUTE_HEADERS) assert.equal(res.headers.get(name), null, `${name} must be absent`);
  assert.equal(res.headers.get('retry-after'), null);
}

/** The exact 429 body of docs/conventions.md#rate-limits, returning `retry_after` for range checks. */
function assertRateLimitedBody(res: ApiResponse, global: boolean): number {
  assert.equal(res.status, 429, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'global', 'message', 'retry_after']);
  assert.equal(res.body.code, 'RATE_LIMITED');
  assert.equal(res.body.message, 'You are being rate limited.');
  assert.equal(res.body.global, global);
  assert.equal(typeof res.body.retry_after, 'number');
  assert.ok(res.body.retry_after > 0);
  const retryAfterHeader = res.headers.get('retry-after');
  assert.match(retryAfterHeader ?? '', /^\d+$/);
  assert.equal(Number(retryAfterHeader), Math.max(1, Math.ceil(res.body.retry_after)));
  return res.body.retry_after;
}

describe('test mode without X-Test-Strict', () => {
  it('applies no limit and sends no rate-limit headers', async () => {
    const user = await registerUser(server);
    for (let i = 0; i < 8; i++) {
      const res = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(res.status, 200);
      assertNoRateLimitHeaders(res);
    }
  });
});

describe('route buckets', () => {
  it('admit the limit, then answer 429 with the exact body and route headers', async () => {
    const user = await registerUser(server);
    for (let i = 0; i < 3; i++) {
      const ok = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
      assert.equal(ok.status, 200);
      // Route headers on success go to bot credentials and webhook-token routes only.
      assertNoRateLimitHeaders(ok);
    }
    const startedAt = Date.now();
    const denied = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    const retryAfter = assertRateLimitedBody(denied, false);
    // 3 per 60 s: one slot every 20 s.
    assert.ok(retryAfter > 19 && retryAfter <= 20, `retry_after ${retryAfter}`);
    assert.equal(denied.headers.get('retry-after'), '20');
    assert.equal(denied.headers.get('x-ratelimit-limit'), '3');
    assert.equal(denied.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(denied.headers.get('x-ratelimit-bucket'), bucketHash('users:read'));
    assert.equal(denied.headers.get('x-ratelimit-scope'), 'user');
    assert.equal(denied.headers.get('x-ratelimit-global'), null);
    const resetAfter = denied.headers.get('x-ratelimit-reset-after') ?? '';
    assert.match(resetAfter, /^\d+\.\d{3}$/);
    assert.ok(Number(resetAfter) > 59 && Number(resetAfter) <= 60, `reset-after ${resetAfter}`);
    const reset = Number(denied.headers.get('x-ratelimit-reset'));
    assert.ok(Number.isInteger(reset));
    assert.ok(Math.abs(reset - (startedAt / 1000 + 60)) < 3, `reset ${reset}`);
  });

  it('share one bucket across the routes that name it, per identity', async () => {
    const user = await registerUser(server);
    const other = await registerUser(server);
    for (let i = 0; i < 3; i++) {
      const res = await request(server, 'GET', `/v1/users/${other.id}`, { auth: user.token, headers: STRICT });
      assert.equal(res.status, 200);
    }
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    assertRateLimitedBody(me, false);
    const otherUser = await request(server, 'GET', '/v1/users/@me', { auth: other.token, headers: STRICT });
    assert.equal(otherUser.status, 200);
  });

  it('key unauthenticated requests by client IP and come before the policy (a 429 can hide a 401)', async () => {
    const user = await registerUser(server);
    for (let i = 0; i < 3; i++) {
      const res = await request(server, 'GET', '/v1/users/@me', { headers: STRICT });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
    const denied = await request(server, 'GET', '/v1/users/@me', { headers: STRICT });
    assertRateLimitedBody(denied, false);
    assert.equal(denied.headers.get('x-ratelimit-scope'), 'user');
    assert.equal(denied.headers.get('x-ratelimit-bucket'), bucketHash('users:read'));
    // The account's own bucket is untouched by what the address spent.
    const asUser = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    assert.equal(asUser.status, 200);
  });

  it('are emptied by the test-harness reset', async () => {
    const user = await registerUser(server);
    for (let i = 0; i < 3; i++) await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    assertRateLimitedBody(await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT }), false);
    assert.equal((await harness(server, 'POST', '/rate-limits/reset')).status, 200);
    const res = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    assert.equal(res.status, 200);
  });

  it('show the route headers on success to a bot at /gateway/bot and /applications/@me too (self-parsed credentials)', async () => {
    const owner = await registerUser(server);
    const app = await createApplication(server, owner, { name: 'Headers bot' });
    for (const [path, bucket, limit] of [
      ['/v1/gateway/bot', 'gateway:bot', '60'],
      ['/v1/applications/@me', 'applications:me', '60'],
    ] as const) {
      for (const auth of [`Bot ${app.botToken}`, `bot ${app.botToken}`]) {
        const res = await request(server, 'GET', path, { auth, headers: STRICT });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('x-ratelimit-limit'), limit);
        assert.equal(res.headers.get('x-ratelimit-bucket'), bucketHash(bucket));
        assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
        assert.match(res.headers.get('x-ratelimit-reset-after') ?? '', /^\d+\.\d{3}$/);
      }
    }
    // Not for another credential there (a session at /applications/@me: 401 INVALID_TOKEN, no route headers).
    const session = await request(server, 'GET', '/v1/applications/@me', { auth: owner.token, headers: STRICT });
    assert.equal(session.status, 401);
    assert.equal(session.body.code, 'INVALID_TOKEN');
    assertNoRateLimitHeaders(session);
  });

  it('are skipped entirely for RATE_LIMIT_BYPASS accounts', async () => {
    const user = await registerUser(server);
    const set = await harness(server, 'POST', `/users/${user.id}/security-flags`, { set_flags: ['RATE_LIMIT_BYPASS'] });
    assert.equal(set.status, 200);
    for (let i = 0; i < 6; i++) {
      const res = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
      assert.equal(res.status, 200);
    }
  });
});

describe('global bucket', () => {
  afterEach(async () => {
    await harness(server, 'POST', '/clock', { offset_ms: 0 });
  });
  // Discovery is cheap (no database) and its bucket is raised for this file, so only the global bucket bites.
  const burst = (token: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, () => request(server, 'GET', '/.well-known/service', { auth: token, headers: STRICT })),
    );

  it('admits 50 per second per identity, then 429 with global:true and no route headers', async () => {
    const user = await registerUser(server);
    // The test clock stands still, so the count does not depend on how fast this machine answers.
    await harness(server, 'POST', '/clock', { offset_ms: 0, frozen: true });
    const results = await burst(user.token, 150);
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    assert.equal(ok, 50);
    assert.equal(limited.length, 100);
    for (const res of limited) {
      const retryAfter = assertRateLimitedBody(res, true);
      assert.ok(retryAfter <= 1);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(res.headers.get('x-ratelimit-global'), 'true');
      assert.equal(res.headers.get('x-ratelimit-scope'), 'global');
      for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-bucket'])
        assert.equal(res.headers.get(name), null, `${name} must be absent on a global 429`);
    }
    // A global denial never revokes the session: a second later it is admitted again.
    await harness(server, 'POST', '/clock', { offset_ms: 1100, frozen: true });
    const later = await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: STRICT });
    assert.equal(later.status, 200);
    await harness(server, 'POST', '/clock', { offset_ms: 0 });
    // CORS exposes the rate-limit headers (discovery answers any origin).
    assert.match(limited[0]!.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Global/);
  });

  it('admits 1200 per second with HIGH_GLOBAL_RATE_LIMIT', async () => {
    const user = await registerUser(server);
    await harness(server, 'POST', `/users/${user.id}/security-flags`, { set_flags: ['HIGH_GLOBAL_RATE_LIMIT'] });
    const results = await burst(user.token, 150);
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 200),
    );
  });

  it('never applies to the test harness', async () => {
    const results = await Promise.all(
      Array.from({ length: 70 }, () => request(server, 'GET', '/v1/test/emails', { harness: true, headers: STRICT })),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 200),
    );
  });
});

describe('handler-level allowances', () => {
  it('answer 429 with the same body, scope user and no bucket header (login: 5 per 15 min per email)', async () => {
    const email = uniqueEmail('allowance');
    for (let i = 0; i < 5; i++) {
      const res = await request(server, 'POST', '/v1/auth/login', {
        body: { email, password: 'not-the-password' },
        headers: STRICT,
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
    }
    const denied = await request(server, 'POST', '/v1/auth/login', {
      body: { email, password: 'not-the-password' },
      headers: STRICT,
    });
    const retryAfter = assertRateLimitedBody(denied, false);
    // 5 per 15 min: the next slot in 3 min.
    assert.ok(retryAfter > 175 && retryAfter <= 180, `retry_after ${retryAfter}`);
    assert.equal(denied.headers.get('x-ratelimit-scope'), 'user');
    assert.equal(denied.headers.get('x-ratelimit-bucket'), null);
    assert.equal(denied.headers.get('x-ratelimit-global'), null);
    // The limit headers docs/conventions.md#rate-limits gives every 429: limit, nothing remaining, when the allowance refills.
    assert.equal(denied.headers.get('x-ratelimit-limit'), '5');
    assert.equal(denied.headers.get('x-ratelimit-remaining'), '0');
    const resetAfter = Number(denied.headers.get('x-ratelimit-reset-after'));
    assert.ok(resetAfter >= retryAfter && resetAfter <= 15 * 60, `reset-after ${resetAfter}`);
    const reset = Number(denied.headers.get('x-ratelimit-reset'));
    assert.ok(Math.abs(reset - (Date.now() / 1000 + resetAfter)) < 30, `reset ${reset}`);
    // Another email is still served.
    const other = await request(server, 'POST', '/v1/auth/login', {
      body: { email: uniqueEmail('allowance'), password: 'not-the-password' },
      headers: STRICT,
    });
    assert.equal(other.status, 400);
  });
});
