import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { lastEmail, login } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

async function withTotp(): Promise<{ user: TestUser; totp: TOTP }> {
  const user = await registerUser(server);
  const secret = new Secret({ size: 20 }).base32;
  const totp = new TOTP({ secret: Secret.fromBase32(secret) });
  const res = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
    auth: user.token,
    body: { secret, code: totp.generate() },
  });
  assert.equal(res.status, 200, res.text);
  return { user, totp };
}

describe('password reset on an MFA account', () => {
  it('revokes every session and answers with the login MFA challenge', async () => {
    const { user, totp } = await withTotp();
    await request(server, 'POST', '/v1/auth/forgot', { body: { email: user.email } });
    const token = (await lastEmail(server, user.email, 'password_reset')).metadata.token;
    const res = await request(server, 'POST', '/v1/auth/reset', { body: { token, password: 'mfa-reset-pass-1' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.mfa, true);
    assert.match(res.body.ticket, /^[A-Za-z0-9]{64}$/);
    assert.deepEqual(res.body.allowed_methods, ['totp']);
    assert.equal(res.body.totp, true);
    assert.equal(res.body.webauthn, false);
    assert.equal(res.body.sms, false);
    assert.equal(res.body.token, undefined);
    assert.equal((await request(server, 'GET', '/v1/auth/sessions', { auth: user.token })).status, 401);

    const signedIn = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
      body: { ticket: res.body.ticket, code: totp.generate() },
    });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.equal(signedIn.body.user_id, user.id);
    assert.equal((await login(server, user.email, 'mfa-reset-pass-1')).body.mfa, true);
  });
});

describe('email revert on an MFA account', () => {
  it('drops every second factor', async () => {
    const { user, totp } = await withTotp();
    const sudo = () => ({ mfa_method: 'totp', mfa_code: totp.generate() });
    const step = (name: string, body: Record<string, unknown> = {}) =>
      request(server, 'POST', `/v1/users/@me/email-change/${name}`, { auth: user.token, body: { ...sudo(), ...body } });

    const start = await step('start');
    assert.equal(start.status, 200, start.text);
    const ticket = start.body.ticket;
    const proof = start.body.original_proof;
    const newEmail = uniqueEmail('mfa-moved');
    assert.equal((await step('request-new', { ticket, new_email: newEmail, original_proof: proof })).status, 200);
    const code = (await lastEmail(server, newEmail, 'email_change_new')).metadata.code;
    const { email_token } = (await step('verify-new', { ticket, code, original_proof: proof })).body;
    const patched = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { email_token, ...sudo() },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.mfa_enabled, true);

    const token = (await lastEmail(server, user.email, 'email_change_revert')).metadata.token;
    const reverted = await request(server, 'POST', '/v1/auth/email-revert', {
      body: { token, password: 'reverted-mfa-pass' },
    });
    assert.equal(reverted.status, 200, reverted.text);
    assert.equal(reverted.body.user.mfa_enabled, false);
    assert.deepEqual(reverted.body.user.authenticator_types, []);
    const again = await login(server, user.email, 'reverted-mfa-pass');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.mfa, undefined);
    assert.match(again.body.token, /^flx_/);
  });
});
