import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { lastEmail, login } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

const BITS = [
  { name: 'REQUIRE_VERIFIED_EMAIL', bit: 1 << 0, email: true, satisfiedByVerified: true },
  { name: 'REQUIRE_REVERIFIED_EMAIL', bit: 1 << 1, email: true, satisfiedByVerified: false },
  { name: 'REQUIRE_VERIFIED_PHONE', bit: 1 << 2, email: false, satisfiedByVerified: false },
  { name: 'REQUIRE_REVERIFIED_PHONE', bit: 1 << 3, email: false, satisfiedByVerified: false },
  { name: 'REQUIRE_VERIFIED_EMAIL_OR_VERIFIED_PHONE', bit: 1 << 4, email: true, satisfiedByVerified: true },
  { name: 'REQUIRE_REVERIFIED_EMAIL_OR_VERIFIED_PHONE', bit: 1 << 5, email: true, satisfiedByVerified: false },
  { name: 'REQUIRE_VERIFIED_EMAIL_OR_REVERIFIED_PHONE', bit: 1 << 6, email: true, satisfiedByVerified: true },
  { name: 'REQUIRE_REVERIFIED_EMAIL_OR_REVERIFIED_PHONE', bit: 1 << 7, email: true, satisfiedByVerified: false },
  { name: 'REQUIRE_INBOUND_PHONE_VERIFICATION', bit: 1 << 8, email: false, satisfiedByVerified: false },
] as const;

async function setSuspicious(user: TestUser, flags: number): Promise<void> {
  const res = await harness(server, 'POST', `/users/${user.id}/security-flags`, { suspicious_activity_flags: flags });
  assert.equal(res.status, 200);
  assert.equal(res.body.suspicious_activity_flags, flags);
}

async function assertBlocked(user: TestUser, expected: number): Promise<void> {
  const res = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
  assert.equal(res.status, 403, res.text);
  assert.equal(res.body.code, 'ACCOUNT_SUSPICIOUS_ACTIVITY');
  assert.deepEqual(res.body.data, { suspicious_activity_flags: expected });
}

async function assertOpen(user: TestUser): Promise<void> {
  const res = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
  assert.equal(res.status, 200, res.text);
}

async function verifyLatest(user: TestUser): Promise<void> {
  const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
  const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
  assert.equal(res.status, 204, res.text);
}

/** Every `+S` route of docs/accounts.md#suspicious-activity-gate that this server has must let the flagged account through. */
async function assertAdmitted(user: TestUser): Promise<void> {
  const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: user.token });
  assert.equal(sessions.status, 200, sessions.text);
  const logoutOthers = await request(server, 'POST', '/v1/auth/sessions/logout', {
    auth: user.token,
    body: { session_id_hashes: [], password: user.password },
  });
  assert.equal(logoutOthers.status, 204, logoutOthers.text);
  const resend = await request(server, 'POST', '/v1/auth/verify/resend', { auth: user.token });
  assert.equal(resend.status, 204, resend.text);
  const start = await request(server, 'POST', '/v1/users/@me/email-change/start', {
    auth: user.token,
    body: { password: user.password },
  });
  assert.equal(start.status, 200, start.text);
  // Routes owned by other modules: whatever they answer, it is not the suspicious-activity gate.
  for (const path of ['/v1/users/@me/applications', '/v1/oauth2/applications/@me', '/v1/oauth2/@me/authorizations']) {
    const res = await request(server, 'GET', path, { auth: user.token });
    assert.notEqual(res.body?.code, 'ACCOUNT_SUSPICIOUS_ACTIVITY', `${path}: ${res.text}`);
  }
  // Logout last, on a second session, so the caller keeps its own.
  const extra = await login(server, user.email, user.password);
  assert.equal(extra.status, 200);
  const logout = await request(server, 'POST', '/v1/auth/logout', { auth: extra.body.token });
  assert.equal(logout.status, 204);
}

describe('suspicious-activity gate, one bit at a time', () => {
  for (const { name, bit, email } of BITS) {
    it(`${name} (${bit}): blocked, admitted on +S routes, unblocked once met`, async () => {
      const user = await registerUser(server);
      await setSuspicious(user, bit);
      await assertBlocked(user, bit);
      await assertAdmitted(user);
      await verifyLatest(user);
      if (email) {
        await assertOpen(user);
      } else {
        // Verifying the email meets no phone requirement; only the harness clears phone bits.
        await assertBlocked(user, bit);
        await setSuspicious(user, 0);
        await assertOpen(user);
      }
    });
  }
});

describe('suspicious-activity gate on a verified account', () => {
  it('drops the bits a verified email already meets and keeps the re-verification ones', async () => {
    const user = await registerUser(server);
    await verifyLatest(user);
    for (const { bit, satisfiedByVerified } of BITS) {
      await setSuspicious(user, bit);
      if (satisfiedByVerified) await assertOpen(user);
      else await assertBlocked(user, bit);
    }
  });

  it('reports only the outstanding bits, and re-verifying clears every email requirement', async () => {
    const user = await registerUser(server);
    await verifyLatest(user);
    const all = BITS.reduce((acc, b) => acc | b.bit, 0);
    await setSuspicious(user, all);
    const outstanding = BITS.filter((b) => !b.satisfiedByVerified).reduce((acc, b) => acc | b.bit, 0);
    await assertBlocked(user, outstanding);
    const resend = await request(server, 'POST', '/v1/auth/verify/resend', { auth: user.token });
    assert.equal(resend.status, 204);
    await verifyLatest(user);
    const phoneOnly = BITS.filter((b) => !b.email).reduce((acc, b) => acc | b.bit, 0);
    await assertBlocked(user, phoneOnly);
    await setSuspicious(user, 0);
    await assertOpen(user);
  });

  it('blocks PATCH /users/@me too', async () => {
    const user = await registerUser(server);
    await setSuspicious(user, 1 << 2);
    const res = await request(server, 'PATCH', '/v1/users/@me', { auth: user.token, body: { bio: 'hi' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCOUNT_SUSPICIOUS_ACTIVITY');
    assert.deepEqual(res.body.data, { suspicious_activity_flags: 4 });
  });
});
