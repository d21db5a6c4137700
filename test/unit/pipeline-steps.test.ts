import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ApiError } from '../../src/http/errors.ts';
import { authenticate } from '../../src/http/pipeline/authenticate.ts';
import { authorise, ssoFirstDenial, testHarnessDenial } from '../../src/http/pipeline/authorise.ts';
import { banGate, isBanExempt } from '../../src/http/pipeline/ban-gate.ts';
import { needsCaptcha } from '../../src/http/pipeline/captcha.ts';
import { decodeBody } from '../../src/http/pipeline/decode-body.ts';
import { rateLimit, rateLimitIdentity, routeBucketKey } from '../../src/http/pipeline/rate-limit.ts';
import { requestContext } from '../../src/http/pipeline/request-context.ts';
import { sudoModeFor } from '../../src/http/pipeline/sudo.ts';
import { admitUpload } from '../../src/http/pipeline/upload-admission.ts';
import { validate } from '../../src/http/pipeline/validate.ts';
import type { AnyRoute } from '../../src/http/route.ts';
import type { Principal } from '../../src/identity/principal.ts';
import type { UserRecord } from '../../src/identity/user-record.ts';
import { ConcurrencyGate } from '../../src/platform/concurrency-gate.ts';
import { parseCidrList } from '../../src/platform/net/cidr.ts';
import { InProcessRateLimiter } from '../../src/platform/state/rate-limiter.ts';

/** Each step of docs/architecture.md#the-request-path-srchttppipeline alone, without a server. */

const user = (over: Partial<UserRecord> = {}): UserRecord =>
  ({ id: '100', flags: 0n, acls: [], suspiciousActivityFlags: 0, emailVerified: true, ...over }) as UserRecord;
const session = (over: Partial<UserRecord> = {}): Principal => ({
  kind: 'session',
  user: user(over),
  sessionId: 's',
  sessionIdHash: 'h',
});
const bearer = (scopes: string[]): Principal => ({
  kind: 'bearer',
  user: user(),
  applicationId: '7',
  scopes: new Set(scopes),
  grantId: 'g',
  isAdminApplication: false,
});
const spec = (over: Partial<AnyRoute>): AnyRoute =>
  ({ method: 'GET', path: '/x', policy: 'user', handler: () => undefined, ...over }) as AnyRoute;
const codeOf = (error: ApiError | undefined) => error?.code;

describe('requestContext', () => {
  const config = { trustedProxies: parseCidrList('127.0.0.1/32'), testMode: true };
  it('keeps a well-formed X-Request-ID and replaces a malformed one', () => {
    const kept = requestContext(config, {
      fastifyId: 'f',
      remoteAddress: '1.2.3.4',
      headers: { 'x-request-id': 'abc-1.2' },
    });
    assert.equal(kept.requestId, 'abc-1.2');
    const replaced = requestContext(config, {
      fastifyId: 'f',
      remoteAddress: '1.2.3.4',
      headers: { 'x-request-id': 'a b' },
    });
    assert.equal(replaced.requestId, 'f');
  });
  it('takes the client address behind a trusted proxy and keys IPv6 by /64', () => {
    const state = requestContext(config, {
      fastifyId: 'f',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '2001:db8:1:2:3:4:5:6' },
    });
    assert.equal(state.ip, '2001:db8:1:2:3:4:5:6');
    assert.equal(
      state.ipKey,
      requestContext(config, { fastifyId: 'f', remoteAddress: '2001:db8:1:2::9', headers: {} }).ipKey,
    );
  });
  it('is strict outside test mode, and in test mode only when asked', () => {
    const headers = {};
    assert.equal(
      requestContext({ ...config, testMode: false }, { fastifyId: 'f', remoteAddress: '::1', headers }).strict,
      true,
    );
    assert.equal(requestContext(config, { fastifyId: 'f', remoteAddress: '::1', headers }).strict, false);
    const strict = { 'x-test-strict': 'true' };
    assert.equal(requestContext(config, { fastifyId: 'f', remoteAddress: '::1', headers: strict }).strict, true);
  });
});

