import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type ApiResponse, harness, registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * docs/conventions.md#ip-bans over HTTP. The loopback peer is a trusted proxy here, so `X-Forwarded-For` picks the client
 * address; a second server without trusted proxies checks that the header is ignored otherwise.
 */
const BAN_SECONDS = 3600;
let server: TestServer;
let untrusting: TestServer;

before(async () => {
  server = await startTestServer({ HEARTH_IP_BAN_FAILURES: '3', HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
  untrusting = await startTestServer({ HEARTH_IP_BAN_FAILURES: '3' });
});
after(async () => {
  await server?.close();
  await untrusting?.close();
});
beforeEach(async () => {
  assert.equal((await harness(server, 'POST', '/rate-limits/reset')).status, 200);
  assert.equal((await harness(untrusting, 'POST', '/rate-limits/reset')).status, 200);
});

const from = (ip: string, strict = true): Record<string, string> => ({
  'x-forwarded-for': ip,
  ...(strict ? { 'x-test-strict': 'true' } : {}),
});

async function failAuth(target: TestServer, ip: string, times: number, strict = true): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await request(target, 'GET', '/v1/users/@me', { auth: 'not-a-real-token', headers: from(ip, strict) });
    assert.equal(res.status, 401, `failure ${i + 1} from ${ip}`);
    assert.equal(res.body.code, 'UNAUTHORIZED');
  }
}

function assertBanned(res: ApiResponse, ip: string, bannedAt: number): void {
  assert.equal(res.status, 403, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), [
    'appeal_email',
    'appeals_supported',
    'ban_kind',
    'code',
    'expires_at',
    'ip_address',
    'message',
  ]);
  assert.equal(res.body.code, 'GLOBAL_IP_TEMPORARILY_BANNED');
  assert.equal(res.body.message, 'This IP address is temporarily banned');
  assert.equal(res.body.ip_address, ip);
  assert.equal(res.body.appeal_email, null);
  assert.equal(res.body.appeals_supported, false);
  assert.equal(res.body.ban_kind, 'temporary');
  assert.match(res.body.expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const expiresAt = Date.parse(res.body.expires_at);
  assert.ok(Math.abs(expiresAt - (bannedAt + BAN_SECONDS * 1000)) < 5000, `expires_at ${res.body.expires_at}`);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(retryAfter > BAN_SECONDS - 10 && retryAfter <= BAN_SECONDS, `Retry-After ${retryAfter}`);
}

