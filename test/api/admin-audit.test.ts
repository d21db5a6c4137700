import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApplicationId, adminCall, adminUser, createKey, insertBearerToken } from '../support/admin.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let root: TestUser;
let reader: string;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

before(async () => {
  server = await startTestServer();
  root = await adminUser(server, ['*']);
  reader = root.token;
});
after(async () => {
  await server?.close();
});

async function logsFor(filter: Record<string, unknown>) {
  const res = await adminCall(server, 'POST', '/audit-logs', reader, filter);
  assert.equal(res.status, 200, res.text);
  return res.body as { logs: any[]; total: number };
}

describe('Audit entries, field by field, for each credential kind', () => {
  it('records a session write', async () => {
    const target = await registerUser(server);
    const res = await adminCall(
      server,
      'POST',
      '/users/temp-ban',
      root.token,
      { user_id: target.id, duration_hours: 3, reason: 'raid' },
      { 'X-Audit-Log-Reason': encodeURIComponent('Raid on #general, ticket 42') },
    );
    assert.equal(res.status, 200);
    const { logs, total } = await logsFor({ target_type: 'user', target_id: target.id });
    assert.equal(total, 1);
    const [entry] = logs;
    assert.match(entry.log_id, /^\d+$/);
    assert.match(entry.created_at, ISO);
    const bannedUntil = entry.after.temp_banned_until;
    assert.equal(Date.parse(bannedUntil) - Date.parse(entry.created_at), 3 * 3600_000);
    assert.deepEqual(entry, {
      log_id: entry.log_id,
      admin_user_id: root.id,
      credential_kind: 'session',
      action: 'user.temp_ban',
      target_type: 'user',
      target_id: target.id,
      audit_log_reason: 'Raid on #general, ticket 42',
      metadata: { duration_hours: 3, reason: 'raid' },
      before: { temp_banned_until: null },
      after: { temp_banned_until: bannedUntil },
      created_at: entry.created_at,
    });
  });

  it('records a write made with the Admin OAuth2 bearer', async () => {
    const operator = await adminUser(server, ['admin:authenticate', 'acl:set:user', 'user:lookup']);
    const bearer = await insertBearerToken(server, operator.id, adminApplicationId(server));
    const target = await registerUser(server);
    const res = await adminCall(server, 'POST', '/users/set-acls', `Bearer ${bearer}`, {
      user_id: target.id,
      acls: ['user:lookup'],
    });
    assert.equal(res.status, 200);
    const { logs } = await logsFor({ admin_user_id: operator.id });
    assert.deepEqual(logs, [
      {
        log_id: logs[0].log_id,
        admin_user_id: operator.id,
        credential_kind: 'bearer',
        action: 'user.set_acls',
        target_type: 'user',
        target_id: target.id,
        audit_log_reason: null,
        metadata: {},
        before: { acls: [] },
        after: { acls: ['user:lookup'] },
        created_at: logs[0].created_at,
      },
    ]);
  });

  it('records a write made with an Admin API key, with the key id', async () => {
    const owner = await adminUser(server, ['*']);
    const { key, key_id } = await createKey(server, owner, ['ban:ip:add']);
    const res = await adminCall(
      server,
      'POST',
      '/bans/ip/add',
      `Admin ${key}`,
      { ip: '198.51.100.7', expires_in_seconds: 600 },
      { 'X-Audit-Log-Reason': 'brute force' },
    );
    assert.equal(res.status, 200);
    const { logs } = await logsFor({ admin_user_id: owner.id, action: 'ip_ban.add' });
    assert.equal(logs.length, 1);
    const [entry] = logs;
    assert.deepEqual(entry, {
      log_id: entry.log_id,
      admin_user_id: owner.id,
      credential_kind: 'admin_api_key',
      api_key_id: key_id,
      action: 'ip_ban.add',
      target_type: 'ip_ban',
      target_id: '198.51.100.7',
      audit_log_reason: 'brute force',
      metadata: {},
      after: { ip: '198.51.100.7', kind: 'manual', expires_at: entry.after.expires_at },
      created_at: entry.created_at,
    });
    assert.equal(Date.parse(entry.after.expires_at) - Date.parse(entry.created_at), 600_000);
    await adminCall(server, 'POST', '/bans/ip/remove', root.token, { ip: '198.51.100.7' });
  });

  it('records key creation without the secret, and config changes without the SSO secret', async () => {
    const owner = await adminUser(server, ['*']);
    const { key, key_id } = await createKey(server, owner, ['user:lookup']);
    const update = await adminCall(server, 'POST', '/instance-config/update', owner.token, {
      sso: { client_id: 'audit-client', client_secret: 'audit-secret-value' },
    });
    assert.equal(update.status, 200);
    const { logs } = await logsFor({ admin_user_id: owner.id });
    assert.deepEqual(
      logs.map((l) => l.action),
      ['instance_config.update', 'admin_api_key.create'],
    );
    const created = logs[1];
    assert.equal(created.target_type, 'admin_api_key');
    assert.equal(created.target_id, key_id);
    assert.deepEqual(created.after, { name: created.after.name, acls: ['user:lookup'], expires_at: null });
    const config = logs[0];
    assert.equal(config.target_type, 'instance_config');
    assert.equal(config.target_id, 'instance');
    assert.deepEqual(config.metadata, { changed: ['sso'] });
    assert.equal(config.before.sso.client_secret_set, false);
    assert.equal(config.after.sso.client_secret_set, true);
    assert.equal(config.after.sso.client_id, 'audit-client');
    const text = JSON.stringify(logs);
    assert.ok(!text.includes('audit-secret-value'));
    assert.ok(!text.includes(key.slice(-32)));
  });
});

