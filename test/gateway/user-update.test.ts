import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { befriend } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { lastEmail } from '../support/lifecycle.ts';
import { enableTotp } from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type GatewayClient, readyClient } from './gateway-client.ts';

/** USER_UPDATE (docs/gateway.md#every-event): a change to one's own user reaches every session of it, and only those. */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
const clients: GatewayClient[] = [];

before(async () => {
  server = await startTestServer();
  [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
  await befriend(server, alice, bob);
});

after(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await server?.close();
});

async function connect(user: TestUser): Promise<GatewayClient> {
  const { client } = await readyClient(server, user.token);
  clients.push(client);
  return client;
}

describe('USER_UPDATE', () => {
  it('a profile change reaches each of the user’s sessions as GET /users/@me shows it, and nobody else', async () => {
    const [first, second, friend] = await Promise.all([connect(alice), connect(alice), connect(bob)]);
    const patched = await request(server, 'PATCH', '/v1/users/@me', {
      auth: alice.token,
      body: { global_name: 'Alice Prime', bio: 'Plays the cello.' },
    });
    assert.equal(patched.status, 200, patched.text);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: alice.token });
    for (const session of [first, second]) {
      const frame = await session.dispatch('USER_UPDATE');
      assert.deepEqual(frame.d, me.body);
      assert.equal((frame.d as { global_name: string }).global_name, 'Alice Prime');
      assert.equal((frame.d as { email: string }).email, alice.email);
    }
    assert.ok(await friend.nothing((f) => f.t === 'USER_UPDATE'));
  });

  it('turning on two-factor authentication is announced with mfa_enabled', async () => {
    const session = await connect(alice);
    await enableTotp(server, alice.token);
    const frame = await session.next(
      (f) => f.t === 'USER_UPDATE' && (f.d as { mfa_enabled?: boolean }).mfa_enabled === true,
    );
    assert.equal((frame.d as { id: string }).id, alice.id);
  });

  it('verifying the email address is announced with verified', async () => {
    const carol = await registerUser(server);
    const session = await connect(carol);
    const mail = await lastEmail(server, carol.email, 'email_verification');
    const verified = await request(server, 'POST', '/v1/auth/verify', { body: { token: mail.metadata.token } });
    assert.equal(verified.status, 204, verified.text);
    const frame = await session.dispatch('USER_UPDATE');
    assert.equal((frame.d as { id: string }).id, carol.id);
    assert.equal((frame.d as { verified: boolean }).verified, true);
  });

  it('a bot’s profile edited by its owner reaches the bot’s sessions', async () => {
    const app = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: alice.token,
      body: { name: 'Cellist' },
    });
    assert.equal(app.status, 200, app.text);
    const botSession = await connect({ ...alice, token: `Bot ${app.body.bot.token}` } as TestUser);
    const edited = await request(server, 'PATCH', `/v1/oauth2/applications/${app.body.id}/bot`, {
      auth: alice.token,
      body: { username: 'cellist_bot' },
    });
    assert.equal(edited.status, 200, edited.text);
    const frame = await botSession.dispatch('USER_UPDATE');
    assert.equal((frame.d as { id: string }).id, app.body.bot.id);
    assert.equal((frame.d as { username: string }).username, 'cellist_bot');
    assert.equal((frame.d as { bot: boolean }).bot, true);
  });
});
