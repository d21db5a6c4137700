import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { adminApplicationId, insertBearerToken } from '../support/admin.ts';
import { harness, registerUser, request } from '../support/client.ts';
import { assertFieldError, createBot, emailsTo, login, setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const DISABLED = 1n << 38n;
const SELF_DELETED = 1n << 36n;
const DELETED = 1n << 34n;

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await setClock(server, 0);
  await server?.close();
});
beforeEach(async () => {
  await setClock(server, 0);
});

async function dataExists(id: string) {
  const res = await harness(server, 'GET', `/users/${id}/data-exists`);
  assert.equal(res.status, 200);
  return res.body;
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('disable', () => {
  it('needs sudo (y⁰: no proof header), disables, revokes sessions, and a password login re-enables', async () => {
    const user = await registerUser(server);
    const bare = await request(server, 'POST', '/v1/users/@me/disable', { auth: user.token });
    assert.equal(bare.status, 403);
    assert.equal(bare.body.code, 'SUDO_MODE_REQUIRED');
    const res = await request(server, 'POST', '/v1/users/@me/disable', {
      auth: user.token,
      body: { password: user.password },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('x-service-sudo-mode-jwt'), null);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
    assert.notEqual(BigInt((await dataExists(user.id)).flags) & DISABLED, 0n);
    assert.equal((await dataExists(user.id)).sessions_count, 0);

    assertFieldError(await login(server, user.email, 'wrong-password'), 'password', 'INVALID_EMAIL_OR_PASSWORD');
    assert.notEqual(BigInt((await dataExists(user.id)).flags) & DISABLED, 0n);
    const back = await login(server, user.email, user.password);
    assert.equal(back.status, 200);
    assert.equal(BigInt((await dataExists(user.id)).flags) & DISABLED, 0n);
  });

  it('refuses bots', async () => {
    const bot = await createBot(server);
    const res = await request(server, 'POST', '/v1/users/@me/disable', { auth: bot.token });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCESS_DENIED');
  });
});

describe('self-deletion', () => {
  it('schedules deletion 36 s out in test mode and revokes sessions; a login cancels it', async () => {
    const user = await registerUser(server);
    const bare = await request(server, 'POST', '/v1/users/@me/delete', { auth: user.token });
    assert.equal(bare.body.code, 'SUDO_MODE_REQUIRED');
    const before = Date.now();
    const res = await request(server, 'POST', '/v1/users/@me/delete', {
      auth: user.token,
      body: { password: user.password },
    });
    assert.equal(res.status, 204);
    const state = await dataExists(user.id);
    assert.equal(state.has_self_deleted_flag, true);
    assert.equal(state.has_deleted_flag, false);
    const due = Date.parse(state.pending_deletion_at);
    assert.ok(due >= before + 35_000 && due <= Date.now() + 37_000, state.pending_deletion_at);
    assert.equal(state.sessions_count, 0);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);

    const back = await login(server, user.email, user.password);
    assert.equal(back.status, 200);
    const cancelled = await dataExists(user.id);
    assert.equal(cancelled.has_self_deleted_flag, false);
    assert.equal(cancelled.pending_deletion_at, null);
    await setClock(server, 40_000);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal((await dataExists(user.id)).has_deleted_flag, false);
  });

  it('finalises once the grace period ends: the account then counts as unknown', async () => {
    const user = await registerUser(server);
    const second = await login(server, user.email, user.password);
    assert.equal(second.status, 200);
    assert.equal(
      (
        await request(server, 'POST', '/v1/users/@me/delete', {
          auth: user.token,
          body: { password: user.password },
        })
      ).status,
      204,
    );
    await setClock(server, 37_000);
    const state = await waitFor(
      () => dataExists(user.id),
      (s) => s.has_deleted_flag === true,
    );
    assert.equal(state.user_exists, true);
    assert.equal(state.has_deleted_flag, true);
    assert.equal(state.email_cleared, true);
    assert.equal(state.password_cleared, true);
    assert.equal(state.sessions_count, 0);
    assert.equal(state.oauth_tokens_count, 0);
    assert.notEqual(BigInt(state.flags) & DELETED, 0n);
    assert.notEqual(BigInt(state.flags) & SELF_DELETED, 0n);

    assertFieldError(await login(server, user.email, user.password), 'email', 'INVALID_EMAIL_OR_PASSWORD');
    assert.equal((await request(server, 'POST', '/v1/auth/forgot', { body: { email: user.email } })).status, 204);
    assert.equal((await emailsTo(server, user.email, 'password_reset')).length, 0);
    // The address is free again.
    const reused = await request(server, 'POST', '/v1/auth/register', {
      body: { email: user.email, password: 'fresh-account-1' },
    });
    assert.equal(reused.status, 200, reused.text);
  });
});

describe('lifecycle harness', () => {
  it('unclaim clears email and password', async () => {
    const user = await registerUser(server);
    const res = await harness(server, 'POST', `/users/${user.id}/unclaim`);
    assert.deepEqual(res.body, { success: true });
    const state = await dataExists(user.id);
    assert.equal(state.email_cleared, true);
    assert.equal(state.password_cleared, true);
    assert.equal(state.user_exists, true);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.email, null);
  });

  it('premium stores the premium fields and the private user reports premium_type', async () => {
    const user = await registerUser(server);
    const before = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(before.body.premium_type, 0);
    const res = await harness(server, 'POST', `/users/${user.id}/premium`, {
      premium_type: 2,
      premium_until: '2030-01-01T00:00:00.000Z',
    });
    assert.deepEqual(res.body, { success: true });
    const [row] = await server.app.services.db.query<{ premium_type: number; premium_until: Date }>(
      'SELECT premium_type, premium_until FROM users WHERE id = $1',
      [user.id],
    );
    assert.equal(row?.premium_type, 2);
    assert.equal(row?.premium_until.toISOString(), '2030-01-01T00:00:00.000Z');
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.premium_type, 2);
    const bad = await harness(server, 'POST', `/users/${user.id}/premium`, { premium_type: 1, premium_until: 'soon' });
    assert.equal(bad.status, 400);
  });

  it('data-exists reports an unknown user as 404 and needs the harness token', async () => {
    const missing = await harness(server, 'GET', '/users/123456789012345678/data-exists');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_USER');
    const noToken = await request(server, 'GET', '/v1/test/users/1/data-exists');
    assert.equal(noToken.status, 403);
    assert.equal(noToken.body.code, 'TEST_HARNESS_FORBIDDEN');
    const user = await registerUser(server);
    const state = await dataExists(user.id);
    assert.deepEqual(Object.keys(state).sort(), [
      'email_cleared',
      'flags',
      'has_deleted_flag',
      'has_self_deleted_flag',
      'oauth_tokens_count',
      'password_cleared',
      'pending_deletion_at',
      'phone_cleared',
      'pinned_dms_count',
      'relationships_count',
      'saved_messages_count',
      'sessions_count',
      'user_exists',
    ]);
    assert.equal(state.sessions_count, 1);
    assert.equal(state.email_cleared, false);
  });

  it('data-exists counts the relationships, sessions and OAuth2 tokens the user still has', async () => {
    const user = await registerUser(server);
    const friend = await registerUser(server);
    const blocked = await registerUser(server);
    const empty = await dataExists(user.id);
    assert.equal(empty.relationships_count, 0);
    assert.equal(empty.oauth_tokens_count, 0);
    assert.equal(empty.pinned_dms_count, 0);
    assert.equal(empty.saved_messages_count, 0);

    const ask = await request(server, 'PUT', `/v1/users/@me/relationships/${friend.id}`, {
      auth: user.token,
      body: {},
    });
    assert.equal(ask.status, 200, ask.text);
    const block = await request(server, 'PUT', `/v1/users/@me/relationships/${blocked.id}`, {
      auth: user.token,
      body: { type: 2 },
    });
    assert.equal(block.status, 200, block.text);
    const second = await login(server, user.email, user.password);
    assert.equal(second.status, 200, second.text);
    const applicationId = adminApplicationId(server);
    await insertBearerToken(server, user.id, applicationId);
    await insertBearerToken(server, user.id, applicationId);

    const state = await dataExists(user.id);
    // The user's own list: the outgoing request and the block.
    assert.equal(state.relationships_count, 2);
    assert.equal(state.sessions_count, 2);
    assert.equal(state.oauth_tokens_count, 2);
    // The friend sees one incoming request; the blocked account sees nothing.
    assert.equal((await dataExists(friend.id)).relationships_count, 1);
    assert.equal((await dataExists(blocked.id)).relationships_count, 0);
  });
});