describe('What the audit log does not record', () => {
  it('records nothing for refused or failed requests', async () => {
    const { total: before } = await logsFor({});
    const target = await registerUser(server);
    const weak = await adminUser(server, ['admin:authenticate']);
    const refusals = [
      await adminCall(server, 'POST', '/users/temp-ban', weak.token, { user_id: target.id, duration_hours: 1 }),
      await adminCall(server, 'POST', '/users/temp-ban', root.token, { user_id: target.id, duration_hours: -1 }),
      await adminCall(server, 'POST', '/users/temp-ban', root.token, { user_id: '1', duration_hours: 1 }),
      await adminCall(
        server,
        'POST',
        '/users/temp-ban',
        root.token,
        { user_id: target.id, duration_hours: 1 },
        { 'X-Audit-Log-Reason': 'x'.repeat(513) },
      ),
      await adminCall(server, 'DELETE', '/api-keys/1', root.token),
      await adminCall(server, 'POST', '/users/set-acls', root.token, { user_id: root.id, acls: [] }),
      await adminCall(server, 'POST', '/api-keys', root.token, { name: 'no sudo', acls: [] }),
    ];
    assert.deepEqual(
      refusals.map((r) => r.status),
      [403, 400, 404, 400, 404, 403, 403],
    );
    assert.equal(refusals[3]?.body.errors[0].path, 'X-Audit-Log-Reason');
    const { total: after } = await logsFor({});
    assert.equal(after, before);
  });

  it('does not audit reads', async () => {
    const { total: before } = await logsFor({});
    await adminCall(server, 'POST', '/users/lookup', root.token, { query: root.id });
    await adminCall(server, 'POST', '/bans/ip/list', root.token);
    await adminCall(server, 'POST', '/instance-config/get', root.token);
    const { total: after } = await logsFor({});
    assert.equal(after, before);
  });
});

describe('Reading the audit log', () => {
  it('filters, pages newest first with a before cursor, and keeps the filtered total', async () => {
    const target = await registerUser(server);
    for (let i = 0; i < 5; i++) {
      await adminCall(server, 'POST', '/users/update-suspicious-activity-flags', root.token, {
        user_id: target.id,
        flags: i,
      });
    }
    await adminCall(server, 'POST', '/users/unban', root.token, { user_id: target.id });
    const filter = { target_id: target.id, action: 'user.update_suspicious_activity_flags' };
    const first = await logsFor({ ...filter, limit: 2 });
    assert.equal(first.total, 5);
    assert.deepEqual(
      first.logs.map((l) => l.after.suspicious_activity_flags),
      [4, 3],
    );
    const second = await logsFor({ ...filter, limit: 2, before: first.logs[1].log_id });
    assert.equal(second.total, 5);
    assert.deepEqual(
      second.logs.map((l) => l.after.suspicious_activity_flags),
      [2, 1],
    );
    const all = await logsFor({ target_type: 'user', target_id: target.id });
    assert.equal(all.total, 6);
    const tooMany = await adminCall(server, 'POST', '/audit-logs', reader, { limit: 101 });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.errors[0].path, 'limit');
  });

  it('requires audit_log:view', async () => {
    const weak = await adminUser(server, ['admin:authenticate', 'user:lookup']);
    const res = await adminCall(server, 'POST', '/audit-logs', weak.token, {});
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_ACL');
    assert.equal(res.body.required_acl, 'audit_log:view');
    // The harness route is not part of the Admin API and leaves no trail.
    await harness(server, 'POST', `/users/${weak.id}/acls`, { acls: ['*'] });
    assert.equal(
      (await adminCall(server, 'POST', '/audit-logs', weak.token, { admin_user_id: weak.id })).body.total,
      0,
    );
  });
});