describe('automatic IP bans', () => {
  it('ban the address after N bad Authorization headers, on every route, and only that address', async () => {
    const user = await registerUser(server);
    const ip = '203.0.113.10';
    await failAuth(server, ip, 3);
    const bannedAt = Date.now();

    // Before authentication, buckets and routing: a valid credential, an unknown route, any method.
    assertBanned(await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: from(ip) }), ip, bannedAt);
    assertBanned(await request(server, 'GET', '/v1/no-such-route', { headers: from(ip) }), ip, bannedAt);
    assertBanned(await request(server, 'GET', '/.well-known/service', { headers: from(ip) }), ip, bannedAt);
    assertBanned(
      await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: user.password },
        headers: from(ip),
      }),
      ip,
      bannedAt,
    );
    // The ban holds for non-strict requests too: strictness only decides what counts.
    assertBanned(
      await request(server, 'GET', '/v1/users/@me', { auth: user.token, headers: from(ip, false) }),
      ip,
      bannedAt,
    );

    for (const path of ['/_health', '/v1/_health']) {
      const health = await request(server, 'GET', path, { headers: from(ip) });
      assert.equal(health.status, 200, path);
      assert.deepEqual(health.body, { status: 'ok' });
    }

    const neighbour = await request(server, 'GET', '/v1/users/@me', {
      auth: user.token,
      headers: from('203.0.113.11'),
    });
    assert.equal(neighbour.status, 200);
  });

  it('count unknown, malformed and wrong-case credentials alike', async () => {
    const ip = '203.0.113.20';
    for (const auth of [`flx_${'A'.repeat(36)}`, 'bot 1.abc', 'Bot nonsense']) {
      const res = await request(server, 'GET', '/v1/users/@me', { auth, headers: from(ip) });
      assert.equal(res.status, 401);
    }
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from(ip) })).status, 403);
  });

  it('ban after N wrong passwords', async () => {
    const user = await registerUser(server);
    const ip = '203.0.113.30';
    for (let i = 0; i < 3; i++) {
      const res = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: 'wrong-password' },
        headers: from(ip),
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0].code, 'INVALID_EMAIL_OR_PASSWORD');
    }
    const bannedAt = Date.now();
    assertBanned(
      await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: user.password },
        headers: from(ip),
      }),
      ip,
      bannedAt,
    );
    const elsewhere = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
      headers: from('203.0.113.31'),
    });
    // The correct password from another address is not banned; the new address needs IP authorisation.
    assert.equal(elsewhere.status, 403);
    assert.equal(elsewhere.body.code, 'IP_AUTHORIZATION_REQUIRED');
  });

  it('do not count missing credentials, Admin keys outside /v1/admin, credential-free routes or non-strict requests', async () => {
    const ip = '203.0.113.40';
    for (let i = 0; i < 4; i++) {
      assert.equal((await request(server, 'GET', '/v1/users/@me', { headers: from(ip) })).status, 401);
      assert.equal(
        (await request(server, 'GET', '/v1/users/@me', { auth: 'Admin fa_1_abc', headers: from(ip) })).status,
        401,
      );
      assert.equal(
        (await request(server, 'GET', '/_health', { auth: 'garbage token', headers: from(ip) })).status,
        200,
      );
    }
    await failAuth(server, ip, 5, false);
    const user = await registerUser(server);
    for (let i = 0; i < 4; i++) {
      const res = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: 'wrong-password' },
        headers: from(ip, false),
      });
      assert.equal(res.status, 400);
    }
    const res = await request(server, 'GET', '/.well-known/service', { headers: from(ip) });
    assert.equal(res.status, 200);
  });

  it('key IPv6 addresses by /64', async () => {
    await failAuth(server, '2001:db8:1:2::1', 3);
    const bannedAt = Date.now();
    assertBanned(
      await request(server, 'GET', '/.well-known/service', { headers: from('2001:db8:1:2:ffff::9') }),
      '2001:db8:1:2:ffff::9',
      bannedAt,
    );
    assert.equal(
      (await request(server, 'GET', '/.well-known/service', { headers: from('2001:db8:1:3::1') })).status,
      200,
    );
  });

  it('take the right-most untrusted X-Forwarded-For hop, so a forged left hop changes nothing', async () => {
    const ip = '203.0.113.50';
    for (const forged of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      const res = await request(server, 'GET', '/v1/users/@me', { auth: 'bad', headers: from(`${forged}, ${ip}`) });
      assert.equal(res.status, 401);
    }
    assertBanned(await request(server, 'GET', '/.well-known/service', { headers: from(ip) }), ip, Date.now());
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from('198.51.100.1') })).status, 200);
    // Trusted hops to the right are skipped; a garbled header falls back to the peer.
    assertBanned(
      await request(server, 'GET', '/.well-known/service', { headers: from(`${ip}, 127.0.0.1`) }),
      ip,
      Date.now(),
    );
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from('not an ip') })).status, 200);
  });

  it('end when the ban expires and are cleared by the test-harness reset', async () => {
    const ip = '203.0.113.60';
    await failAuth(server, ip, 3);
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from(ip) })).status, 403);
    try {
      const shifted = await harness(server, 'POST', '/clock', { offset_ms: (BAN_SECONDS + 1) * 1000 });
      assert.equal(shifted.status, 200);
      assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from(ip) })).status, 200);
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }

    const other = '203.0.113.61';
    await failAuth(server, other, 3);
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from(other) })).status, 403);
    assert.equal((await harness(server, 'POST', '/rate-limits/reset')).status, 200);
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from(other) })).status, 200);
  });

  it('ignore X-Forwarded-For when no trusted proxy is configured', async () => {
    for (const forged of ['198.51.100.7', '198.51.100.8', '198.51.100.9']) {
      const res = await request(untrusting, 'GET', '/v1/users/@me', { auth: 'bad', headers: from(forged) });
      assert.equal(res.status, 401);
    }
    // Every failure counted against the socket address, so any forged header is banned as 127.0.0.1.
    assertBanned(
      await request(untrusting, 'GET', '/.well-known/service', { headers: from('198.51.100.10') }),
      '127.0.0.1',
      Date.now(),
    );
    assert.equal((await harness(untrusting, 'POST', '/rate-limits/reset')).status, 200);
    assert.equal((await request(untrusting, 'GET', '/.well-known/service')).status, 200);
  });
});