describe('banGate', () => {
  const clock = { now: () => 1_000_000 };
  it('lets an unbanned address through synchronously', () => {
    assert.equal(
      banGate({ clock, banCheck: () => undefined } as never, { ip: '1.2.3.4', ipKey: '1.2.3.4' }),
      undefined,
    );
  });
  it('refuses a banned address, from a synchronous or an asynchronous store', async () => {
    const ban = { reason: 'x', expiresAt: 2_000_000 } as never;
    const sync = banGate({ clock, banCheck: () => ban } as never, { ip: '1.2.3.4', ipKey: '1.2.3.4' });
    assert.ok(sync instanceof ApiError);
    const later = await banGate({ clock, banCheck: async () => ban } as never, { ip: '1.2.3.4', ipKey: '1.2.3.4' });
    assert.equal(codeOf(later), codeOf(sync as ApiError));
  });
  it('exempts only the health check and the test harness', () => {
    assert.deepEqual(
      ['/_health', '/v1/_health', '/test/x', '/v1/test/x', '/v1/users/@me', '/_healthz'].map(isBanExempt),
      [true, true, true, true, false, false],
    );
  });
});

describe('authenticate', () => {
  const failures: string[] = [];
  const deps = {
    credentials: { resolve: (c: { kind: string }) => (c.kind === 'none' ? undefined : undefined) },
    recordAuthFailure: async (ip: string) => void failures.push(ip),
  } as never;
  it('reads no credential on credential-free, self and test routes', () => {
    for (const policy of ['credential-free', 'self', 'test'] as const) {
      const result = authenticate(deps, { policy }, 'Bot abc', { ip: '1.1.1.1', strict: true });
      assert.deepEqual(result, { credential: { kind: 'none' }, principal: undefined });
    }
  });
  it('counts an unresolved credential only in strict mode', async () => {
    failures.length = 0;
    await authenticate(deps, { policy: 'user' }, 'Bot abc.def', { ip: '1.1.1.1', strict: false });
    assert.deepEqual(failures, []);
    await authenticate(deps, { policy: 'user' }, 'Bot abc.def', { ip: '1.1.1.1', strict: true });
    assert.deepEqual(failures, ['1.1.1.1']);
    await authenticate(deps, { policy: 'user' }, undefined, { ip: '1.1.1.2', strict: true });
    assert.deepEqual(failures, ['1.1.1.1'], 'no credential offered is not a failure');
  });
  it('returns a warm principal without a promise', () => {
    const principal = session();
    const warm = { credentials: { resolve: () => principal }, recordAuthFailure: async () => {} } as never;
    const result = authenticate(warm, { policy: 'user' }, 'flx_abc', { ip: '1.1.1.1', strict: true });
    assert.ok(!(result instanceof Promise));
    assert.equal((result as { principal: Principal }).principal, principal);
  });
});

