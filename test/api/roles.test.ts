import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * `HEARTH_ROLES` (docs/deployment.md#roles): what a process serves follows its roles; discovery, health,
 * readiness and metrics are on every process.
 */
const servers: Record<string, TestServer> = {};
before(async () => {
  for (const roles of ['api,gateway,media,voice', 'gateway', 'api', 'media', 'voice'])
    servers[roles] = await startTestServer({
      HEARTH_ROLES: roles,
      ...(roles === 'voice' ? { HEARTH_VOICE_ENDPOINT: 'wss://voice-1.example.test/voice' } : {}),
    });
});
after(async () => {
  for (const server of Object.values(servers)) await server.close();
});

/** Whether the gateway answers HELLO on this process. */
function gatewayHello(server: TestServer): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/gateway?v=10&encoding=json`);
    socket.once('message', (data) => {
      resolve((JSON.parse(String(data)) as { op: number }).op === 10);
      socket.close();
    });
    socket.once('error', () => resolve(false));
    socket.once('unexpected-response', () => resolve(false));
  });
}

/** What a WebSocket upgrade of `path` gets: `open`, or the HTTP status it was refused with. */
function upgrade(server: TestServer, path: string): Promise<'open' | number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}${path}`);
    socket.once('open', () => {
      resolve('open');
      socket.close();
    });
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('error', () => resolve(0));
  });
}

const notFound = { code: 'NOT_FOUND', message: 'Not found' };

describe('process roles', () => {
  it('serves everything with every role', async () => {
    const all = servers['api,gateway,media,voice'] as TestServer;
    assert.equal((await request(all, 'GET', '/v1/users/@me')).status, 401);
    assert.equal(await gatewayHello(all), true);
    assert.equal(await upgrade(all, '/voice'), 'open', 'voice signalling');
    const media = await request(all, 'GET', '/media/external/not-a-signature/https/example.com/a.png');
    assert.notDeepEqual(media.body, notFound, 'the media proxy route answers for itself');
    const page = await fetch(`${all.url}/login`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
  });

  it('a gateway-only process answers the gateway, discovery and health, and nothing of the API or media', async () => {
    const gateway = servers.gateway as TestServer;
    assert.equal(await gatewayHello(gateway), true);
    assert.equal(await upgrade(gateway, '/voice'), 404, 'no SFU without the voice role');
    assert.equal(gateway.app.sfu, undefined);
    for (const path of ['/.well-known/service', '/_health', '/v1/_health', '/_ready'])
      assert.equal((await request(gateway, 'GET', path)).status, 200, path);
    const api = await request(gateway, 'GET', '/v1/users/@me');
    assert.equal(api.status, 404);
    assert.deepEqual(api.body, notFound);
    const media = await request(gateway, 'GET', '/media/external/not-a-signature/https/example.com/a.png');
    assert.equal(media.status, 404);
    assert.deepEqual(media.body, notFound);
    const page = await fetch(`${gateway.url}/login`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 404, 'the web client comes with the API');
  });

  it('an API-only process has no gateway and no media proxy', async () => {
    const api = servers.api as TestServer;
    const user = await registerUser(api);
    assert.equal((await request(api, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
    assert.equal(await gatewayHello(api), false);
    const media = await request(api, 'GET', '/media/external/not-a-signature/https/example.com/a.png');
    assert.deepEqual(media.body, notFound);
  });

  it('a media-only process serves the media proxy and no API', async () => {
    const media = servers.media as TestServer;
    const proxied = await request(media, 'GET', '/media/external/not-a-signature/https/example.com/a.png');
    assert.notDeepEqual(proxied.body, notFound);
    assert.deepEqual((await request(media, 'GET', '/v1/users/@me')).body, notFound);
    assert.equal(await gatewayHello(media), false);
  });

  it('a voice-only process serves voice signalling, discovery and health, and no gateway, API or media', async () => {
    const voice = servers.voice as TestServer;
    assert.equal(await upgrade(voice, '/voice'), 'open');
    assert.equal(await upgrade(voice, '/gateway?v=10&encoding=json'), 404);
    for (const path of ['/.well-known/service', '/_health', '/_ready'])
      assert.equal((await request(voice, 'GET', path)).status, 200, path);
    assert.deepEqual((await request(voice, 'GET', '/v1/users/@me')).body, notFound);
    const media = await request(voice, 'GET', '/media/external/not-a-signature/https/example.com/a.png');
    assert.deepEqual(media.body, notFound);
    // It announces itself (docs/voice.md#the-voice-role): its public endpoint and its load.
    const announced = await voice.app.services.voiceNodes.liveNodes();
    assert.deepEqual(announced, [
      { id: voice.app.voiceNode?.id, endpoint: 'wss://voice-1.example.test/voice', rooms: 0, participants: 0 },
    ]);
  });
});
