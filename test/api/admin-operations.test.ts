import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { adminCall, adminUser, createKey, setAcls } from '../support/admin.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let root: TestUser;

before(async () => {
  // Loopback is a trusted proxy here so tests can speak from other client addresses via X-Forwarded-For.
  server = await startTestServer({ HEARTH_TRUSTED_PROXIES: '127.0.0.1/32,::1/128' });
  root = await adminUser(server, ['*']);
});
after(async () => {
  await server?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('Admin API keys', () => {
  it('shows the key once, stores only its digest, and authenticates it as its creator', async () => {
    const res = await adminCall(server, 'POST', '/api-keys', root.token, {
      name: 'ops',
      acls: ['user:lookup'],
      expires_in_days: 30,
      password: root.password,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['acls', 'created_at', 'expires_at', 'key', 'key_id', 'name']);
    assert.match(res.body.key, new RegExp(`^fa_${res.body.key_id}_[A-Za-z0-9]{32}$`));
    assert.equal(res.body.name, 'ops');
    assert.deepEqual(res.body.acls, ['user:lookup']);
    assert.equal(
      Date.parse(res.body.expires_at) - Date.parse(res.body.created_at),
      30 * 86_400_000,
      'expires 30 days after creation',
    );
    const [row] = await server.app.services.db.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM admin_api_keys WHERE key_id = $1',
      [res.body.key_id],
    );
    assert.equal(row?.secret_hash, digest(res.body.key));

    const me = await adminCall(server, 'GET', '/users/me', `Admin ${res.body.key}`);
    assert.equal(me.status, 200);
    assert.equal(me.body.user.id, root.id);
    assert.deepEqual(me.body.acls, ['user:lookup']);

    const list = await adminCall(server, 'GET', '/api-keys', root.token);
    const listed = list.body.find((k: any) => k.key_id === res.body.key_id);
    assert.deepEqual(Object.keys(listed).sort(), [
      'acls',
      'created_at',
      'created_by_user_id',
      'expires_at',
      'key_id',
      'last_used_at',
      'name',
    ]);
    assert.equal(listed.created_by_user_id, root.id);
    assert.match(listed.last_used_at, ISO, 'first use sets last_used_at');
    assert.ok(!JSON.stringify(list.body).includes(res.body.key.slice(-32)), 'the secret is never listed');
  });

  it('requires sudo mode to create a key', async () => {
    const res = await adminCall(server, 'POST', '/api-keys', root.token, { name: 'x', acls: ['user:lookup'] });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'SUDO_MODE_REQUIRED');
  });

  it('refuses key ACLs the creator does not hold, naming the first one', async () => {
    const limited = await adminUser(server, ['admin:authenticate', 'admin_api_key:manage', 'user:lookup']);
    const res = await adminCall(server, 'POST', '/api-keys', limited.token, {
      name: 'too much',
      acls: ['user:lookup', 'ban:ip:add'],
      password: limited.password,
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACL');
    assert.equal(res.body.required_acl, 'ban:ip:add');
    const star = await adminCall(server, 'POST', '/api-keys', limited.token, {
      name: 'wildcard',
      acls: ['*'],
      password: limited.password,
    });
    assert.equal(star.status, 403);
    assert.equal(star.body.required_acl, '*');
    const ok = await adminCall(server, 'POST', '/api-keys', limited.token, {
      name: 'fits',
      acls: ['user:lookup'],
      password: limited.password,
    });
    assert.equal(ok.status, 200);
  });

  it('does not let a key mint a key broader than itself', async () => {
    const { key } = await createKey(server, root, ['admin_api_key:manage']);
    const res = await adminCall(server, 'POST', '/api-keys', `Admin ${key}`, {
      name: 'escalate',
      acls: ['user:lookup'],
      password: root.password,
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACL');
    assert.equal(res.body.required_acl, 'user:lookup');
  });

  it('rejects unknown ACL names and out-of-range expiry with INVALID_FORM_BODY', async () => {
    const res = await adminCall(server, 'POST', '/api-keys', root.token, {
      name: '',
      acls: ['user:lookup', 'root:everything'],
      expires_in_days: 366,
      password: root.password,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    const byPath = Object.fromEntries(res.body.errors.map((e: any) => [e.path, e.code]));
    assert.equal(byPath['acls.1'], 'UNKNOWN_ACL');
    assert.equal(byPath.expires_in_days, 'CONTENT_EXCEEDS_MAX_LENGTH');
    assert.ok(byPath.name);
  });

  it("hides other owners' keys and revoked or expired keys behind ADMIN_API_KEY_NOT_FOUND", async () => {
    const other = await adminUser(server, ['*']);
    const theirs = await createKey(server, other, ['user:lookup']);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await adminCall(server, method, `/api-keys/${theirs.key_id}`, root.token, body);
      assert.equal(res.status, 404, method);
      assert.equal(res.body.code, 'ADMIN_API_KEY_NOT_FOUND');
    }
    const bad = await adminCall(server, 'GET', '/api-keys/not-a-number', root.token);
    assert.equal(bad.body.code, 'ADMIN_API_KEY_NOT_FOUND');

    const expiring = await createKey(server, root, ['user:lookup'], { expires_in_days: 1 });
    await harness(server, 'POST', '/clock', { offset_ms: 86_400_000 + 1000 });
    try {
      const get = await adminCall(server, 'GET', `/api-keys/${expiring.key_id}`, root.token);
      assert.equal(get.status, 404);
      assert.equal(get.body.code, 'ADMIN_API_KEY_NOT_FOUND');
      const use = await adminCall(server, 'GET', '/users/me', `Admin ${expiring.key}`);
      assert.equal(use.status, 401);
      assert.equal(use.body.code, 'UNAUTHORIZED');
      const list = await adminCall(server, 'GET', '/api-keys', root.token);
      assert.ok(!list.body.some((k: any) => k.key_id === expiring.key_id));
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
  });

  it('narrows a key at once on PATCH and kills it on DELETE', async () => {
    const { key, key_id } = await createKey(server, root, ['user:lookup', 'ban:ip:check']);
    const auth = `Admin ${key}`;
    assert.equal((await adminCall(server, 'POST', '/bans/ip/list', auth)).status, 200);
    const patched = await adminCall(server, 'PATCH', `/api-keys/${key_id}`, root.token, {
      name: 'narrow',
      acls: ['user:lookup'],
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'narrow');
    assert.deepEqual(patched.body.acls, ['user:lookup']);
    const denied = await adminCall(server, 'POST', '/bans/ip/list', auth);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_ACL');

    const del = await adminCall(server, 'DELETE', `/api-keys/${key_id}`, root.token);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { success: true });
    const dead = await adminCall(server, 'GET', '/users/me', auth);
    assert.equal(dead.status, 401);
    assert.equal(dead.body.code, 'UNAUTHORIZED');
    const again = await adminCall(server, 'DELETE', `/api-keys/${key_id}`, root.token);
    assert.equal(again.body.code, 'ADMIN_API_KEY_NOT_FOUND');
  });
});

describe('Admin user operations', () => {
  it('looks users up by id, email, name#0001 and username, in the Admin user shape', async () => {
    const target = await registerUser(server);
    for (const query of [target.id, target.email.toUpperCase(), `${target.username}#0001`, target.username]) {
      const res = await adminCall(server, 'POST', '/users/lookup', root.token, { query });
      assert.equal(res.status, 200, query);
      assert.equal(res.body.users.length, 1, query);
      assert.equal(res.body.users[0].id, target.id);
    }
    const none = await adminCall(server, 'POST', '/users/lookup', root.token, { query: `${target.username}#1234` });
    assert.deepEqual(none.body, { users: [] });
    const [user] = (await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id })).body.users;
    assert.deepEqual(Object.keys(user).sort(), [
      'acls',
      'authenticator_types',
      'avatar',
      'avatar_color',
      'discriminator',
      'email',
      'email_verified',
      'flags',
      'global_name',
      'id',
      'last_active_at',
      'last_active_ip',
      'pending_deletion_at',
      'suspicious_activity_flags',
      'temp_banned_until',
      'username',
    ]);
    assert.equal(user.flags, '0');
    assert.equal(user.email, target.email);
    assert.equal(user.discriminator, '0001');
  });

  it('sets and clears flags as decimal strings, including bits above 2^53', async () => {
    const target = await registerUser(server);
    const high = (1n << 53n) | 1n; // APP_STORE_REVIEWER | STAFF
    const res = await adminCall(server, 'POST', '/users/update-flags', root.token, {
      user_id: target.id,
      add_flags: high.toString(),
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.flags, high.toString());
    const cleared = await adminCall(server, 'POST', '/users/update-flags', root.token, {
      user_id: target.id,
      remove_flags: 1,
    });
    assert.equal(cleared.body.user.flags, (1n << 53n).toString());
    const unknown = await adminCall(server, 'POST', '/users/update-flags', root.token, {
      user_id: target.id,
      add_flags: String(1n << 60n),
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, 'add_flags');
    const missing = await adminCall(server, 'POST', '/users/update-flags', root.token, {
      user_id: '1',
      add_flags: '1',
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_USER');
    const badId = await adminCall(server, 'POST', '/users/update-flags', root.token, { user_id: 'abc' });
    assert.equal(badId.status, 400);
    assert.equal(badId.body.errors[0].code, 'INVALID_SNOWFLAKE_FORMAT');
  });

  it('updates suspicious-activity flags, which then gate the account', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/update-suspicious-activity-flags', root.token, {
      user_id: target.id,
      flags: 1 << 2,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.suspicious_activity_flags, 4);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: target.token });
    assert.equal(me.status, 403);
    assert.equal(me.body.code, 'ACCOUNT_SUSPICIOUS_ACTIVITY');
  });

  it('sets ACLs only within what the caller holds, never on the own account', async () => {
    const target = await registerUser(server);
    const setter = await adminUser(server, ['admin:authenticate', 'acl:set:user', 'user:lookup']);
    const own = await adminCall(server, 'POST', '/users/set-acls', setter.token, {
      user_id: setter.id,
      acls: ['user:lookup'],
    });
    assert.equal(own.status, 403);
    assert.equal(own.body.code, 'ACCESS_DENIED');
    const unknown = await adminCall(server, 'POST', '/users/set-acls', setter.token, {
      user_id: target.id,
      acls: ['user:lookup', 'made:up'],
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, 'acls.1');
    assert.equal(unknown.body.errors[0].code, 'UNKNOWN_ACL');
    const beyond = await adminCall(server, 'POST', '/users/set-acls', setter.token, {
      user_id: target.id,
      acls: ['ban:ip:add'],
    });
    assert.equal(beyond.status, 403);
    assert.equal(beyond.body.code, 'MISSING_ACL');
    assert.equal(beyond.body.required_acl, 'ban:ip:add');
    const ok = await adminCall(server, 'POST', '/users/set-acls', setter.token, {
      user_id: target.id,
      acls: ['admin:authenticate', 'user:lookup'],
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { success: true });
    // The grant applies to the target's next request.
    const me = await adminCall(server, 'GET', '/users/me', target.token);
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.acls, ['admin:authenticate', 'user:lookup']);
    // Removing an ACL the caller does not hold is refused too.
    await setAcls(server, target.id, ['admin:authenticate', 'ban:ip:add']);
    const strip = await adminCall(server, 'POST', '/users/set-acls', setter.token, { user_id: target.id, acls: [] });
    assert.equal(strip.status, 403);
    assert.equal(strip.body.required_acl, 'ban:ip:add');
  });

  it('temp-bans (sessions revoked, login refused) and unbans', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/temp-ban', root.token, {
      user_id: target.id,
      duration_hours: 2,
      reason: 'spam',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    const old = await request(server, 'GET', '/v1/users/@me', { auth: target.token });
    assert.equal(old.status, 401);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: target.email, password: target.password },
    });
    assert.equal(login.status, 403);
    assert.equal(login.body.code, 'ACCOUNT_SUSPENDED_TEMPORARILY');
    const [viewed] = (await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id })).body.users;
    assert.match(viewed.temp_banned_until, ISO);

    assert.equal((await adminCall(server, 'POST', '/users/unban', root.token, { user_id: target.id })).status, 200);
    const again = await request(server, 'POST', '/v1/auth/login', {
      body: { email: target.email, password: target.password },
    });
    assert.equal(again.status, 200);
    assert.ok(again.body.token);
  });

  it('disables for suspicious activity: sessions revoked, login refused permanently', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/disable-suspicious', root.token, {
      user_id: target.id,
      flags: 1,
    });
    assert.equal(res.status, 200);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: target.token })).status, 401);
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: target.email, password: target.password },
    });
    assert.equal(login.status, 403);
    assert.equal(login.body.code, 'ACCOUNT_SUSPENDED_PERMANENTLY');
    // Re-enabled by clearing the flag.
    const enabled = await adminCall(server, 'POST', '/users/update-flags', root.token, {
      user_id: target.id,
      remove_flags: String(1n << 35n),
    });
    assert.equal(enabled.status, 200);
    const relogin = await request(server, 'POST', '/v1/auth/login', {
      body: { email: target.email, password: target.password },
    });
    assert.equal(relogin.status, 200);
  });

  it('schedules and cancels a deletion', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/schedule-deletion', root.token, {
      user_id: target.id,
      reason_code: 3,
      days_until_deletion: 7,
    });
    assert.equal(res.status, 200);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: target.token })).status, 401);
    let [viewed] = (await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id })).body.users;
    assert.match(viewed.pending_deletion_at, ISO);
    const login = { body: { email: target.email, password: target.password } };
    const refused = await request(server, 'POST', '/v1/auth/login', login);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'ACCOUNT_SUSPENDED_PERMANENTLY');
    assert.equal(
      (await adminCall(server, 'POST', '/users/cancel-deletion', root.token, { user_id: target.id })).status,
      200,
    );
    assert.equal((await request(server, 'POST', '/v1/auth/login', login)).status, 200);
    [viewed] = (await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id })).body.users;
    assert.equal(viewed.pending_deletion_at, null);
  });

  it('finalises an operator-scheduled deletion once it is due', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/schedule-deletion', root.token, {
      user_id: target.id,
      reason_code: 3,
      days_until_deletion: 1,
    });
    assert.equal(res.status, 200);
    await harness(server, 'POST', '/clock', { offset_ms: 2 * 86_400_000 });
    try {
      let data: any;
      for (let i = 0; i < 40; i++) {
        data = (await harness(server, 'GET', `/users/${target.id}/data-exists`)).body;
        if (data.has_deleted_flag) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(data.has_deleted_flag, true);
      assert.equal(data.email_cleared, true);
      assert.equal(data.password_cleared, true);
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
  });

  it('shows when a session was last used, though last-used times are written in batches', async () => {
    const target = await registerUser(server);
    const threeHours = 3 * 3600_000;
    try {
      await harness(server, 'POST', '/clock', { offset_ms: threeHours });
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: target.token })).status, 200);
      const res = await adminCall(server, 'POST', '/users/list-sessions', root.token, { user_id: target.id });
      assert.equal(res.status, 200);
      const [session] = res.body.sessions;
      const usedAfterCreation = Date.parse(session.last_used_at) - Date.parse(session.created_at);
      assert.ok(usedAfterCreation >= threeHours - 60_000, `last used ${usedAfterCreation} ms after creation`);
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
  });

  it('lists and terminates sessions', async () => {
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/list-sessions', root.token, { user_id: target.id });
    assert.equal(res.status, 200);
    assert.equal(res.body.sessions.length, 1);
    assert.equal(res.body.sessions[0].id_hash, digest(target.token));
    assert.match(res.body.sessions[0].last_used_at, ISO);
    const end = await adminCall(server, 'POST', '/users/terminate-sessions', root.token, { user_id: target.id });
    assert.deepEqual(end.body, { success: true });
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: target.token })).status, 401);
    const after = await adminCall(server, 'POST', '/users/list-sessions', root.token, { user_id: target.id });
    assert.deepEqual(after.body, { sessions: [] });
  });

  it('disables MFA of an account', async () => {
    const target = await registerUser(server);
    const { db } = server.app.services;
    await db.query('INSERT INTO mfa_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [
      target.id,
      'JBSWY3DPEHPK3PXP',
    ]);
    const before = await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id });
    assert.deepEqual(before.body.users[0].authenticator_types, [0]);
    const res = await adminCall(server, 'POST', '/users/disable-mfa', root.token, { user_id: target.id });
    assert.deepEqual(res.body, { success: true });
    const after = await adminCall(server, 'POST', '/users/lookup', root.token, { query: target.id });
    assert.deepEqual(after.body.users[0].authenticator_types, []);
  });
});