describe('rateLimit', () => {
  it('keys by user and credential kind (and application for a bearer), else by address key', () => {
    assert.equal(rateLimitIdentity(session(), '1.2.3.4'), 'session:100');
    assert.equal(rateLimitIdentity(bearer([]), '1.2.3.4'), 'bearer:100:7');
    assert.equal(rateLimitIdentity(undefined, '2001:db8::/64'), 'ip:2001:db8::/64');
  });
  it('keys a route bucket per resource when it names key params', () => {
    assert.equal(routeBucketKey({ bucket: 'b', limit: 1, windowSeconds: 1 }, {}, 'ip:x'), 'b::ip:x');
    assert.equal(
      routeBucketKey(
        { bucket: 'w', limit: 1, windowSeconds: 1, keyParams: ['id', 'token'] },
        { id: '1', token: 't' },
        'ip:x',
      ),
      'w:1:t:',
    );
  });
  it('refuses past the global bucket with the global headers', async () => {
    const deps = { rateLimiter: new InProcessRateLimiter(), config: { rateLimitOverrides: {} } };
    for (let i = 0; i < 50; i++) await rateLimit(deps, spec({}), {}, undefined, 'k', 0);
    await assert.rejects(rateLimit(deps, spec({}), {}, undefined, 'k', 0), (error: ApiError) => {
      assert.equal(error.code, 'RATE_LIMITED');
      assert.equal(error.headers['X-RateLimit-Global'], 'true');
      return true;
    });
    assert.equal(await rateLimit(deps, spec({}), {}, session({ flags: 1n << 47n }), 'k', 0), undefined, 'bypass flag');
  });
  it('applies overrides to the route bucket and shows its headers to bots only', async () => {
    const rl = { bucket: 'b', limit: 5, windowSeconds: 10 };
    const deps = {
      rateLimiter: new InProcessRateLimiter(),
      config: { rateLimitOverrides: { b: { limit: 1, windowSeconds: 10 } } },
    };
    const bot: Principal = { kind: 'bot', user: user(), applicationId: '7' };
    const shown = await rateLimit(deps, spec({ rateLimit: rl }), {}, bot, 'k', 0);
    assert.equal(shown?.['X-RateLimit-Limit'], '1');
    assert.equal(await rateLimit(deps, spec({ rateLimit: rl }), {}, session(), 'k', 0), undefined);
    await assert.rejects(rateLimit(deps, spec({ rateLimit: rl }), {}, bot, 'k', 0), (error: ApiError) => {
      assert.equal(error.headers['X-RateLimit-Scope'], 'user');
      assert.equal(error.headers['X-RateLimit-Remaining'], '0');
      return true;
    });
  });
});

describe('authorise', () => {
  const off = () => false;
  const on = () => true;
  it('applies the policy', () => {
    assert.equal(codeOf(authorise(spec({ policy: 'user' }), undefined, off)), 'UNAUTHORIZED');
    assert.equal(authorise(spec({ policy: 'user' }), session(), off), undefined);
    assert.equal(codeOf(authorise(spec({ policy: 'bot' }), session(), off)), 'ACCESS_DENIED');
    assert.equal(
      codeOf(authorise(spec({ policy: 'user', scope: 'guilds' }), bearer(['identify']), off)),
      'MISSING_OAUTH_SCOPE',
    );
    assert.equal(codeOf(authorise(spec({ policy: 'admin' }), session(), off)), 'MISSING_PERMISSIONS');
  });
  it('enforces SSO on ·L routes after the policy, and first on unauthenticated ones', () => {
    assert.equal(codeOf(authorise(spec({ policy: 'user', localAuth: true }), session(), on)), 'SSO_REQUIRED');
    assert.equal(codeOf(authorise(spec({ policy: 'user', localAuth: true }), undefined, on)), 'UNAUTHORIZED');
    assert.equal(codeOf(ssoFirstDenial({ policy: 'none', localAuth: true }, on)), 'SSO_REQUIRED');
    assert.equal(ssoFirstDenial({ policy: 'user', localAuth: true }, on), undefined);
    assert.equal(ssoFirstDenial({ policy: 'none', localAuth: true }, off), undefined);
    assert.equal(
      authorise(spec({ policy: 'none', localAuth: true }), undefined, on),
      undefined,
      'already checked first',
    );
  });
  it('gates suspicious accounts except on +S routes', () => {
    const flagged = session({ suspiciousActivityFlags: 1 << 2 });
    assert.equal(codeOf(authorise(spec({ policy: 'user' }), flagged, off)), 'ACCOUNT_SUSPICIOUS_ACTIVITY');
    assert.equal(authorise(spec({ policy: 'user', admitsSuspicious: true }), flagged, off), undefined);
  });
  it('opens the test harness only in test mode with the token', () => {
    assert.equal(codeOf(testHarnessDenial({ testMode: false, testToken: 't' }, 't')), 'NOT_FOUND');
    assert.equal(codeOf(testHarnessDenial({ testMode: true, testToken: 't' }, 'u')), 'TEST_HARNESS_FORBIDDEN');
    assert.equal(codeOf(testHarnessDenial({ testMode: true, testToken: 't' }, undefined)), 'TEST_HARNESS_FORBIDDEN');
    assert.equal(testHarnessDenial({ testMode: true, testToken: 't' }, 't'), undefined);
  });
});

