import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, adminUser } from '../support/admin.ts';
import { as, newGuild, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { enableTotp, totpCode } from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * `invite_code` at registration and login (docs/accounts.md#joining-a-guild-at-sign-up-or-sign-in-invite_code): the
 * account joins the invite's guild. Neither route has an invite error, so a code that names no live invite (or a guild the account is banned from)
 * is ignored and the sign-in answers as without it.
 */
let server: TestServer;
let owner: TestUser;
let guild: any;

async function newInvite(body: Record<string, unknown> = {}): Promise<any> {
  return ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true, ...body }));
}

async function guildsOf(token: string): Promise<string[]> {
  return (await ok(as(server, { token }, 'GET', '/users/@me/guilds'))).map((g: { id: string }) => g.id);
}

function register(body: Record<string, unknown>) {
  return request(server, 'POST', '/v1/auth/register', {
    body: { email: uniqueEmail(), password: 'a sturdy passphrase', ...body },
  });
}

function login(user: Pick<TestUser, 'email' | 'password'>, extra: Record<string, unknown> = {}) {
  return request(server, 'POST', '/v1/auth/login', { body: { email: user.email, password: user.password, ...extra } });
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  guild = await newGuild(server, owner, 'Front door');
});
after(() => server?.close());

describe('invite_code at registration', () => {
  it("joins the invite's guild, counting a use and announcing the join", async () => {
    const invite = await newInvite();
    const res = await register({ invite_code: invite.code });
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.body.token, 'string');
    const userId = res.body.user_id;
    assert.deepEqual(await guildsOf(res.body.token), [guild.id]);
    const member = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/members/${userId}`));
    assert.equal(member.user.id, userId);
    const listed = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/invites`))).find(
      (i: any) => i.code === invite.code,
    );
    assert.equal(listed.uses, 1);
    const [welcome] = await ok(as(server, owner, 'GET', `/channels/${guild.system_channel_id}/messages?limit=1`));
    assert.equal(welcome.type, 7);
    assert.equal(welcome.author.id, userId);
  });

  it('ignores codes that name no live invite: unknown, malformed, expired, used up', async () => {
    const usedUp = await newInvite({ max_uses: 1 });
    await ok(as(server, await registerUser(server), 'POST', `/invites/${usedUp.code}`));
    const expiring = await newInvite({ max_age: 1 });
    await ok(request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 2000 } }));
    try {
      for (const code of ['zzzzzzzz', 'not a code!', '', usedUp.code, expiring.code]) {
        const res = await register({ invite_code: code });
        assert.equal(res.status, 200, `${code}: ${res.text}`);
        assert.equal(typeof res.body.token, 'string');
        assert.deepEqual(await guildsOf(res.body.token), [], code);
      }
    } finally {
      await ok(request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 0 } }));
    }
  });

  it('refuses a code longer than 64 characters like any malformed field', async () => {
    const res = await register({ invite_code: 'a'.repeat(65) });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(
      res.body.errors.map((e: any) => e.path),
      ['invite_code'],
    );
  });
});

describe('invite_code at login', () => {
  it('joins on a successful login, and not on a failed one', async () => {
    const user = await registerUser(server);
    const invite = await newInvite();
    const wrong = await login({ email: user.email, password: 'not the password' }, { invite_code: invite.code });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, 'INVALID_FORM_BODY');
    assert.equal((await as(server, owner, 'GET', `/guilds/${guild.id}/members/${user.id}`)).status, 404);
    const res = await login(user, { invite_code: invite.code });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await guildsOf(res.body.token), [guild.id]);
    // Logging in again with the same code is a no-op: still one membership, one use.
    await ok(login(user, { invite_code: invite.code }));
    const listed = (await ok(as(server, owner, 'GET', `/guilds/${guild.id}/invites`))).find(
      (i: any) => i.code === invite.code,
    );
    assert.equal(listed.uses, 1);
  });

  it('ignores an unknown code, and a guild the account is banned from', async () => {
    const user = await registerUser(server);
    const unknown = await login(user, { invite_code: 'zzzzzzzz' });
    assert.equal(unknown.status, 200, unknown.text);
    assert.deepEqual(await guildsOf(unknown.body.token), []);
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/bans/${user.id}`, {}), 204);
    const invite = await newInvite();
    const banned = await login(user, { invite_code: invite.code });
    assert.equal(banned.status, 200, banned.text);
    assert.deepEqual(await guildsOf(banned.body.token), []);
  });

  it('keeps the code through the second factor and joins when that step succeeds', async () => {
    const user = await registerUser(server);
    const totp = await enableTotp(server, user.token);
    const invite = await newInvite();
    const first = await login(user, { invite_code: invite.code });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.mfa, true);
    assert.equal((await as(server, owner, 'GET', `/guilds/${guild.id}/members/${user.id}`)).status, 404);
    const second = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
      body: { ticket: first.body.ticket, code: totpCode(totp.secret) },
    });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(await guildsOf(second.body.token), [guild.id]);
  });
});

describe('invite_code while registrations await approval', () => {
  let approval: TestServer;
  let host: TestUser;
  let space: any;
  let code: string;
  before(async () => {
    approval = await startTestServer();
    // The host signs up before approval mode is switched on.
    host = await registerUser(approval);
    space = await ok(as(approval, host, 'POST', '/guilds', { name: 'waiting room' }));
    code = (await ok(as(approval, host, 'POST', `/channels/${space.system_channel_id}/invites`, {}))).code;
    const admin = await adminUser(approval, ['admin:authenticate', 'instance:config:update']);
    const mode = await adminCall(approval, 'POST', '/instance-config/update', admin.token, {
      registration: { mode: 'approval' },
    });
    assert.equal(mode.status, 200, mode.text);
  });
  after(() => approval?.close());

  it('joins nothing for an account that is not let in yet', async () => {
    const res = await request(approval, 'POST', '/v1/auth/register', {
      body: { email: uniqueEmail(), password: 'a sturdy passphrase', invite_code: code },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.registration_pending_approval, true);
    const members = await ok(as(approval, host, 'GET', `/guilds/${space.id}/members?limit=10`));
    assert.deepEqual(
      members.map((m: any) => m.user.id),
      [host.id],
    );
  });
});
