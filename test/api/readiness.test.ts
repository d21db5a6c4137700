import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

describe('readiness', () => {
  test('/_ready asks the database, the shared state and the object store; /_health stays a bare liveness check', async () => {
    const server = await startTestServer();
    servers.push(server);
    for (const path of ['/_ready', '/v1/_ready']) {
      const res = await request(server, 'GET', path);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        status: 'ready',
        checks: { database: 'ok', shared_state: 'ok', object_store: 'ok' },
      });
    }
    assert.deepEqual((await request(server, 'GET', '/_health')).body, { status: 'ok' });
  });

  test('an unreachable object store makes it 503 naming the failed part, and nothing more', async () => {
    const server = await startTestServer({
      HEARTH_S3_BUCKET: 'nowhere',
      HEARTH_S3_ENDPOINT: 'http://127.0.0.1:1',
      HEARTH_S3_ACCESS_KEY_ID: 'x',
      HEARTH_S3_SECRET_ACCESS_KEY: 'y',
      HEARTH_S3_FORCE_PATH_STYLE: 'true',
    });
    servers.push(server);
    const res = await request(server, 'GET', '/_ready');
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, {
      code: 'SERVICE_UNAVAILABLE',
      message: 'Service unavailable',
      checks: { database: 'ok', shared_state: 'ok', object_store: 'failed' },
    });
    assert.equal((await request(server, 'GET', '/_health')).status, 200);
  });
});
