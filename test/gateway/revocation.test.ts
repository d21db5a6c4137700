import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApplication } from '../support/applications.ts';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { readyClient } from './gateway-client.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** End to end: each way a credential dies closes its gateway connections with op 9 then 4004. */
describe('credential revocation over the gateway', () => {
  it('a bot-token reset closes the bot connection; the new token identifies', async () => {
    const owner = await registerUser(server);
    const app = await createApplication(server, owner);
    const { client } = await readyClient(server, app.botToken);
    const reset = await request(server, 'POST', `/v1/oauth2/applications/${app.id}/bot/reset-token`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(reset.status, 200, reset.text);
    const invalid = await client.next((f) => f.op === 9);
    assert.equal(invalid.d, false);
    const closed = await client.closed;
    assert.equal(closed.code, 4004);
    const { client: again } = await readyClient(server, reset.body.token);
    await again.close();
  });

  it('deleting the application closes the bot connection', async () => {
    const owner = await registerUser(server);
    const app = await createApplication(server, owner);
    const { client } = await readyClient(server, app.botToken);
    const res = await request(server, 'DELETE', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(res.status, 204, res.text);
    assert.equal((await client.next((f) => f.op === 9)).d, false);
    assert.equal((await client.closed).code, 4004);
  });

  it('disabling the account closes every session connection', async () => {
    const user = await registerUser(server);
    const { client } = await readyClient(server, user.token);
    const res = await request(server, 'POST', '/v1/users/@me/disable', {
      auth: user.token,
      body: { password: user.password },
    });
    assert.equal(res.status, 204, res.text);
    assert.equal((await client.next((f) => f.op === 9)).d, false);
    assert.equal((await client.closed).code, 4004);
  });

  it('a password change closes the old sessions and the returned token identifies', async () => {
    const user = await registerUser(server);
    const { client } = await readyClient(server, user.token);
    const res = await request(server, 'PATCH', '/v1/users/@me', {
      auth: user.token,
      body: { new_password: 'a-brand-new-password', password: user.password },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await client.closed).code, 4004);
    const { client: fresh } = await readyClient(server, res.body.token);
    await fresh.close();
  });
});
