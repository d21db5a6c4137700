import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { CADDY_PATH, deployedCaddyfile, type RunningCaddy, startCaddy, warnNoCaddy } from '../support/caddy.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { s3Env, startTestS3 } from '../support/s3-server.ts';
import { newTestSecrets, secretsEnv, TEST_TOKEN } from '../support/server.ts';
import { freePort, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';
import { GatewayClient } from './gateway-client.ts';

/**
 * Two Hearth processes behind Caddy, set up as docs/deployment.md says (one PostgreSQL, one Redis, one S3 bucket,
 * the same secrets, `HEARTH_PUBLIC_URL` the proxy's URL, `HEARTH_TRUSTED_PROXIES` the proxy's address), Caddy
 * running deploy/Caddyfile with only its names replaced (plain HTTP on loopback). Every request goes through the
 * proxy except where a test says it goes straight to a node. Clients connect from other loopback addresses
 * (127.0.0.2 and up) than the proxy's (127.0.0.1), so the address a node sees tells who it believes.
 */
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const skip =
  !adminUrl || !redisUrl
    ? 'PostgreSQL + Redis leg only: TEST_DATABASE_URL and TEST_REDIS_URL are unset'
    : !CADDY_PATH
      ? 'no caddy binary (apt-get install caddy, or set CADDY_PATH): see the message above'
      : false;
if (adminUrl && redisUrl && !CADDY_PATH) warnNoCaddy('test/gateway/behind-proxy.test.ts');

const PROXY_ADDRESS = '127.0.0.1';
const METRICS_TOKEN = `metrics-${randomBytes(16).toString('hex')}`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

interface CallOptions {
  /** The client's own address (a loopback one): Caddy's X-Forwarded-For and its client_ip_hash use it. */
  from?: string;
  auth?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP request on a connection of its own from `options.from`. */
function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const url = new URL(path, base);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth) headers.authorization = options.auth;
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        localAddress: options.from ?? '127.0.0.2',
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const json = (res.headers['content-type'] ?? '').includes('json') && text.length > 0;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: json ? JSON.parse(text) : text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface Node {
  name: string;
  url: string;
  port: number;
  spawned: Spawned;
}

describe('two nodes behind Caddy (deploy/Caddyfile), as docs/deployment.md sets them up', { timeout: 60_000 }, () => {
  if (skip) {
    it('not run', { skip }, () => {});
    return;
  }
  const cleanups: (() => Promise<unknown>)[] = [];
  let proxy: string;
  let caddy: RunningCaddy;
  let a: Node;
  let b: Node;
  let gateway: string;
  let token: string;
  let channelId: string;
  /** Gateway clients by the address they connected from, with the node that holds each. */
  const clients = new Map<string, { client: GatewayClient; node: Node }>();

  async function startNode(name: string, shared: Record<string, string>): Promise<Node> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const dataDir = await mkdtemp(join(tmpdir(), `hearth-proxy-${name}-`));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const spawned = spawnEntrypoint({
      ...shared,
      PORT: String(port),
      HOST: '127.0.0.1',
      HEARTH_DATA_DIR: dataDir,
    });
    cleanups.push(async () => {
      spawned.child.kill('SIGKILL');
      await spawned.exited;
    });
    return { name, url, port, spawned };
  }

  /** Open gateway sockets on one node, read straight from it (each process serves its own figures). */
  async function connections(node: Node): Promise<number> {
    const res = await call(node.url, 'GET', '/metrics', { auth: `Bearer ${METRICS_TOKEN}` });
    assert.equal(res.status, 200, res.text);
    const line = res.text.split('\n').find((l) => l.startsWith('hearth_gateway_connections '));
    return Number(line?.split(' ')[1]);
  }

  function connect(from: string): GatewayClient {
    return new GatewayClient(new WebSocket(`${gateway}?v=1&encoding=json`, { localAddress: from }));
  }

  before(async () => {
    const [db, s3, proxyPort] = await Promise.all([
      createTestDatabase(adminUrl as string, 'proxy'),
      startTestS3(),
      freePort(),
    ]);
    cleanups.push(db.drop, () => s3.close());
    await s3.createBucket('hearth');
    proxy = `http://${PROXY_ADDRESS}:${proxyPort}`;
    const secrets = newTestSecrets();
    const shared: Record<string, string> = {
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl as string,
      HEARTH_REDIS_PREFIX: `hearth-proxy-${randomBytes(6).toString('hex')}:`,
      ...s3Env(s3),
      ...secretsEnv(secrets),
      HEARTH_PUBLIC_URL: proxy,
      HEARTH_TRUSTED_PROXIES: `${PROXY_ADDRESS}/32`,
      HEARTH_METRICS_TOKEN: METRICS_TOKEN,
      HEARTH_TEST_MODE: '1',
      HEARTH_TEST_TOKEN: TEST_TOKEN,
      HEARTH_LOG_LEVEL: 'warn',
    };
    // Both at once, as compose starts them: migrations take turns on an advisory lock.
    [a, b] = await Promise.all([
      startNode('a', { ...shared, HEARTH_WORKER_ID: '1' }),
      startNode('b', { ...shared, HEARTH_WORKER_ID: '2' }),
    ]);
    await Promise.all([waitForHealth(a.url, a.spawned), waitForHealth(b.url, b.spawned)]);

    caddy = await startCaddy(await deployedCaddyfile(proxy, [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`]));
    cleanups.push(() => caddy.stop());
    let exited = false;
    void caddy.spawned.exited.then(() => {
      exited = true;
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ready = await call(proxy, 'GET', '/_ready').catch(() => undefined);
      if (ready?.status === 200) break;
      if (exited || Date.now() > deadline) throw new Error(`Caddy did not answer: ${caddy.spawned.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    for (const { client } of clients.values()) client.terminate();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it("discovery announces the proxy's URL, whichever node answers", async () => {
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']) {
      const res = await call(proxy, 'GET', '/.well-known/service', { from });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.endpoints.api, proxy);
      assert.equal(res.body.endpoints.media, `${proxy}/media`);
      assert.equal(res.body.endpoints.webapp, proxy);
      assert.equal(res.body.endpoints.gateway, `ws://${PROXY_ADDRESS}:${new URL(proxy).port}/gateway`);
      gateway = res.body.endpoints.gateway;
    }
  });

  it("the web client's index page and its script load through the proxy", async () => {
    const index = await call(proxy, 'GET', '/', { headers: { accept: 'text/html' } });
    assert.equal(index.status, 200);
    assert.match(String(index.headers['content-type']), /^text\/html/);
    assert.match(index.text, /<title>Hearth<\/title>/);
    const script = /<script type="module" crossorigin src="(\/assets\/index-[^"]+\.js)"/.exec(index.text)?.[1];
    assert.ok(script, index.text);
    const loaded = await call(proxy, 'GET', script);
    assert.equal(loaded.status, 200);
    assert.match(String(loaded.headers['content-type']), /javascript/);
  });

  it('register, then log in, through the proxy; a login from another address is a new location', async () => {
    const email = `proxy.${randomBytes(4).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const registered = await call(proxy, 'POST', '/v1/auth/register', {
      from: '127.0.0.2',
      body: { email, password, username: `p${randomBytes(5).toString('hex')}` },
    });
    assert.equal(registered.status, 200, registered.text);
    const login = await call(proxy, 'POST', '/v1/auth/login', { from: '127.0.0.2', body: { email, password } });
    assert.equal(login.status, 200, login.text);
    token = login.body.token;
    const me = await call(proxy, 'GET', '/v1/users/@me', { from: '127.0.0.4', auth: token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.email, email);
    // The nodes tell 127.0.0.3 from 127.0.0.2 through the proxy: new-location approval (docs/deployment.md).
    const elsewhere = await call(proxy, 'POST', '/v1/auth/login', { from: '127.0.0.3', body: { email, password } });
    assert.equal(elsewhere.status, 403, elsewhere.text);
    assert.equal(elsewhere.body.code, 'IP_AUTHORIZATION_REQUIRED');

    const guild = await call(proxy, 'POST', '/v1/guilds', { auth: token, body: { name: 'behind a proxy' } });
    assert.equal(guild.status, 200, guild.text);
    channelId = guild.body.system_channel_id;
  });

  it('gateway clients connected through the proxy land on both nodes and get a message sent through it', async () => {
    // Caddy keeps each client address on one process (client_ip_hash): clients from new addresses until
    // both processes hold one.
    for (let host = 10; host < 30; host++) {
      const from = `127.0.0.${host}`;
      const [wasA, wasB] = [await connections(a), await connections(b)];
      const client = connect(from);
      await client.ready(token);
      const [nowA, nowB] = [await connections(a), await connections(b)];
      assert.equal(nowA + nowB, wasA + wasB + 1);
      const node = nowA === wasA + 1 ? a : b;
      clients.set(from, { client, node });
      const held = new Set([...clients.values()].map((entry) => entry.node));
      if (held.size === 2 && clients.size >= 4) break;
    }
    assert.equal(new Set([...clients.values()].map((entry) => entry.node)).size, 2, 'both nodes hold a client');

    const sent = await call(proxy, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: token,
      body: { content: 'through the proxy' },
    });
    assert.equal(sent.status, 200, sent.text);
    await Promise.all(
      [...clients.values()].map(({ client }) =>
        client.next((f) => f.t === 'MESSAGE_CREATE' && f.d.id === sent.body.id),
      ),
    );
  });

  it('a node believes the address Caddy puts in X-Forwarded-For, and no client-sent one', async () => {
    const admin = await call(proxy, 'POST', '/v1/auth/register', {
      body: {
        email: `admin.${randomBytes(4).toString('hex')}@example.test`,
        password: `pw-${randomBytes(8).toString('hex')}`,
        username: `a${randomBytes(5).toString('hex')}`,
      },
    });
    assert.equal(admin.status, 200, admin.text);
    const acls = await call(proxy, 'POST', `/v1/test/users/${admin.body.user_id}/acls`, {
      headers: { 'x-test-token': TEST_TOKEN },
      body: { acls: ['*'] },
    });
    assert.equal(acls.status, 200, acls.text);
    const banned = '127.0.0.66';
    const ban = await call(proxy, 'POST', '/v1/admin/bans/ip/add', { auth: admin.body.token, body: { ip: banned } });
    assert.equal(ban.status, 200, ban.text);

    /** Asks until the ban has reached the node that answers (the other learns it over Redis within ms). */
    async function settled(ask: () => Promise<Answer>, expected: number): Promise<Answer> {
      const deadline = Date.now() + 2000;
      let res = await ask();
      while (res.status !== expected && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        res = await ask();
      }
      return res;
    }

    // Through the proxy: the banned address is refused, with the address the node saw; a client-sent
    // X-Forwarded-For does not change who it is; another address is served.
    for (const headers of [{}, { 'x-forwarded-for': '203.0.113.9' }] as Record<string, string>[]) {
      const refused = await settled(() => call(proxy, 'GET', '/.well-known/service', { from: banned, headers }), 403);
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'GLOBAL_IP_BANNED');
      assert.equal(refused.body.ip_address, banned);
    }
    assert.equal((await call(proxy, 'GET', '/.well-known/service', { from: '127.0.0.67' })).status, 200);

    // Straight to each node from an address that is not the proxy: X-Forwarded-For is not believed either way.
    for (const node of [a, b]) {
      const refused = await settled(
        () =>
          call(node.url, 'GET', '/.well-known/service', {
            from: banned,
            headers: { 'x-forwarded-for': '127.0.0.67' },
          }),
        403,
      );
      assert.equal(refused.status, 403, `${node.name}: ${refused.text}`);
      assert.equal(refused.body.ip_address, banned);
      const served = await call(node.url, 'GET', '/.well-known/service', {
        from: '127.0.0.67',
        headers: { 'x-forwarded-for': banned },
      });
      assert.equal(served.status, 200, `${node.name}: ${served.text}`);
    }
  });

  it('one node stopped: every request through the proxy is still answered, and its gateway clients come back', async () => {
    const onB = [...clients.entries()].filter(([, entry]) => entry.node === b);
    assert.ok(onB.length > 0, 'Caddy sends some client addresses to B');
    b.spawned.child.kill('SIGTERM');
    assert.equal(await b.spawned.exited, 0);
    for (const [, { client }] of onB) await client.closed;

    // Each client address, including those Caddy kept on B: reads and writes are answered by A.
    for (const from of clients.keys()) {
      const started = Date.now();
      const me = await call(proxy, 'GET', '/v1/users/@me', { from, auth: token });
      assert.equal(me.status, 200, `${from}: ${me.text}`);
      const sent = await call(proxy, 'POST', `/v1/channels/${channelId}/messages`, {
        from,
        auth: token,
        body: { content: `from ${from} with one node down` },
      });
      assert.equal(sent.status, 200, `${from}: ${sent.text}`);
      assert.ok(Date.now() - started < 6000, `${from}: answered after ${Date.now() - started} ms`);
    }

    // The clients B held identify again through the proxy, on A, and get what is sent next.
    for (const [from] of onB) {
      const client = connect(from);
      await client.ready(token);
      clients.set(from, { client, node: a });
    }
    assert.equal(await connections(a), clients.size);
    const sent = await call(proxy, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: token,
      body: { content: 'after the stop' },
    });
    assert.equal(sent.status, 200, sent.text);
    await Promise.all(
      [...clients.values()].map(({ client }) =>
        client.next((f) => f.t === 'MESSAGE_CREATE' && f.d.id === sent.body.id),
      ),
    );
  });
});
