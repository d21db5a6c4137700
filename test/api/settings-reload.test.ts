import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Instance settings and manual IP bans are read again every HEARTH_SETTINGS_RELOAD_S seconds
 * (docs/gateway.md#across-nodes): a change whose bus message never reached a process still applies there.
 * The change is written to the database behind the server's back, as another process would.
 */
describe('periodic settings reload', { timeout: 30_000 }, () => {
  let server: TestServer;
  let user: TestUser;

  before(async () => {
    server = await startTestServer({ HEARTH_SETTINGS_RELOAD_S: '1', HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
    user = await registerUser(server);
  });
  after(async () => {
    await server?.close();
  });

  test('a manual ban and a registration mode written by another process apply within the period', async () => {
    const fromThere = { auth: user.token, headers: { 'x-forwarded-for': '198.51.100.23' } };
    assert.equal((await request(server, 'GET', '/v1/users/@me', fromThere)).status, 200);
    const db = server.app.services.db;
    await db.query('INSERT INTO ip_bans (ip, expires_at, created_by, created_at) VALUES ($1, NULL, NULL, now())', [
      '198.51.100.0/24',
    ]);
    await db.query(
      `INSERT INTO instance_config (key, value, updated_at) VALUES ('registration', '{"mode":"closed"}', now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
    );
    const deadline = Date.now() + 5_000;
    let banned = await request(server, 'GET', '/v1/users/@me', fromThere);
    while (banned.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      banned = await request(server, 'GET', '/v1/users/@me', fromThere);
    }
    assert.equal(banned.status, 403, banned.text);
    assert.equal(banned.body.code, 'GLOBAL_IP_BANNED');
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
    const discovery = await request(server, 'GET', '/.well-known/service');
    assert.equal(discovery.body.registration.mode, 'closed');
    const refused = await request(server, 'POST', '/v1/auth/register', {
      body: { email: 'late@example.com', password: 'a long enough password', username: 'late' },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'REGISTRATION_CLOSED');
  });
});