describe('Admin IP bans', () => {
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('bans a CIDR range permanently with GLOBAL_IP_BANNED, and lifts it', async () => {
    const add = await adminCall(server, 'POST', '/bans/ip/add', root.token, { ip: '203.0.113.77/24' });
    assert.deepEqual(add.body, { success: true });
    const res = await request(server, 'GET', '/.well-known/service', { headers: from('203.0.113.9') });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      code: 'GLOBAL_IP_BANNED',
      message: res.body.message,
      ip_address: '203.0.113.9',
      appeal_email: null,
      appeals_supported: false,
      ban_kind: 'permanent',
      expires_at: null,
    });
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from('203.0.114.9') })).status, 200);

    const check = await adminCall(server, 'POST', '/bans/ip/check', root.token, { ip: '203.0.113.200' });
    assert.deepEqual(check.body, { banned: true, ban: { ip: '203.0.113.0/24', kind: 'manual', expires_at: null } });
    const list = await adminCall(server, 'POST', '/bans/ip/list', root.token);
    assert.ok(list.body.bans.some((b: any) => b.ip === '203.0.113.0/24' && b.kind === 'manual'));

    const remove = await adminCall(server, 'POST', '/bans/ip/remove', root.token, { ip: '203.0.113.0/24' });
    assert.deepEqual(remove.body, { success: true });
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from('203.0.113.9') })).status, 200);
    const gone = await adminCall(server, 'POST', '/bans/ip/check', root.token, { ip: '203.0.113.9' });
    assert.deepEqual(gone.body, { banned: false });
  });

  it('expires a temporary manual ban, answering GLOBAL_IP_TEMPORARILY_BANNED until then', async () => {
    await adminCall(server, 'POST', '/bans/ip/add', root.token, { ip: '2001:db8::1', expires_in_seconds: 120 });
    const res = await request(server, 'GET', '/.well-known/service', { headers: from('2001:db8::1') });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'GLOBAL_IP_TEMPORARILY_BANNED');
    assert.equal(res.body.ban_kind, 'temporary');
    assert.match(res.body.expires_at, ISO);
    assert.ok(Number(res.headers.get('retry-after')) >= 119);
    await harness(server, 'POST', '/clock', { offset_ms: 121_000 });
    try {
      assert.equal(
        (await request(server, 'GET', '/.well-known/service', { headers: from('2001:db8::1') })).status,
        200,
      );
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
  });

  it('persists manual bans: a restart loads them from the database', async () => {
    await adminCall(server, 'POST', '/bans/ip/add', root.token, { ip: '192.0.2.1' });
    await server.app.services.manualIpBans.reload();
    assert.equal((await request(server, 'GET', '/v1/_health', { headers: from('192.0.2.1') })).status, 200);
    assert.equal((await request(server, 'GET', '/.well-known/service', { headers: from('192.0.2.1') })).status, 403);
    const [row] = await server.app.services.db.query('SELECT ip, expires_at FROM ip_bans WHERE ip = $1', ['192.0.2.1']);
    assert.deepEqual(row, { ip: '192.0.2.1', expires_at: null });
    await adminCall(server, 'POST', '/bans/ip/remove', root.token, { ip: '192.0.2.1' });
  });

  it('rejects what is not an address or range', async () => {
    for (const ip of ['example.com', '10.0.0.0/33', '300.1.1.1', '']) {
      const res = await adminCall(server, 'POST', '/bans/ip/add', root.token, { ip });
      assert.equal(res.status, 400, ip);
      assert.equal(res.body.errors[0].path, 'ip');
    }
  });
});

