import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** The scale benchmark's seeding route (docs/accounts.md#test-harness-test-mode-only). */
let server: TestServer;
let owner: TestUser;
before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
});
after(async () => {
  await server?.close();
});

describe('POST /test/guilds/{id}/members/seed', () => {
  it('adds accounts that cannot sign in to the guild, seen by its members at once', async () => {
    const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Seeded' } });
    assert.equal(guild.status, 200, guild.text);
    const before = await request(server, 'GET', `/v1/guilds/${guild.body.id}?with_counts=true`, { auth: owner.token });
    assert.equal(before.body.approximate_member_count, 1);
    const seeded = await harness(server, 'POST', `/guilds/${guild.body.id}/members/seed`, { count: 3 });
    assert.equal(seeded.status, 200, seeded.text);
    assert.equal(seeded.body.user_ids.length, 3);
    const members = await request(server, 'GET', `/v1/guilds/${guild.body.id}/members?limit=10`, {
      auth: owner.token,
    });
    assert.equal(members.status, 200, members.text);
    const usernames = members.body.map((m: { user: { username: string } }) => m.user.username).sort();
    assert.deepEqual(usernames, [owner.username, ...seeded.body.user_ids.map((id: string) => `seed_${id}`)].sort());
    const after = await request(server, 'GET', `/v1/guilds/${guild.body.id}?with_counts=true`, { auth: owner.token });
    assert.equal(after.body.approximate_member_count, 4);
  });

  it('refuses a bad count, an unknown guild and a caller without the test token', async () => {
    const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Other' } });
    for (const count of [0, 10_001, 1.5, '3']) {
      const res = await harness(server, 'POST', `/guilds/${guild.body.id}/members/seed`, { count });
      assert.equal(res.status, 400, `${count}: ${res.text}`);
    }
    const unknown = await harness(server, 'POST', '/guilds/1234/members/seed', { count: 1 });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.code, 'UNKNOWN_GUILD');
    const anonymous = await request(server, 'POST', `/v1/test/guilds/${guild.body.id}/members/seed`, {
      body: { count: 1 },
    });
    assert.equal(anonymous.status, 403, anonymous.text);
    assert.equal(anonymous.body.code, 'TEST_HARNESS_FORBIDDEN');
  });
});
