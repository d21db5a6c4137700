import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * A U+0000 in any text a client sends is a validation failure (400 `INVALID_FORM_BODY`, `INVALID_FORMAT` at
 * its path), never a 500 from the database, which cannot store it in a text column (docs/conventions.md#errors).
 */
let server: TestServer;
let user: TestUser;
let guildId: string;
let channelId: string;

before(async () => {
  server = await startTestServer();
  user = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: user.token, body: { name: 'nul' } });
  assert.equal(guild.status, 200);
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
});
after(async () => {
  await server?.close();
});

function assertNulRefused(res: { status: number; body: any }, path: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  assert.deepEqual(
    res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
    [[path, 'INVALID_FORMAT']],
  );
}

describe('NUL characters in client text', () => {
  it('is refused with its path in message bodies, names and profile text, and nothing is stored', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', `/v1/channels/${channelId}/messages`, { content: 'a\u0000b' }, 'content'],
      [
        'POST',
        `/v1/channels/${channelId}/messages`,
        { content: 'a', embeds: [{ title: 'x\u0000' }] },
        'embeds.0.title',
      ],
      ['POST', '/v1/guilds', { name: 'g\u0000' }, 'name'],
      ['PATCH', `/v1/guilds/${guildId}`, { name: 'g\u0000' }, 'name'],
      ['POST', `/v1/guilds/${guildId}/channels`, { name: 'c\u0000' }, 'name'],
      ['POST', `/v1/guilds/${guildId}/roles`, { name: 'r\u0000' }, 'name'],
      ['PATCH', '/v1/users/@me', { bio: 'b\u0000' }, 'bio'],
      ['POST', '/v1/oauth2/applications', { name: 'a\u0000' }, 'name'],
    ];
    for (const [method, path, body, field] of cases) {
      assertNulRefused(await request(server, method, path, { auth: user.token, body }), field);
    }
    const messages = await request(server, 'GET', `/v1/channels/${channelId}/messages`, { auth: user.token });
    assert.equal(messages.status, 200);
    assert.deepEqual(messages.body, []);
  });

  it('is refused in login credentials and in a search query', async () => {
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: `a\u0000${user.email}`, password: user.password },
    });
    assertNulRefused(login, 'email');
    const search = await request(server, 'GET', `/v1/guilds/${guildId}/messages/search?content=a%00b`, {
      auth: user.token,
    });
    assertNulRefused(search, 'content');
  });

  it('leaves other control characters alone', async () => {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: user.token,
      body: { content: 'tab\there\u0001' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.content, 'tab\there\u0001');
  });

  it('is dropped from the headers a session or an audit entry keeps (X-Super-Properties, X-Audit-Log-Reason)', async () => {
    const superProperties = Buffer.from(JSON.stringify({ os: 'Lin\u0000ux', browser: 'Fire\u0000fox' })).toString(
      'base64',
    );
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
      headers: { 'x-super-properties': superProperties },
    });
    assert.equal(login.status, 200, login.text);
    const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: login.body.token });
    const current = sessions.body.find((s: { current: boolean }) => s.current);
    assert.deepEqual(current.client_info, { os: 'Linux', platform: 'Firefox', location: null });

    const patch = await request(server, 'PATCH', `/v1/guilds/${guildId}`, {
      auth: user.token,
      body: { name: 'renamed' },
      headers: { 'x-audit-log-reason': 'why%00not' },
    });
    assert.equal(patch.status, 200, patch.text);
    const log = await request(server, 'GET', `/v1/guilds/${guildId}/audit-logs`, { auth: user.token });
    assert.equal(log.status, 200);
    assert.equal(log.body.audit_log_entries[0].reason, 'whynot');

    const admin = await registerUser(server);
    assert.equal((await harness(server, 'POST', `/users/${admin.id}/acls`, { acls: ['*'] })).status, 200);
    const flags = await request(server, 'POST', '/v1/admin/users/update-flags', {
      auth: admin.token,
      body: { user_id: user.id, add_flags: '1' },
      headers: { 'x-audit-log-reason': 'staff%00' },
    });
    assert.equal(flags.status, 200, flags.text);
    const logs = await request(server, 'POST', '/v1/admin/audit-logs', { auth: admin.token, body: { limit: 1 } });
    assert.equal(logs.status, 200, logs.text);
    assert.equal(logs.body.logs[0].audit_log_reason, 'staff');
  });
});