describe('Admin instance settings', () => {
  it('reads the whole configuration with the SSO secret write-only', async () => {
    const res = await adminCall(server, 'POST', '/instance-config/get', root.token);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['captcha', 'email', 'ip_authorization', 'registration', 'sso']);
    assert.deepEqual(res.body.registration, { mode: 'open' });
    assert.equal(res.body.sso.client_secret_set, false);
    assert.equal('client_secret' in res.body.sso, false);
    assert.equal(res.body.sso.redirect_uri, `${server.url}/auth/sso/callback`);
    const discovery = await request(server, 'GET', '/.well-known/service');
    assert.deepEqual(res.body.email, {
      enabled: discovery.body.features.emails_enabled,
      delivery: { status: 'ok', failing_since: null, last_error: null, failed_deliveries: 0 },
    });
    assert.equal(discovery.body.features.email_delivery, 'ok');
    assert.deepEqual(res.body.captcha, discovery.body.captcha);
  });

  it('merges a partial update, closes registration, and keeps the SSO secret out of reads', async () => {
    const res = await adminCall(server, 'POST', '/instance-config/update', root.token, {
      registration: { mode: 'closed' },
      sso: { client_id: 'hearth', client_secret: 's3cret', display_name: 'Corp' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.registration, { mode: 'closed' });
    assert.equal(res.body.sso.client_id, 'hearth');
    assert.equal(res.body.sso.display_name, 'Corp');
    assert.equal(res.body.sso.client_secret_set, true);
    assert.ok(!JSON.stringify(res.body).includes('s3cret'));
    const register = await request(server, 'POST', '/v1/auth/register', {
      body: { email: 'closed@example.test', password: 'a-long-password', username: 'closed' },
    });
    assert.equal(register.status, 403);
    assert.equal(register.body.code, 'REGISTRATION_CLOSED');
    const reopen = await adminCall(server, 'POST', '/instance-config/update', root.token, {
      registration: { mode: 'open' },
    });
    assert.equal(reopen.body.sso.client_id, 'hearth', 'omitted members are unchanged');
  });

  it('names the field in every validation error, and refuses changes to deployment-set members', async () => {
    const res = await adminCall(server, 'POST', '/instance-config/update', root.token, {
      registration: { mode: 'sometimes' },
      sso: { enabled: 'yes', issuer: 'not a url' },
    });
    assert.equal(res.status, 400);
    const paths = res.body.errors.map((e: any) => e.path).sort();
    assert.deepEqual(paths, ['registration.mode']);
    const sso = await adminCall(server, 'POST', '/instance-config/update', root.token, {
      sso: { enabled: 'yes', issuer: 'not a url' },
    });
    assert.deepEqual(sso.body.errors.map((e: any) => e.path).sort(), ['sso.enabled', 'sso.issuer']);
    const current = (await adminCall(server, 'POST', '/instance-config/get', root.token)).body;
    const roundTrip = await adminCall(server, 'POST', '/instance-config/update', root.token, current);
    assert.equal(roundTrip.status, 200, 'sending read-only members back unchanged is fine');
    const change = await adminCall(server, 'POST', '/instance-config/update', root.token, {
      email: { enabled: !current.email.enabled },
    });
    assert.equal(change.status, 400);
    assert.equal(change.body.errors[0].path, 'email');
  });
});
