import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { harness, registerUser, request, uniqueEmail } from '../support/client.ts';
import { assertFieldError, emailsTo, lastEmail, linkToken, login, setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBAPP = 'https://app.hearth.test';
let server: TestServer;
before(async () => {
  // Trusting loopback as a proxy lets the tests speak from any address through X-Forwarded-For.
  server = await startTestServer({ HEARTH_WEBAPP_URL: WEBAPP, HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
});
after(async () => {
  await server?.close();
});
beforeEach(async () => {
  await setClock(server, 0);
});

async function forgot(email: string, headers: Record<string, string> = {}) {
  return request(server, 'POST', '/v1/auth/forgot', { body: { email }, headers });
}

async function resetToken(email: string): Promise<string> {
  const res = await forgot(email);
  assert.equal(res.status, 204);
  const mail = await lastEmail(server, email, 'password_reset');
  return linkToken(mail, '/reset', WEBAPP);
}

describe('forgot password', () => {
  it('answers 204 with an empty body whether or not the address exists, and mails only a real account', async () => {
    const user = await registerUser(server);
    const unknown = uniqueEmail('nobody');
    const known = await forgot(user.email);
    const missing = await forgot(unknown);
    assert.equal(known.status, 204);
    assert.equal(missing.status, 204);
    assert.equal(known.text, '');
    assert.equal(missing.text, '');
    assert.equal((await emailsTo(server, unknown)).length, 0);
    const mail = await lastEmail(server, user.email, 'password_reset');
    assert.equal(mail.subject, 'Reset your password');
    assert.match(mail.text, /expires in 1 hour/);
    assert.ok(mail.html.includes(`${WEBAPP}/reset#token=`));
  });

  it('validates the address format', async () => {
    assertFieldError(await forgot('not-an-address'), 'email', 'INVALID_EMAIL_ADDRESS');
  });

  it('applies 5 per 30 minutes per address under strict limits', async () => {
    const user = await registerUser(server);
    const strict = { 'x-test-strict': 'true', 'x-forwarded-for': '198.51.100.9' };
    await harness(server, 'POST', '/rate-limits/reset');
    // The route bucket (5/60 s) and the per-address allowance (5/30 min) both allow five.
    for (let i = 0; i < 5; i++) assert.equal((await forgot(user.email, strict)).status, 204);
    const limited = await forgot(user.email, { ...strict, 'x-forwarded-for': '198.51.100.10' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    await harness(server, 'POST', '/rate-limits/reset');
  });

  it('sends nothing for a deleted account and refuses a bot account', async () => {
    const deleted = await registerUser(server);
    await harness(server, 'POST', `/users/${deleted.id}/security-flags`, { set_flags: ['DELETED'] });
    assert.equal((await forgot(deleted.email)).status, 204);
    assert.equal((await emailsTo(server, deleted.email, 'password_reset')).length, 0);

    const bot = await registerUser(server);
    await harness(server, 'POST', `/users/${bot.id}/set-bot-flag`, { is_bot: true });
    const res = await forgot(bot.email);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
  });
});

describe('reset token check', () => {
  it('reports a live token as valid without consuming it', async () => {
    const user = await registerUser(server);
    const token = await resetToken(user.email);
    for (let i = 0; i < 2; i++) {
      const res = await request(server, 'GET', `/v1/auth/reset/${token}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { valid: true });
    }
    const reset = await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'a-new-password-1' } });
    assert.equal(reset.status, 200);
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${token}`)).body, { valid: false });
  });

  it('reports forged and expired tokens as not valid', async () => {
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${'Z'.repeat(64)}`)).body, { valid: false });
    const user = await registerUser(server);
    const token = await resetToken(user.email);
    await setClock(server, 3600_000 + 1000);
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${token}`)).body, { valid: false });
  });
});

describe('password reset', () => {
  it('revokes every session, sets the password and signs the requester in', async () => {
    const user = await registerUser(server);
    const other = await login(server, user.email, user.password);
    assert.equal(other.status, 200);
    const token = await resetToken(user.email);
    const res = await request(server, 'POST', '/v1/auth/reset', {
      body: { token, password: 'brand-new-pass-77' },
      headers: { 'x-forwarded-for': '203.0.113.50' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.user_id, user.id);
    assert.match(res.body.token, /^flx_[A-Za-z0-9]{36}$/);
    assert.equal(res.body.user.id, user.id);
    assert.equal(res.body.user.email, user.email);

    for (const old of [user.token, other.body.token]) {
      const gone = await request(server, 'GET', '/v1/auth/sessions', { auth: old });
      assert.equal(gone.status, 401);
    }
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: res.body.token })).status, 200);
    assertFieldError(await login(server, user.email, user.password), 'password', 'INVALID_EMAIL_OR_PASSWORD');
    // The reset authorised the requester's address: logging in from it needs no emailed approval.
    const again = await login(server, user.email, 'brand-new-pass-77', { 'x-forwarded-for': '203.0.113.50' });
    assert.equal(again.status, 200, again.text);
  });

  it('refuses a reused token', async () => {
    const user = await registerUser(server);
    const token = await resetToken(user.email);
    assert.equal(
      (await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'first-new-pass' } })).status,
      200,
    );
    const again = await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'second-new-pass' } });
    assertFieldError(again, 'token', 'INVALID_OR_EXPIRED_RESET_TOKEN');
  });

  it('refuses an expired token (1 hour) and a forged one', async () => {
    const user = await registerUser(server);
    const token = await resetToken(user.email);
    await setClock(server, 3600_000 + 1000);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'late-new-pass' } }),
      'token',
      'INVALID_OR_EXPIRED_RESET_TOKEN',
    );
    await setClock(server, 0);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token: 'q'.repeat(64), password: 'forged-pass' } }),
      'token',
      'INVALID_OR_EXPIRED_RESET_TOKEN',
    );
    // The original password still works.
    assert.equal((await login(server, user.email, user.password)).status, 200);
  });

  it('retires an older link when a new one is requested', async () => {
    const user = await registerUser(server);
    const first = await resetToken(user.email);
    const second = await resetToken(user.email);
    assert.notEqual(first, second);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token: first, password: 'older-link-pass' } }),
      'token',
      'INVALID_OR_EXPIRED_RESET_TOKEN',
    );
    assert.equal(
      (await request(server, 'POST', '/v1/auth/reset', { body: { token: second, password: 'newer-link-pass' } }))
        .status,
      200,
    );
  });

  it('rejects a common or short password without using the token', async () => {
    const user = await registerUser(server);
    const token = await resetToken(user.email);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'password123' } }),
      'password',
      'PASSWORD_IS_TOO_COMMON',
    );
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'short' } }),
      'password',
      'INVALID_FORMAT',
    );
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${token}`)).body, { valid: true });
  });

  it('treats a deleted account as unknown and refuses a bot account', async () => {
    const deleted = await registerUser(server);
    const deletedToken = await resetToken(deleted.email);
    await harness(server, 'POST', `/users/${deleted.id}/security-flags`, { set_flags: ['DELETED'] });
    assertFieldError(
      await request(server, 'POST', '/v1/auth/reset', { body: { token: deletedToken, password: 'deleted-pass-1' } }),
      'token',
      'INVALID_OR_EXPIRED_RESET_TOKEN',
    );
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${deletedToken}`)).body, { valid: false });

    const bot = await registerUser(server);
    const botToken = await resetToken(bot.email);
    await harness(server, 'POST', `/users/${bot.id}/set-bot-flag`, { is_bot: true });
    const res = await request(server, 'POST', '/v1/auth/reset', { body: { token: botToken, password: 'bot-pass-11' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
    const check = await request(server, 'GET', `/v1/auth/reset/${botToken}`);
    assert.equal(check.status, 403);
    assert.equal(check.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
  });
});