describe('captcha', () => {
  it('applies to anonymous callers of a CAPTCHA route in strict mode only', () => {
    assert.equal(needsCaptcha({ captcha: true }, undefined, { strict: true }), true);
    assert.equal(needsCaptcha({ captcha: true }, session(), { strict: true }), false);
    assert.equal(needsCaptcha({ captcha: true }, undefined, { strict: false }), false);
    assert.equal(needsCaptcha({}, undefined, { strict: true }), false);
  });
});

describe('upload admission', () => {
  const big = { bodyLimit: 50 * 1024 * 1024 };
  const request = (length?: number) => ({
    complete: false,
    headers: length === undefined ? {} : { 'content-length': String(length) },
  });
  it('needs no slot for JSON-sized bodies or routes', () => {
    const gate = new ConcurrencyGate(2, 1);
    assert.equal(admitUpload(gate, {}, request(), 'ip:a'), undefined);
    assert.equal(admitUpload(gate, big, request(1000), 'ip:a'), undefined);
  });
  it('holds per-caller and per-process slots, refusing with the scope that is full', () => {
    const gate = new ConcurrencyGate(2, 1);
    const release = admitUpload(gate, big, request(), 'ip:a');
    assert.ok(release);
    assert.throws(
      () => admitUpload(gate, big, request(), 'ip:a'),
      (e: ApiError) => e.headers['X-RateLimit-Scope'] === 'user',
    );
    assert.ok(admitUpload(gate, big, request(), 'ip:b'));
    assert.throws(
      () => admitUpload(gate, big, request(), 'ip:c'),
      (e: ApiError) => e.headers['X-RateLimit-Scope'] === 'shared',
    );
    release();
    assert.ok(admitUpload(gate, big, request(), 'ip:c'));
  });
});

describe('decodeBody and validate', () => {
  it('reads JSON without a content type, an empty body as {}, forms and raw bytes', () => {
    assert.deepEqual(decodeBody({}, Buffer.from('{"a":1}')), { a: 1 });
    assert.deepEqual(decodeBody({}, Buffer.alloc(0)), {});
    assert.deepEqual(decodeBody({}, undefined), {});
    assert.deepEqual(decodeBody({ bodyKind: 'form' }, Buffer.from('a=1&b=2')), { a: '1', b: '2' });
    const raw = Buffer.from('x');
    assert.equal(decodeBody({ bodyKind: 'raw' }, raw), raw);
  });
  it('refuses malformed JSON as a field error on body', () => {
    assert.throws(
      () => decodeBody({}, Buffer.from('{')),
      (e: ApiError) => e.code === 'INVALID_FORM_BODY' && JSON.stringify(e.extra).includes('"body"'),
    );
  });
  it('validates body and query through the route schemas, repeated query names as lists', () => {
    const route = {
      body: z.object({ n: z.number() }),
      query: z.object({ id: z.array(z.string()) }),
      repeatedQuery: ['id'],
    };
    assert.deepEqual(validate(route, { n: 1 }, '/x?id=1&id=2', {}), { body: { n: 1 }, query: { id: ['1', '2'] } });
    assert.throws(
      () => validate(route, { n: 'x' }, '/x?id=1', {}),
      (e: ApiError) => e.code === 'INVALID_FORM_BODY',
    );
    assert.deepEqual(validate({}, 'raw', '/x?a=1', { a: '1' }), { body: 'raw', query: { a: '1' } });
  });
});

describe('sudo', () => {
  it('asks for sudo mode per the route, or per body when the route decides', () => {
    assert.equal(sudoModeFor({}, {}), undefined);
    assert.equal(sudoModeFor({ sudo: 'y0' }, {}), 'y0');
    const perBody = { sudo: (body: { email?: string }) => body.email !== undefined };
    assert.equal(sudoModeFor(perBody, { email: 'x' }), 'y');
    assert.equal(sudoModeFor(perBody, {}), undefined);
  });
});
