import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * An interactions-endpoint application (docs/bots.md): Hearth POSTs interactions to the application's URL,
 * signed with Ed25519 like Discord, and the endpoint's answer is the interaction response. The endpoint here
 * is a plain node:http server that checks every request against the application's `verify_key` the way
 * `discord-interactions` / tweetnacl do, and refuses bad signatures with 401.
 */

interface Received {
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
  valid: boolean;
}

type Behaviour = (interaction: any, res: ServerResponse) => void | Promise<void>;

/** A local interactions endpoint; `behaviour` answers everything but PINGs (and bad signatures). */
class Endpoint {
  server: Server;
  received: Received[] = [];
  verifyKey = '';
  /** When false the endpoint skips the signature check (a careless application). */
  checksSignatures = true;
  behaviour: Behaviour = (_i, res) => json(res, 200, { type: 4, data: { content: 'default' } });
  private waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/interactions`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async handle(req: IncomingMessage, raw: string, res: ServerResponse): Promise<void> {
    const valid = signatureValid(
      this.verifyKey,
      String(req.headers['x-signature-timestamp']),
      raw,
      String(req.headers['x-signature-ed25519']),
    );
    const entry: Received = { headers: req.headers, raw, body: JSON.parse(raw), valid };
    this.received.push(entry);
    const index = this.waiters.findIndex((w) => w.match(entry));
    if (index >= 0) this.waiters.splice(index, 1)[0]?.resolve(entry);
    if (this.checksSignatures && !valid) return json(res, 401, { error: 'invalid request signature' });
    if (entry.body.type === 1) return json(res, 200, { type: 1 });
    await this.behaviour(entry.body, res);
  }

  /** The next request matching `match` (already received ones first). */
  next(match: (r: Received) => boolean, timeoutMs = 5000): Promise<Received> {
    const found = this.received.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting for an endpoint request')), timeoutMs);
      this.waiters.push({
        match,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** tweetnacl's `sign.detached.verify(timestamp + body, hex(signature), hex(verify_key))`, with node:crypto. */
function signatureValid(verifyKeyHex: string, timestamp: string, body: string, signatureHex: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(verifyKeyHex) || !/^[0-9a-f]{128}$/.test(signatureHex)) return false;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(verifyKeyHex, 'hex').toString('base64url') },
    format: 'jwk',
  });
  return verify(null, Buffer.from(timestamp + body, 'utf8'), key, Buffer.from(signatureHex, 'hex'));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: TestServer;
let owner: TestUser;
let other: TestUser;
let ownerGw: GatewayClient;
let otherGw: GatewayClient;
let botGw: GatewayClient;
let endpoint: Endpoint;
let guildId: string;
let channelId: string;
let app: { id: string; botToken: string; verifyKey: string };
const commandIds = new Map<string, string>();

before(async () => {
  // Two requests in flight per application, so the cap can be shown with three invocations.
  server = await startTestServer({ HEARTH_INTERACTIONS_ENDPOINT_CONCURRENCY: '2' });
  owner = await registerUser(server);
  other = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'HTTP Den' } });
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, { auth: owner.token, body: {} });
  assert.equal((await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: other.token })).status, 200);
  const created = await request(server, 'POST', '/v1/oauth2/applications', {
    auth: owner.token,
    body: { name: 'Webhooky' },
  });
  assert.equal(created.status, 200, created.text);
  app = { id: created.body.id, botToken: created.body.bot.token, verifyKey: created.body.verify_key };
  const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
    auth: owner.token,
    body: { client_id: app.id, scope: 'bot', guild_id: guildId, permissions: String((1n << 10n) | (1n << 11n)) },
  });
  assert.equal(consent.status, 200, consent.text);
  const commands = await request(server, 'PUT', `/v1/applications/${app.id}/commands`, {
    auth: `Bot ${app.botToken}`,
    body: [
      { name: 'ping', description: 'Replies pong', type: 1 },
      { name: 'slow', description: 'Thinks first', type: 1 },
      {
        name: 'echo',
        description: 'Says it back',
        type: 1,
        options: [{ type: 3, name: 'text', description: 'What', required: true }],
      },
    ],
  });
  assert.equal(commands.status, 200, commands.text);
  for (const c of commands.body) commandIds.set(c.name, c.id);
  ({ client: ownerGw } = await readyClient(server, owner.token));
  ({ client: otherGw } = await readyClient(server, other.token));
  ({ client: botGw } = await readyClient(server, app.botToken));
  endpoint = new Endpoint();
  endpoint.verifyKey = app.verifyKey;
  await endpoint.listen();
});

after(async () => {
  await ownerGw?.close();
  await otherGw?.close();
  await botGw?.close();
  await server?.close();
  await endpoint?.close();
});

function invoke(user: TestUser, name: string, options: unknown[] = []) {
  return request(server, 'POST', '/v1/interactions', {
    auth: user.token,
    body: {
      type: 2,
      application_id: app.id,
      guild_id: guildId,
      channel_id: channelId,
      nonce: `n-${name}-${Date.now()}`,
      data: { id: commandIds.get(name), name, type: 1, options },
    },
  });
}

/** The endpoint's request for the next interaction with this command name (after `since` requests). */
function nextInteraction(name: string, since: number, timeoutMs = 5000): Promise<Received> {
  return endpoint.next((r) => endpoint.received.indexOf(r) >= since && r.body.data?.name === name, timeoutMs);
}

function setEndpoint(url: string | null, auth = `Bot ${app.botToken}`, path = '/v1/applications/@me') {
  return request(server, 'PATCH', path, { auth, body: { interactions_endpoint_url: url } });
}

describe('the application key pair', () => {
  test('verify_key is the hex of a real Ed25519 public key, the same in every view', async () => {
    assert.match(app.verifyKey, /^[0-9a-f]{64}$/);
    assert.notEqual(app.verifyKey, '0'.repeat(64));
    const me = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.status, 200);
    assert.equal(me.body.verify_key, app.verifyKey);
    assert.equal(me.body.interactions_endpoint_url, null);
    const mine = await request(server, 'GET', `/v1/applications/${app.id}`, { auth: owner.token });
    assert.equal(mine.status, 200);
    assert.equal(mine.body.verify_key, app.verifyKey);
    const legacy = await request(server, 'GET', `/v1/oauth2/applications/${app.id}`, { auth: owner.token });
    assert.equal(legacy.body.verify_key, app.verifyKey);
    const listed = await request(server, 'GET', '/v1/users/@me/applications', { auth: owner.token });
    assert.equal(listed.body.find((a: { id: string }) => a.id === app.id).verify_key, app.verifyKey);
    // Another application has another key.
    const second = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'B' } });
    assert.match(second.body.verify_key, /^[0-9a-f]{64}$/);
    assert.notEqual(second.body.verify_key, app.verifyKey);
  });

  test('the private key is stored sealed, never in clear', async () => {
    const [row] = await server.app.services.db.query<{ verify_key: string; interactions_private_key: string }>(
      'SELECT verify_key, interactions_private_key FROM applications WHERE id = $1',
      [app.id],
    );
    assert.equal(row?.verify_key, app.verifyKey);
    assert.match(row?.interactions_private_key ?? '', /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.ok(!row?.interactions_private_key.includes('MC4CAQAwBQYDK2Vw'), 'no clear PKCS #8 prefix');
  });

  test('an application from before keys existed gets its pair the first time it is needed, once', async () => {
    const old = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'Old' } });
    // What the migration leaves on an existing row: no key at all.
    await server.app.services.db.query(
      'UPDATE applications SET verify_key = NULL, interactions_private_key = NULL WHERE id = $1',
      [old.body.id],
    );
    const [first, second] = await Promise.all([
      request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${old.body.bot.token}` }),
      request(server, 'GET', `/v1/applications/${old.body.id}`, { auth: owner.token }),
    ]);
    assert.match(first.body.verify_key, /^[0-9a-f]{64}$/);
    assert.notEqual(first.body.verify_key, old.body.verify_key);
    assert.equal(second.body.verify_key, first.body.verify_key);
    const again = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${old.body.bot.token}` });
    assert.equal(again.body.verify_key, first.body.verify_key);

    // And it signs with the new pair: an endpoint holding the new key passes verification.
    const oldEndpoint = new Endpoint();
    oldEndpoint.verifyKey = first.body.verify_key;
    await oldEndpoint.listen();
    try {
      const set = await setEndpoint(oldEndpoint.url, `Bot ${old.body.bot.token}`);
      assert.equal(set.status, 200, set.text);
      assert.equal(oldEndpoint.received.filter((r) => r.valid).length, 1);
    } finally {
      await oldEndpoint.close();
    }
  });

  test('a sealed key that does not open (copied from another application) is replaced; the URL is cleared', async () => {
    const moved = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'M' } });
    const auth = `Bot ${moved.body.bot.token}`;
    const movedEndpoint = new Endpoint();
    movedEndpoint.verifyKey = moved.body.verify_key;
    await movedEndpoint.listen();
    try {
      assert.equal((await setEndpoint(movedEndpoint.url, auth)).status, 200);
    } finally {
      await movedEndpoint.close();
    }
    // The main application's sealed key and verify_key, copied onto this one: bound to another id, it does not open.
    await server.app.services.db.query(
      `UPDATE applications SET (verify_key, interactions_private_key) =
       (SELECT verify_key, interactions_private_key FROM applications WHERE id = $2) WHERE id = $1`,
      [moved.body.id, app.id],
    );
    const me = await request(server, 'GET', '/v1/applications/@me', { auth });
    assert.equal(me.status, 200);
    assert.match(me.body.verify_key, /^[0-9a-f]{64}$/);
    assert.notEqual(me.body.verify_key, app.verifyKey);
    assert.notEqual(me.body.verify_key, moved.body.verify_key);
    assert.equal(me.body.interactions_endpoint_url, null, 'verified against the old key');
    const main = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(main.body.verify_key, app.verifyKey);
  });
});

describe('setting the interactions endpoint URL', () => {
  test('a signed PING must be answered and a wrongly signed one refused; then the URL is kept', async () => {
    const before = endpoint.received.length;
    const res = await setEndpoint(endpoint.url);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.interactions_endpoint_url, endpoint.url);
    assert.equal(res.body.verify_key, app.verifyKey);
    const pings = endpoint.received.slice(before);
    assert.equal(pings.length, 2);
    for (const ping of pings) {
      assert.equal(ping.body.type, 1);
      assert.equal(ping.body.application_id, app.id);
      assert.equal(ping.headers['content-type'], 'application/json');
      assert.match(String(ping.headers['x-signature-timestamp']), /^\d{10}$/);
      assert.ok(Math.abs(Number(ping.headers['x-signature-timestamp']) - Date.now() / 1000) < 60);
      assert.match(String(ping.headers['x-signature-ed25519']), /^[0-9a-f]{128}$/);
    }
    assert.deepEqual(
      pings.map((p) => p.valid),
      [true, false],
    );
    const me = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.body.interactions_endpoint_url, endpoint.url);
  });

  test('the owner sets it through PATCH /applications/{id} (and /oauth2/applications/{id}) too', async () => {
    const res = await setEndpoint(endpoint.url, owner.token, `/v1/applications/${app.id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.interactions_endpoint_url, endpoint.url);
    const other2 = await request(server, 'PATCH', `/v1/applications/${app.id}`, {
      auth: other.token,
      body: { interactions_endpoint_url: endpoint.url },
    });
    assert.equal(other2.status, 403);
    assert.equal(other2.body.code, 'ACCESS_DENIED');
    const asUser = await request(server, 'PATCH', '/v1/applications/@me', {
      auth: owner.token,
      body: { interactions_endpoint_url: endpoint.url },
    });
    assert.equal(asUser.status, 403);
  });

  test('an endpoint that fails the check is refused with 400 INTERACTIONS_ENDPOINT_UNVERIFIED', async () => {
    const bad = new Endpoint();
    bad.verifyKey = app.verifyKey;
    await bad.listen();
    const badUrl = bad.url;
    try {
      const cases: [string, () => void][] = [
        ['accepts a bad signature', () => (bad.checksSignatures = false)],
        [
          'answers PING with 500',
          () => {
            bad.checksSignatures = true;
            bad.server.removeAllListeners('request');
            bad.server.on('request', (_req: IncomingMessage, res: ServerResponse) => json(res, 500, {}));
          },
        ],
        [
          'answers PING with another type',
          () => {
            bad.server.removeAllListeners('request');
            bad.server.on('request', (_req: IncomingMessage, res: ServerResponse) => json(res, 200, { type: 4 }));
          },
        ],
      ];
      for (const [label, arrange] of cases) {
        arrange();
        const res = await setEndpoint(badUrl);
        assert.equal(res.status, 400, label);
        assert.equal(res.body.code, 'INTERACTIONS_ENDPOINT_UNVERIFIED', label);
      }
    } finally {
      await bad.close();
    }
    // Nothing listens there any more.
    const gone = await setEndpoint(badUrl);
    assert.equal(gone.status, 400);
    assert.equal(gone.body.code, 'INTERACTIONS_ENDPOINT_UNVERIFIED');
    assert.match(gone.body.message, /did not answer a PING \(network\)/);
    // The URL that passed stays.
    const me = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.body.interactions_endpoint_url, endpoint.url);
  });

  test('non-public addresses and malformed URLs are refused with 400 INVALID_INTERACTIONS_ENDPOINT_URL', async () => {
    for (const url of [
      'http://10.0.0.1/interactions',
      'http://169.254.169.254/latest/meta-data',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[64:ff9b::a00:1]/',
      'http://167772161/',
      'ftp://example.com/',
      'not a url',
      'https://user:pw@example.com/',
      `https://example.com/${'a'.repeat(2100)}`,
    ]) {
      const res = await setEndpoint(url);
      assert.equal(res.status, 400, url);
      assert.equal(res.body.code, 'INVALID_INTERACTIONS_ENDPOINT_URL', url);
    }
    const me = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.body.interactions_endpoint_url, endpoint.url);
  });
});

