import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { assertFieldError, createBot, emailsTo, lastEmail, linkToken, login, setClock } from '../support/lifecycle.ts';
import { enableTotp, SUDO_HEADER, sudoProofViaTotp } from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBAPP = 'https://app.hearth.test';
let server: TestServer;
before(async () => {
  server = await startTestServer({ HEARTH_WEBAPP_URL: WEBAPP, HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
});
after(async () => {
  await server?.close();
});
beforeEach(async () => {
  await setClock(server, 0);
});

function step(user: TestUser, name: string, body: Record<string, unknown> = {}) {
  return request(server, 'POST', `/v1/users/@me/email-change/${name}`, {
    auth: user.token,
    body: { password: user.password, ...body },
  });
}

async function verifiedUser(): Promise<TestUser> {
  const user = await registerUser(server);
  const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
  assert.equal((await request(server, 'POST', '/v1/auth/verify', { body: { token } })).status, 204);
  return user;
}

/** Runs the whole change for a verified account and returns the email token. */
async function changeEmail(user: TestUser, newEmail: string): Promise<string> {
  const start = await step(user, 'start');
  assert.equal(start.status, 200, start.text);
  const code = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
  const proof = (await step(user, 'verify-original', { ticket: start.body.ticket, code })).body.original_proof;
  assert.equal(
    (await step(user, 'request-new', { ticket: start.body.ticket, new_email: newEmail, original_proof: proof })).status,
    200,
  );
  const newCode = (await lastEmail(server, newEmail, 'email_change_new')).metadata.code;
  const done = await step(user, 'verify-new', { ticket: start.body.ticket, code: newCode, original_proof: proof });
  assert.equal(done.status, 200, done.text);
  return done.body.email_token;
}

describe('email change', () => {
  it('runs start → verify-original → request-new → verify-new → PATCH and mails a revert link', async () => {
    const user = await verifiedUser();
    const newEmail = uniqueEmail('moved');

    const start = await step(user, 'start');
    assert.equal(start.status, 200, start.text);
    assert.match(start.body.ticket, /^[A-Za-z0-9]{64}$/);
    assert.equal(start.body.require_original, true);
    assert.equal(start.body.original_proof, undefined);
    assert.ok(Date.parse(start.body.resend_available_at) > Date.now());
    const original = await lastEmail(server, user.email, 'email_change_original');
    assert.match(original.metadata.code, /^\d{6}$/);
    assert.ok(original.text.includes(original.metadata.code));
    assert.ok(original.html.includes(original.metadata.code));

    const verified = await step(user, 'verify-original', {
      ticket: start.body.ticket,
      code: original.metadata.code,
    });
    assert.equal(verified.status, 200, verified.text);
    const proof = verified.body.original_proof;
    assert.match(proof, /^[A-Za-z0-9]{64}$/);

    const requested = await step(user, 'request-new', {
      ticket: start.body.ticket,
      new_email: newEmail,
      original_proof: proof,
    });
    assert.equal(requested.status, 200, requested.text);
    assert.equal(requested.body.ticket, start.body.ticket);
    assert.equal(requested.body.new_email, newEmail);
    assert.ok(Date.parse(requested.body.new_code_expires_at) > Date.now());
    const code = (await lastEmail(server, newEmail, 'email_change_new')).metadata.code;

    const finished = await step(user, 'verify-new', { ticket: start.body.ticket, code, original_proof: proof });
    assert.equal(finished.status, 200, finished.text);
    const emailToken = finished.body.email_token;
    assert.match(emailToken, /^[A-Za-z0-9]{64}$/);

    const patched = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token: emailToken, password: user.password },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.email, newEmail);
    assert.equal(patched.body.verified, true);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.email, newEmail);

    const revert = await lastEmail(server, user.email, 'email_change_revert');
    assert.equal(revert.subject, 'Your email address was changed');
    const revertToken = linkToken(revert, '/auth/email-revert', WEBAPP);
    assert.match(revert.text, /24 hours/);
    assert.ok(revert.html.includes(revertToken));

    // The address moved: login uses the new one.
    assert.equal((await login(server, newEmail, user.password)).status, 200);
    assertFieldError(await login(server, user.email, user.password), 'email', 'INVALID_EMAIL_OR_PASSWORD');

    // The email token is single-use.
    const reused = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token: emailToken, password: user.password },
    });
    assertFieldError(reused, 'email_token', 'INVALID_OR_EXPIRED_EMAIL_TOKEN');
  });

  it('hands an unverified account its proof at once', async () => {
    const user = await registerUser(server);
    const start = await step(user, 'start');
    assert.equal(start.status, 200);
    assert.equal(start.body.require_original, false);
    assert.match(start.body.original_proof, /^[A-Za-z0-9]{64}$/);
    assert.equal((await emailsTo(server, user.email, 'email_change_original')).length, 0);
    const newEmail = uniqueEmail('unverified');
    const requested = await step(user, 'request-new', {
      ticket: start.body.ticket,
      new_email: newEmail,
      original_proof: start.body.original_proof,
    });
    assert.equal(requested.status, 200, requested.text);
  });

  it('requires sudo on every step and refuses bots and strangers', async () => {
    const user = await verifiedUser();
    const bare = await request(server, 'POST', '/v1/users/@me/email-change/start', { auth: user.token, body: {} });
    assert.equal(bare.status, 403);
    assert.equal(bare.body.code, 'SUDO_MODE_REQUIRED');
    assert.equal(bare.body.methods.password, true);
    const wrong = await request(server, 'POST', '/v1/users/@me/email-change/start', {
      auth: user.token,
      body: { password: 'not-the-password' },
    });
    assertFieldError(wrong, 'password', 'INVALID_PASSWORD');
    const anonymous = await request(server, 'POST', '/v1/users/@me/email-change/start', { body: {} });
    assert.equal(anonymous.status, 401);
    const bot = await createBot(server);
    const botStart = await request(server, 'POST', '/v1/users/@me/email-change/start', { auth: bot.token, body: {} });
    assert.equal(botStart.status, 403);
    assert.equal(botStart.body.code, 'ACCESS_DENIED');
    // Another account's ticket is unknown to this one.
    const start = await step(user, 'start');
    const stranger = await registerUser(server);
    const code = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
    assertFieldError(
      await step(stranger, 'verify-original', { ticket: start.body.ticket, code }),
      'ticket',
      'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
    );
  });

  it('refuses wrong codes, a wrong proof, a taken address and dead tickets', async () => {
    const user = await verifiedUser();
    const start = await step(user, 'start');
    const ticket = start.body.ticket;
    assertFieldError(await step(user, 'verify-original', { ticket, code: '000000x' }), 'code', 'INVALID_CODE');
    const code = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
    const proof = (await step(user, 'verify-original', { ticket, code })).body.original_proof;
    assertFieldError(
      await step(user, 'verify-original', { ticket, code }),
      'code',
      'INVALID_CODE', // the original code is single-use
    );
    assertFieldError(
      await step(user, 'request-new', { ticket, new_email: uniqueEmail(), original_proof: 'p'.repeat(64) }),
      'original_proof',
      'INVALID_PROOF_TOKEN',
    );
    const taken = await registerUser(server);
    assertFieldError(
      await step(user, 'request-new', { ticket, new_email: taken.email, original_proof: proof }),
      'new_email',
      'EMAIL_ALREADY_IN_USE',
    );
    assertFieldError(
      await step(user, 'request-new', { ticket, new_email: 'nope', original_proof: proof }),
      'new_email',
      'INVALID_EMAIL_ADDRESS',
    );
    assertFieldError(
      await step(user, 'verify-original', { ticket: 'T'.repeat(64), code }),
      'ticket',
      'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
    );
    await setClock(server, 30 * 60_000 + 1000);
    assertFieldError(
      await step(user, 'request-new', { ticket, new_email: uniqueEmail(), original_proof: proof }),
      'ticket',
      'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
    );
  });

  it('kills the ticket after five wrong codes', async () => {
    const user = await verifiedUser();
    const { ticket } = (await step(user, 'start')).body;
    const code = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
    const wrong = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++)
      assertFieldError(await step(user, 'verify-original', { ticket, code: wrong }), 'code', 'INVALID_CODE');
    assertFieldError(
      await step(user, 'verify-original', { ticket, code }),
      'ticket',
      'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
    );
  });

  it('counts parallel wrong codes: five are refused as wrong, the rest find the ticket dead', async () => {
    // A TOTP account with a sudo proof: no password hash per request, so the ten guesses really overlap.
    const user = await verifiedUser();
    const { secret } = await enableTotp(server, user.token);
    const sudo = await sudoProofViaTotp(server, user.token, secret);
    const post = (name: string, body: Record<string, unknown>) =>
      request(server, 'POST', `/v1/users/@me/email-change/${name}`, {
        auth: user.token,
        headers: { [SUDO_HEADER]: sudo },
        body,
      });
    const start = await post('start', {});
    assert.equal(start.status, 200, start.text);
    const { ticket } = start.body;
    const code = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
    const wrong = code === '123456' ? '654321' : '123456';
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post('verify-original', { ticket, code: wrong })),
    );
    const wrongCode = answers.filter((res) =>
      res.body.errors?.some((e: { code: string }) => e.code === 'INVALID_CODE'),
    );
    assert.equal(wrongCode.length, 5);
    for (const res of wrongCode) assertFieldError(res, 'code', 'INVALID_CODE');
    for (const res of answers.filter((res) => !wrongCode.includes(res)))
      assertFieldError(res, 'ticket', 'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET');
    assertFieldError(
      await post('verify-original', { ticket, code }),
      'ticket',
      'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
    );
  });

  it('refuses an expired code (10 minutes) on the new address', async () => {
    const user = await registerUser(server);
    const start = await step(user, 'start');
    const newEmail = uniqueEmail();
    await step(user, 'request-new', {
      ticket: start.body.ticket,
      new_email: newEmail,
      original_proof: start.body.original_proof,
    });
    const code = (await lastEmail(server, newEmail, 'email_change_new')).metadata.code;
    await setClock(server, 10 * 60_000 + 1000);
    assertFieldError(
      await step(user, 'verify-new', { ticket: start.body.ticket, code, original_proof: start.body.original_proof }),
      'code',
      'INVALID_CODE',
    );
  });

  it('resends each code at most once per 30 s, with a new code', async () => {
    const user = await verifiedUser();
    const { ticket } = (await step(user, 'start')).body;
    const first = (await lastEmail(server, user.email, 'email_change_original')).metadata.code;
    const early = await request(server, 'POST', '/v1/users/@me/email-change/resend-original', {
      auth: user.token,
      body: { ticket },
    });
    assert.equal(early.status, 429);
    assert.equal(early.body.code, 'RATE_LIMITED');
    assert.ok(early.body.retry_after > 0 && early.body.retry_after <= 30);
    await setClock(server, 31_000);
    const ok = await request(server, 'POST', '/v1/users/@me/email-change/resend-original', {
      auth: user.token,
      body: { ticket },
    });
    assert.equal(ok.status, 204);
    const codes = await emailsTo(server, user.email, 'email_change_original');
    assert.equal(codes.length, 2);
    const second = codes[1]?.metadata.code;
    if (first !== second)
      assertFieldError(await step(user, 'verify-original', { ticket, code: first }), 'code', 'INVALID_CODE');
    const proof = (await step(user, 'verify-original', { ticket, code: second })).body.original_proof;
    assert.ok(proof);

    const newEmail = uniqueEmail();
    await step(user, 'request-new', { ticket, new_email: newEmail, original_proof: proof });
    const earlyNew = await request(server, 'POST', '/v1/users/@me/email-change/resend-new', {
      auth: user.token,
      body: { ticket },
    });
    assert.equal(earlyNew.status, 429);
    await setClock(server, 62_000);
    const okNew = await request(server, 'POST', '/v1/users/@me/email-change/resend-new', {
      auth: user.token,
      body: { ticket },
    });
    assert.equal(okNew.status, 204);
    assert.equal((await emailsTo(server, newEmail, 'email_change_new')).length, 2);
  });

  it('admits an account with outstanding suspicious flags', async () => {
    const user = await registerUser(server);
    await harness(server, 'POST', `/users/${user.id}/security-flags`, { suspicious_activity_flags: 1 });
    const blocked = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(blocked.status, 403);
    const start = await step(user, 'start');
    assert.equal(start.status, 200, start.text);
  });
});

