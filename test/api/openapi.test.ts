import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openApiPath } from '../../src/http/openapi.ts';
import { buildRoutes } from '../../src/routes.ts';
import { request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

describe('GET /v1/openapi.json', () => {
  test('describes every non-test route of the table, and nothing else', async () => {
    const res = await request(server, 'GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    const described = new Set<string>();
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, unknown>>))
      for (const method of Object.keys(operations)) described.add(`${method.toUpperCase()} ${path}`);
    const table = new Set(
      buildRoutes(server.app.services)
        .filter((r) => r.policy !== 'test')
        .map((r) => `${r.method} ${openApiPath(r).path}`),
    );
    assert.deepEqual([...described].sort(), [...table].sort());
    assert.ok(!JSON.stringify(doc).includes('/test/'), 'no test-harness route is described');
  });

  test('an operation carries its parameters, credentials, sudo mode, bucket and body schema', async () => {
    const doc = (await request(server, 'GET', '/v1/openapi.json')).body;
    const post = doc.paths['/v1/users/@me/mfa/totp/disable'].post;
    assert.equal(post['x-hearth-policy'], 'user-only');
    assert.equal(post['x-hearth-sudo'], 'y');
    assert.deepEqual(post.security, [{ session: [] }]);
    assert.deepEqual(post['x-ratelimit-bucket'], { name: 'users:mfa_write', limit: 20, window_seconds: 10 });
    assert.equal(post.requestBody.content['application/json'].schema.type, 'object');
    assert.ok('code' in post.requestBody.content['application/json'].schema.properties);

    const me = doc.paths['/v1/users/@me'].get;
    assert.deepEqual(me.security, [{ session: [] }, { bot: [] }, { oauth2: ['identify'] }]);
    const message = doc.paths['/v1/channels/{channelId}/messages/{messageId}'].get;
    assert.deepEqual(
      message.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name),
      ['channelId', 'messageId'],
    );
    assert.ok(doc.components.schemas.Error.properties.code.enum.includes('UNKNOWN_CHANNEL'));
  });
});
