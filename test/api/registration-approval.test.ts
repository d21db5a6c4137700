import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { adminCall, adminUser } from '../support/admin.ts';
import { harness, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Approval mode: a pending account gets no session by any way in until an administrator approves it. */

const PENDING_MANUAL_VERIFICATION = 1n << 50n;
let server: TestServer;
let admin: TestUser;

before(async () => {
  server = await startTestServer();
  admin = await adminUser(server, ['admin:authenticate', 'instance:config:update', 'user:update:flags']);
  const mode = await adminCall(server, 'POST', '/instance-config/update', admin.token, {
    registration: { mode: 'approval' },
  });
  assert.equal(mode.status, 200, mode.text);
});
after(() => server?.close());

it('registration returns no token, and login with the same password is refused until approval', async () => {
  const email = uniqueEmail('pending');
  const password = 'a pending password';
  const registered = await request(server, 'POST', '/v1/auth/register', {
    body: { email, password, username: 'pending' },
  });
  assert.equal(registered.status, 200, registered.text);
  assert.deepEqual(Object.keys(registered.body).sort(), ['registration_pending_approval', 'user_id']);
  const userId = registered.body.user_id as string;

  const refused = await request(server, 'POST', '/v1/auth/login', { body: { email, password } });
  assert.equal(refused.status, 403, refused.text);
  assert.deepEqual(refused.body, { code: 'ACCOUNT_PENDING_APPROVAL', message: 'This account is waiting for approval' });

  const wrong = await request(server, 'POST', '/v1/auth/login', { body: { email, password: 'not the password' } });
  assert.equal(wrong.status, 400, 'a wrong password still says only that');
  assert.equal(wrong.body.code, 'INVALID_FORM_BODY');

  const approved = await adminCall(server, 'POST', '/users/update-flags', admin.token, {
    user_id: userId,
    remove_flags: PENDING_MANUAL_VERIFICATION.toString(),
  });
  assert.equal(approved.status, 200, approved.text);

  const login = await request(server, 'POST', '/v1/auth/login', { body: { email, password } });
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.user_id, userId);
  const me = await request(server, 'GET', '/v1/users/@me', { auth: login.body.token });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.id, userId);
});

it('a pending account cannot sign in through a password reset either', async () => {
  const email = uniqueEmail('pending-reset');
  const registered = await request(server, 'POST', '/v1/auth/register', {
    body: { email, password: 'a pending password', username: 'pendingreset' },
  });
  assert.equal(registered.status, 200, registered.text);
  const forgot = await request(server, 'POST', '/v1/auth/forgot', { body: { email } });
  assert.equal(forgot.status, 204, forgot.text);
  const mails = await harness(server, 'GET', `/emails?recipient=${encodeURIComponent(email)}`);
  const reset = (mails.body.emails as { type: string; metadata: { token: string } }[]).find(
    (mail) => mail.type === 'password_reset',
  );
  assert.ok(reset, mails.text);
  const res = await request(server, 'POST', '/v1/auth/reset', {
    body: { token: reset.metadata.token, password: 'another pending password' },
  });
  assert.equal(res.status, 403, res.text);
  assert.equal(res.body.code, 'ACCOUNT_PENDING_APPROVAL');
});