describe('interactions over HTTP', () => {
  test('a person invokes /ping; the signed interaction reaches the endpoint, its answer is the message', async () => {
    endpoint.behaviour = (interaction, res) =>
      json(res, 200, { type: 4, data: { content: `pong over http to ${interaction.member.user.username}` } });
    const since = endpoint.received.length;
    const res = await invoke(owner, 'ping');
    assert.equal(res.status, 204, res.text);
    const got = await nextInteraction('ping', since);
    assert.equal(got.valid, true);
    assert.equal(got.body.type, 2);
    assert.equal(got.body.application_id, app.id);
    assert.equal(got.body.guild_id, guildId);
    assert.equal(got.body.channel_id, channelId);
    assert.equal(got.body.member.user.id, owner.id);
    assert.equal(got.body.data.id, commandIds.get('ping'));
    assert.match(got.body.token, /^aW50ZXJhY3Rpb246/);
    const reply = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === app.id, 10_000);
    assert.equal(reply.d.content, `pong over http to ${owner.username}`);
    assert.equal(reply.d.type, 20);
    assert.equal(reply.d.interaction_metadata.id, got.body.id);
    const success = await ownerGw.next((f) => f.t === 'INTERACTION_SUCCESS' && f.d.id === got.body.id, 5000);
    assert.equal(success.d.id, got.body.id);
    // Not over the gateway as well.
    assert.ok(await botGw.nothing((f) => f.t === 'INTERACTION_CREATE', 300));
  });

  test('a tampered body, timestamp or signature does not verify against verify_key', async () => {
    const got = endpoint.received.find((r) => r.body.type === 2) as Received;
    const ts = String(got.headers['x-signature-timestamp']);
    const sig = String(got.headers['x-signature-ed25519']);
    assert.equal(signatureValid(app.verifyKey, ts, got.raw, sig), true);
    const tampered = got.raw.replace('"ping"', '"pong"');
    assert.notEqual(tampered, got.raw);
    assert.equal(signatureValid(app.verifyKey, ts, tampered, sig), false);
    assert.equal(signatureValid(app.verifyKey, String(Number(ts) + 1), got.raw, sig), false);
    const flipped = (sig.startsWith('0') ? '1' : '0') + sig.slice(1);
    assert.equal(signatureValid(app.verifyKey, ts, got.raw, flipped), false);
  });

  test('options arrive; a deferred answer is followed by edits and follow-ups through the webhook routes', async () => {
    endpoint.behaviour = (interaction, res) =>
      interaction.data.name === 'slow'
        ? json(res, 200, { type: 5 })
        : json(res, 200, { type: 4, data: { content: `echo: ${interaction.data.options[0].value}` } });
    let since = endpoint.received.length;
    assert.equal((await invoke(owner, 'echo', [{ type: 3, name: 'text', value: 'hello' }])).status, 204);
    const echoed = await nextInteraction('echo', since);
    assert.deepEqual(echoed.body.data.options, [{ type: 3, name: 'text', value: 'hello' }]);
    const echo = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'echo: hello', 10_000);
    assert.equal(echo.d.author.id, app.id);

    since = endpoint.received.length;
    assert.equal((await invoke(owner, 'slow')).status, 204);
    const slow = await nextInteraction('slow', since);
    const thinking = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === app.id, 10_000);
    assert.equal(thinking.d.flags & 128, 128);
    const token = slow.body.token;
    const edit = await request(server, 'PATCH', `/v1/webhooks/${app.id}/${token}/messages/@original`, {
      body: { content: 'done after thinking' },
    });
    assert.equal(edit.status, 200, edit.text);
    assert.equal(edit.body.content, 'done after thinking');
    const follow = await request(server, 'POST', `/v1/webhooks/${app.id}/${token}`, {
      body: { content: 'and one more thing' },
    });
    assert.equal(follow.status, 200, follow.text);
    assert.equal(follow.body.interaction_metadata.id, slow.body.id);
    const again = await request(server, 'POST', `/v1/interactions/${slow.body.id}/${token}/callback`, {
      body: { type: 4, data: { content: 'twice' } },
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'INTERACTION_ALREADY_ACKNOWLEDGED');
  });

  test('an endpoint answering 500, an invalid response or too much fails the interaction; its token dies', async () => {
    const answers: [string, Behaviour][] = [
      ['500', (_i, res) => json(res, 500, { message: 'boom' })],
      ['PONG to a command', (_i, res) => json(res, 200, { type: 1 })],
      ['not JSON', (_i, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')],
      [
        'over 256 KiB',
        (_i, res) => json(res, 200, { type: 4, data: { content: 'x', padding: 'y'.repeat(300 * 1024) } }),
      ],
      [
        'over 256 KiB, streamed without a length',
        (_i, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"type":4,"data":{"content":"x","padding":"');
          for (let i = 0; i < 30; i++) res.write('z'.repeat(10 * 1024));
          res.end('"}}');
        },
      ],
    ];
    for (const [label, behaviour] of answers) {
      endpoint.behaviour = behaviour;
      const since = endpoint.received.length;
      assert.equal((await invoke(owner, 'ping')).status, 204, label);
      const got = await nextInteraction('ping', since);
      // The token stops working as soon as the failure is recorded (well before the 3-second window ends):
      // reading the original response says UNKNOWN_MESSAGE while the token lives, UNKNOWN_INTERACTION after.
      const original = `/v1/webhooks/${app.id}/${got.body.token}/messages/@original`;
      let code = '';
      for (let i = 0; i < 100 && code !== 'UNKNOWN_INTERACTION'; i++) {
        const read = await request(server, 'GET', original);
        assert.equal(read.status, 404, label);
        code = read.body.code;
        if (code !== 'UNKNOWN_INTERACTION') await sleep(20);
      }
      assert.equal(code, 'UNKNOWN_INTERACTION', label);
      const late = await request(server, 'POST', `/v1/interactions/${got.body.id}/${got.body.token}/callback`, {
        body: { type: 4, data: { content: 'too late' } },
      });
      assert.equal(late.status, 404, label);
      assert.equal(late.body.code, 'UNKNOWN_INTERACTION', label);
      const follow = await request(server, 'POST', `/v1/webhooks/${app.id}/${got.body.token}`, {
        body: { content: 'follow' },
      });
      assert.equal(follow.status, 404, label);
      assert.ok(await ownerGw.nothing((f) => f.t === 'INTERACTION_SUCCESS' && f.d.id === got.body.id, 200), label);
    }
    assert.ok(
      await otherGw.nothing((f) => f.t === 'MESSAGE_CREATE' && ['x', 'too late', 'follow'].includes(f.d.content), 200),
    );
  });

  test('an endpoint that does not answer within 3 s fails the interaction; its request is cut', async () => {
    let cut = false;
    endpoint.behaviour = (_i, res) =>
      new Promise<void>((resolve) => {
        res.on('close', () => {
          cut = !res.writableEnded;
          resolve();
        });
        setTimeout(() => {
          if (!res.writableEnded && !res.destroyed) json(res, 200, { type: 4, data: { content: 'much too late' } });
          resolve();
        }, 5000);
      });
    const since = endpoint.received.length;
    const started = Date.now();
    assert.equal((await invoke(owner, 'ping')).status, 204);
    const got = await nextInteraction('ping', since);
    while (!cut && Date.now() - started < 4500) await sleep(50);
    assert.equal(cut, true, 'Hearth closed the request');
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 2900 && elapsed < 4500, `cut after ${elapsed} ms`);
    const late = await request(server, 'POST', `/v1/interactions/${got.body.id}/${got.body.token}/callback`, {
      body: { type: 4, data: { content: 'too late' } },
    });
    assert.equal(late.status, 404);
    assert.equal(late.body.code, 'UNKNOWN_INTERACTION');
    assert.ok(await otherGw.nothing((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'much too late', 300));
  });

  test('at most HEARTH_INTERACTIONS_ENDPOINT_CONCURRENCY requests are in flight to one application', async () => {
    const held: (() => void)[] = [];
    endpoint.behaviour = (interaction, res) =>
      new Promise<void>((resolve) => {
        held.push(() => {
          json(res, 200, { type: 4, data: { content: `held ${interaction.id}` } });
          resolve();
        });
      });
    const since = endpoint.received.length;
    for (let i = 0; i < 3; i++) assert.equal((await invoke(owner, 'ping')).status, 204);
    await endpoint.next(() => endpoint.received.length - since >= 2, 5000);
    await sleep(300);
    assert.equal(endpoint.received.length - since, 2, 'the third interaction was not sent');
    for (const release of held) release();
    for (let i = 0; i < 2; i++) {
      const reply = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content?.startsWith('held '), 5000);
      assert.equal(reply.d.author.id, app.id);
    }
    await sleep(300);
    assert.equal(endpoint.received.length - since, 2, 'the refused interaction is not retried');
  });

  test('clearing the URL sends interactions back to the gateway', async () => {
    const cleared = await setEndpoint(null);
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.body.interactions_endpoint_url, null);
    const since = endpoint.received.length;
    assert.equal((await invoke(owner, 'ping')).status, 204);
    const created = await botGw.next((f) => f.t === 'INTERACTION_CREATE' && f.d.data?.name === 'ping', 5000);
    assert.equal(created.d.application_id, app.id);
    await sleep(200);
    assert.equal(endpoint.received.length, since);
    const answered = await request(server, 'POST', `/v1/interactions/${created.d.id}/${created.d.token}/callback`, {
      body: { type: 4, data: { content: 'back on the gateway' } },
    });
    assert.equal(answered.status, 204, answered.text);
  });
});

describe('outside test mode', () => {
  test('loopback and plain http are refused too', async () => {
    const strict = await startTestServer({ HEARTH_TEST_MODE: '0' });
    try {
      const user = await registerUser(strict);
      const made = await request(strict, 'POST', '/v1/oauth2/applications', { auth: user.token, body: { name: 'S' } });
      assert.equal(made.status, 200, made.text);
      const port = (endpoint.server.address() as AddressInfo).port;
      for (const url of [
        endpoint.url,
        `https://127.0.0.1:${port}/`,
        `https://[::1]:${port}/`,
        `https://2130706433:${port}/`,
        `https://localhost:${port}/`,
      ]) {
        const res = await request(strict, 'PATCH', '/v1/applications/@me', {
          auth: `Bot ${made.body.bot.token}`,
          body: { interactions_endpoint_url: url },
        });
        assert.equal(res.status, 400, url);
        assert.equal(res.body.code, 'INVALID_INTERACTIONS_ENDPOINT_URL', url);
      }
    } finally {
      await strict.close();
    }
  });
});
