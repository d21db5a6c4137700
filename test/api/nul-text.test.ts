import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
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
});
