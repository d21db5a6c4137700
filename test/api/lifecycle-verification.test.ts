import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { harness, registerUser, request } from '../support/client.ts';
import { assertFieldError, createBot, emailsTo, lastEmail, linkToken, setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ HEARTH_WEBAPP_URL: 'https://app.hearth.test' });
});
after(async () => {
  await server?.close();
});
beforeEach(async () => {
  await setClock(server, 0);
});

const WEBAPP = 'https://app.hearth.test';

async function me(token: string) {
  return request(server, 'GET', '/v1/users/@me', { auth: token });
}

describe('email verification', () => {
  it('mails a text and HTML verification link built from the web-app URL on registration', async () => {
    const user = await registerUser(server);
    const email = await lastEmail(server, user.email, 'email_verification');
    assert.equal(email.to, user.email);
    assert.equal(email.subject, 'Verify your email address');
    const token = linkToken(email, '/verify', WEBAPP);
    assert.equal(token.length, 64);
    assert.equal(email.metadata.token, token);
    assert.ok(email.html.includes(`href="${WEBAPP}/verify#token=${token}"`), email.html);
    // Only the digest is stored.
    const rows = await server.app.services.db.query('SELECT 1 FROM one_time_tokens WHERE token_hash = $1', [token]);
    assert.equal(rows.length, 0);
  });

  it('verifies the address once; the link cannot be reused', async () => {
    const user = await registerUser(server);
    assert.equal((await me(user.token)).body.verified, false);
    const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal((await me(user.token)).body.verified, true);
    const again = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assertFieldError(again, 'token', 'INVALID_OR_EXPIRED_VERIFICATION_TOKEN');
  });

  it('refuses a forged token', async () => {
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token: 'A'.repeat(64) } });
    assertFieldError(res, 'token', 'INVALID_OR_EXPIRED_VERIFICATION_TOKEN');
  });

  it('refuses a missing token with a field error', async () => {
    const res = await request(server, 'POST', '/v1/auth/verify', { body: {} });
    assertFieldError(res, 'token', 'BASE_TYPE_REQUIRED');
  });

  it('refuses a token older than 24 hours', async () => {
    const user = await registerUser(server);
    const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
    await setClock(server, 24 * 3600_000 + 1000);
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assertFieldError(res, 'token', 'INVALID_OR_EXPIRED_VERIFICATION_TOKEN');
    await setClock(server, 0);
    assert.equal((await me(user.token)).body.verified, false);
  });

  it('treats the token of a deleted account as unknown', async () => {
    const user = await registerUser(server);
    const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
    await harness(server, 'POST', `/users/${user.id}/security-flags`, { set_flags: ['DELETED'] });
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assertFieldError(res, 'token', 'INVALID_OR_EXPIRED_VERIFICATION_TOKEN');
  });

  it('answers 403 BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED when the token names a bot account', async () => {
    const user = await registerUser(server);
    const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
    await harness(server, 'POST', `/users/${user.id}/set-bot-flag`, { is_bot: true });
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
  });
});

describe('verification resend', () => {
  it('sends a new link and retires the previous one', async () => {
    const user = await registerUser(server);
    const first = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
    const res = await request(server, 'POST', '/v1/auth/verify/resend', { auth: user.token });
    assert.equal(res.status, 204);
    const mails = await emailsTo(server, user.email, 'email_verification');
    assert.equal(mails.length, 2);
    const second = mails[1]?.metadata.token;
    assert.notEqual(second, first);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/verify', { body: { token: first } }),
      'token',
      'INVALID_OR_EXPIRED_VERIFICATION_TOKEN',
    );
    assert.equal((await request(server, 'POST', '/v1/auth/verify', { body: { token: second } })).status, 204);
  });

  it('allows three resends per 15 minutes under strict limits', async () => {
    const user = await registerUser(server);
    const strict = { 'x-test-strict': 'true' };
    for (let i = 0; i < 3; i++) {
      const ok = await request(server, 'POST', '/v1/auth/verify/resend', { auth: user.token, headers: strict });
      assert.equal(ok.status, 204);
    }
    const limited = await request(server, 'POST', '/v1/auth/verify/resend', { auth: user.token, headers: strict });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.equal(limited.body.global, false);
    assert.ok(limited.body.retry_after > 0);
    await harness(server, 'POST', '/rate-limits/reset');
  });

  it('needs a credential and refuses bots with ACCESS_DENIED', async () => {
    const anonymous = await request(server, 'POST', '/v1/auth/verify/resend');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'UNAUTHORIZED');
    const bot = await createBot(server);
    const res = await request(server, 'POST', '/v1/auth/verify/resend', { auth: bot.token });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCESS_DENIED');
  });
});