describe('email revert', () => {
  it('restores the old address, sets the password, ends every session and authorises only the requester', async () => {
    const user = await verifiedUser();
    const newEmail = uniqueEmail('hijack');
    const emailToken = await changeEmail(user, newEmail);
    await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token: emailToken, password: user.password },
    });
    const other = await login(server, newEmail, user.password);
    assert.equal(other.status, 200);
    const token = (await lastEmail(server, user.email, 'email_change_revert')).metadata.token;

    const reverted = await request(server, 'POST', '/v1/auth/email-revert', {
      body: { token, password: 'taken-back-pass-1' },
      headers: { 'x-forwarded-for': '198.51.100.77' },
    });
    assert.equal(reverted.status, 200, reverted.text);
    assert.equal(reverted.body.user_id, user.id);
    assert.equal(reverted.body.user.email, user.email);
    assert.equal(reverted.body.user.verified, true);
    assert.equal(reverted.body.user.mfa_enabled, false);
    assert.match(reverted.body.token, /^flx_[A-Za-z0-9]{36}$/);

    for (const old of [user.token, other.body.token])
      assert.equal((await request(server, 'GET', '/v1/auth/sessions', { auth: old })).status, 401);
    const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: reverted.body.token });
    assert.equal(sessions.body.length, 1);

    // Only the requester's address stays authorised; the new password works there.
    const there = await login(server, user.email, 'taken-back-pass-1', { 'x-forwarded-for': '198.51.100.77' });
    assert.equal(there.status, 200, there.text);
    const loopback = await login(server, user.email, 'taken-back-pass-1');
    assert.equal(loopback.status, 403);
    assert.equal(loopback.body.code, 'IP_AUTHORIZATION_REQUIRED');
    assertFieldError(await login(server, newEmail, user.password), 'email', 'INVALID_EMAIL_OR_PASSWORD');

    const reused = await request(server, 'POST', '/v1/auth/email-revert', {
      body: { token, password: 'another-pass-22' },
    });
    assertFieldError(reused, 'token', 'INVALID_OR_EXPIRED_REVERT_TOKEN');
  });

  it('refuses an expired (24 h) or forged revert token', async () => {
    const user = await verifiedUser();
    const emailToken = await changeEmail(user, uniqueEmail());
    await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token: emailToken, password: user.password },
    });
    const token = (await lastEmail(server, user.email, 'email_change_revert')).metadata.token;
    await setClock(server, 24 * 3600_000 + 1000);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/email-revert', { body: { token, password: 'too-late-pass' } }),
      'token',
      'INVALID_OR_EXPIRED_REVERT_TOKEN',
    );
    await setClock(server, 0);
    assertFieldError(
      await request(server, 'POST', '/v1/auth/email-revert', {
        body: { token: 'r'.repeat(64), password: 'forged-pw1' },
      }),
      'token',
      'INVALID_OR_EXPIRED_REVERT_TOKEN',
    );
  });

  it('refuses a bot account and treats a deleted one as unknown', async () => {
    const user = await verifiedUser();
    const emailToken = await changeEmail(user, uniqueEmail());
    await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token: emailToken, password: user.password },
    });
    const token = (await lastEmail(server, user.email, 'email_change_revert')).metadata.token;
    await harness(server, 'POST', `/users/${user.id}/set-bot-flag`, { is_bot: true });
    const bot = await request(server, 'POST', '/v1/auth/email-revert', { body: { token, password: 'bot-revert-1' } });
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
    await harness(server, 'POST', `/users/${user.id}/set-bot-flag`, { is_bot: false });
    await harness(server, 'POST', `/users/${user.id}/security-flags`, { set_flags: ['DELETED'] });
    assertFieldError(
      await request(server, 'POST', '/v1/auth/email-revert', { body: { token, password: 'gone-revert-1' } }),
      'token',
      'INVALID_OR_EXPIRED_REVERT_TOKEN',
    );
  });
});
