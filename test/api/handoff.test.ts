import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApplication } from '../support/applications.ts';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Session exchange (docs/accounts.md#session-exchange) over HTTP. */
let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

async function initiate(): Promise<{ code: string; poll_secret: string; expires_at: string }> {
  const res = await request(server, 'POST', '/v1/auth/handoff/initiate');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'expires_at', 'poll_secret']);
  assert.match(res.body.code, /^[A-HJKMNP-Z2-9]{8}$/);
  assert.match(res.body.poll_secret, /^[A-Za-z0-9]{64}$/);
  const ttl = Date.parse(res.body.expires_at) - Date.now();
  assert.ok(ttl > 4 * 60_000 && ttl <= 5 * 60_000, `ttl ${ttl}`);
  return res.body;
}

const status = (code: string, pollSecret: string) =>
  request(server, 'POST', `/v1/auth/handoff/${code}/status`, { body: { poll_secret: pollSecret } });

describe('session exchange', () => {
  it('a signed-in device approves a code and the first device collects a new session for the account, once', async () => {
    const user = await registerUser(server);
    const { code, poll_secret } = await initiate();
    assert.deepEqual((await status(code, poll_secret)).body, { status: 'pending' });

    // The credential can ride in the body (`token`); the code is read case-insensitively.
    const done = await request(server, 'POST', '/v1/auth/handoff/complete', {
      body: { code: code.toLowerCase(), token: user.token, user_id: user.id },
    });
    assert.equal(done.status, 204, done.text);

    const collected = await status(code, poll_secret);
    assert.equal(collected.status, 200);
    assert.equal(collected.body.status, 'completed');
    assert.equal(collected.body.user_id, user.id);
    assert.equal(collected.body.user.id, user.id);
    assert.match(collected.body.token, /^flx_[A-Za-z0-9]{36}$/);
    assert.notEqual(collected.body.token, user.token);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: collected.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, user.id);
    // Both sessions stay; the code is spent.
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
    assert.deepEqual((await status(code, poll_secret)).body, { status: 'expired' });
    const again = await request(server, 'POST', '/v1/auth/handoff/complete', {
      auth: user.token,
      body: { code, user_id: user.id },
    });
    assert.equal(again.status, 400);
    assert.deepEqual(
      again.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
      [['code', 'INVALID_CODE']],
    );
  });

  it('refuses a missing or unknown credential (401), a bot or another account (403), and hides the code from a wrong secret', async () => {
    const user = await registerUser(server);
    const other = await registerUser(server);
    const app = await createApplication(server, user);
    const { code, poll_secret } = await initiate();
    const complete = (auth: string | undefined, body: Record<string, unknown>) =>
      request(server, 'POST', '/v1/auth/handoff/complete', { auth, body: { code, user_id: user.id, ...body } });

    for (const res of [await complete(undefined, {}), await complete(undefined, { token: `flx_${'a'.repeat(36)}` })]) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { code: 'UNAUTHORIZED', message: 'Unauthorized' });
    }
    for (const res of [await complete(other.token, {}), await complete(`Bot ${app.botToken}`, { user_id: app.id })]) {
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'ACCESS_DENIED');
    }
    assert.deepEqual((await status(code, 'x'.repeat(64))).body, { status: 'expired' });
    assert.deepEqual((await status('ZZZZZZZZ', poll_secret)).body, { status: 'expired' });
    // Nothing was approved by the refusals.
    assert.deepEqual((await status(code, poll_secret)).body, { status: 'pending' });
  });

  it('approves a code once when two approvals arrive together (one 204, one INVALID_CODE, one session minted)', async () => {
    const user = await registerUser(server);
    const { code, poll_secret } = await initiate();
    const before = await request(server, 'GET', '/v1/auth/sessions', { auth: user.token });
    const both = await Promise.all(
      [0, 1].map(() =>
        request(server, 'POST', '/v1/auth/handoff/complete', { auth: user.token, body: { code, user_id: user.id } }),
      ),
    );
    assert.deepEqual(both.map((res) => res.status).sort(), [204, 400]);
    const after = await request(server, 'GET', '/v1/auth/sessions', { auth: user.token });
    assert.equal(after.body.length, before.body.length + 1);
    const collected = await status(code, poll_secret);
    assert.equal(collected.body.status, 'completed');
  });
});
