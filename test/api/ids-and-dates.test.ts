import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GatewayClient } from '../gateway/gateway-client.ts';
import { adminCall, adminUser } from '../support/admin.ts';
import { as, newGuild, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser, uniqueEmail } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Ids past 2^63−1 and impossible dates are refused as bad input (4xx), never reach SQL as a 500. */

const HUGE = '9223372036854775808'; // 2^63
const UNAUTHORIZED = { code: 'UNAUTHORIZED', message: 'Unauthorized' };

let server: TestServer;
let owner: TestUser;

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
});
after(() => server?.close());

describe('ids above 2^63−1', () => {
  it('a bot token naming such an application is 401 UNAUTHORIZED on user routes', async () => {
    for (const path of ['/v1/users/@me', '/v1/users/@me/guilds', `/v1/users/${owner.id}`]) {
      const res = await request(server, 'GET', path, { auth: `Bot ${HUGE}.x` });
      assert.equal(res.status, 401, `${path}: ${res.text}`);
      assert.deepEqual(res.body, UNAUTHORIZED);
    }
  });

  it('an Admin key with such an id is 401 UNAUTHORIZED', async () => {
    const res = await adminCall(server, 'GET', '/users/me', `Admin fa_${HUGE}_${'a'.repeat(32)}`);
    assert.equal(res.status, 401, res.text);
    assert.deepEqual(res.body, UNAUTHORIZED);
  });

  it('admin user lookup by such a number finds nobody instead of failing', async () => {
    const admin = await adminUser(server, ['admin:authenticate', 'user:lookup']);
    const res = await adminCall(server, 'POST', '/users/lookup', admin.token, { query: '99999999999999999999' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { users: [] });
  });

  it('the gateway closes 4004 for such a bot token', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    client.identify(`${HUGE}.secret`);
    const closed = await client.closed;
    assert.equal(closed.code, 4004);
  });

  it('mentions of such ids stay text, and a custom emoji with such an id is UNKNOWN_EMOJI', async () => {
    const guild = await newGuild(server, owner);
    const channelId = guild.system_channel_id as string;
    const message = await ok(
      as(server, owner, 'POST', `/channels/${channelId}/messages`, { content: `<@${HUGE}> <@&${HUGE}>` }),
    );
    assert.deepEqual(message.mentions, []);
    assert.deepEqual(message.mention_roles, []);
    const reaction = await as(
      server,
      owner,
      'PUT',
      `/channels/${channelId}/messages/${message.id}/reactions/${encodeURIComponent(`x:${HUGE}`)}/@me`,
    );
    assert.equal(reaction.status, 400, reaction.text);
    assert.equal(reaction.body.code, 'UNKNOWN_EMOJI');
  });

  it('a webhook moved to such a channel id is 400 INVALID_FORM_BODY SNOWFLAKE_OUT_OF_RANGE', async () => {
    const guild = await newGuild(server, owner);
    const hook = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/webhooks`, { name: 'h' }));
    const res = await as(server, owner, 'PATCH', `/webhooks/${hook.id}`, { channel_id: HUGE });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
    assert.equal(res.body.errors[0].path, 'channel_id');
    assert.equal(res.body.errors[0].code, 'SNOWFLAKE_OUT_OF_RANGE');
  });
});

describe('date_of_birth at registration', () => {
  for (const date of ['2000-13-45', '2001-02-29', '0000-01-01', '2000-00-10', '2000-04-31']) {
    it(`refuses ${date} with 400 INVALID_FORM_BODY on date_of_birth`, async () => {
      const res = await request(server, 'POST', '/v1/auth/register', {
        body: { email: uniqueEmail(), username: 'dob', password: 'correct horse battery', date_of_birth: date },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.equal(res.body.errors[0].path, 'date_of_birth');
    });
  }

  it('accepts a real leap day', async () => {
    const res = await request(server, 'POST', '/v1/auth/register', {
      body: { email: uniqueEmail(), username: 'leap', password: 'correct horse battery', date_of_birth: '2000-02-29' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.body.token, 'string');
  });
});
