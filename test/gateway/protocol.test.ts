import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { befriend } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { GatewayClient, readyClient } from './gateway-client.ts';

let server: TestServer;
let alice: TestUser;

before(async () => {
  server = await startTestServer();
  alice = await registerUser(server);
});
after(async () => {
  await server.close();
});

describe('connect and hello', () => {
  test('Hello announces the 41 250 ms heartbeat interval', async () => {
    const client = GatewayClient.connect(server);
    const hello = await client.hello();
    assert.deepEqual(hello, { op: 10, d: { heartbeat_interval: 41250 } });
    await client.close();
  });

  test('discovery announces the gateway URL the server answers on', async () => {
    const res = await request(server, 'GET', '/.well-known/service');
    assert.equal(res.body.endpoints.gateway, `ws://127.0.0.1:${server.port}/gateway`);
  });

  test('a heartbeat is acknowledged with op 11', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    client.send({ op: 1, d: null });
    assert.deepEqual(await client.next(), { op: 11 });
    await client.close();
  });

  for (const [label, query] of [
    ['missing', '?encoding=json'],
    ['2', '?v=2&encoding=json'],
    ['8', '?v=8&encoding=json'],
    ['11', '?v=11&encoding=json'],
  ] as const) {
    test(`version ${label} closes 4012 before Hello`, async () => {
      const client = GatewayClient.connect(server, query);
      const closed = await client.closed;
      assert.deepEqual(closed, { code: 4012, reason: 'Invalid API version' });
      assert.deepEqual(client.raw, []);
    });
  }

  for (const version of ['9', '10']) {
    test(`version ${version} (what stock discord.js and @discordjs/ws ask for) gets Hello`, async () => {
      const client = GatewayClient.connect(server, `?v=${version}&encoding=json`);
      const hello = await client.hello();
      assert.equal(hello.op, 10);
      await client.close();
    });
  }

  test('compress=zlib-stream and zstd-stream are ignored: frames stay plain text', async () => {
    for (const compress of ['zlib-stream', 'zstd-stream']) {
      const client = GatewayClient.connect(server, `?v=1&encoding=json&compress=${compress}`);
      const hello = await client.hello();
      assert.equal(hello.op, 10);
      await client.close();
    }
  });

  test('a non-JSON encoding closes 4002', async () => {
    const client = GatewayClient.connect(server, '?v=1&encoding=etf');
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Decode failed' });
  });

  test('other paths are not upgraded', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/gateway?v=1`);
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => {});
    });
    assert.equal(status, 404);
  });
});

describe('identify', () => {
  test('READY carries the session, the private user and the empty defaults', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    assert.equal(ready.op, 0);
    assert.equal(ready.s, 1);
    const d = ready.d;
    assert.equal(d.v, 1);
    assert.equal(d.version, 1);
    assert.match(d.session_id, /^[A-Za-z0-9]{32}$/);
    assert.equal(d.resume_gateway_url, `ws://127.0.0.1:${server.port}/gateway`);
    assert.equal(d.user.id, alice.id);
    assert.equal(d.user.username, alice.username);
    assert.equal(d.user.email, alice.email);
    assert.deepEqual(d.guilds, []);
    assert.deepEqual(d.private_channels, []);
    for (const key of [
      'relationships',
      'presences',
      'users',
      'sessions',
      'pinned_dms',
      'favorite_memes',
      'webauthn_credentials',
      'rtc_regions',
    ])
      assert.deepEqual(d[key], [], key);
    assert.deepEqual(d.notes, {});
    assert.deepEqual(d.read_state, { version: 0, partial: false, entries: [] });
    assert.deepEqual(d.user_guild_settings, { version: 0, partial: false, entries: [] });
    assert.equal(typeof d.user_settings, 'object');
    assert.equal(typeof d.country_code, 'string');
    assert.equal(typeof d.auth_session_id_hash, 'string');
    assert.equal(d.application, undefined);
    const sessions = await request(server, 'GET', '/v1/auth/sessions', { auth: alice.token });
    assert.ok(sessions.body.some((s: { id_hash: string }) => s.id_hash === d.auth_session_id_hash));
    await client.close();
  });

  test('READY lists the DM channels, with their recipients, most recent first', async () => {
    const [a, b, c] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
    // Strangers cannot open DMs (issue 16): friends can.
    await befriend(server, a, b);
    await befriend(server, a, c);
    const first = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: a.token,
      body: { recipient_id: b.id },
    });
    const second = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: a.token,
      body: { recipient_id: c.id },
    });
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    const { client, ready } = await readyClient(server, a.token);
    assert.deepEqual(
      ready.d.private_channels.map((ch: { id: string; recipients: { id: string }[] }) => [
        ch.id,
        ch.recipients.map((u) => u.id),
      ]),
      [
        [second.body.id, [c.id]],
        [first.body.id, [b.id]],
      ],
    );
    await client.close();
  });

  test('a missing token closes 4002 "Invalid identify payload"', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    client.send({ op: 2, d: { properties: { os: 'linux', browser: 'x', device: 'x' } } });
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid identify payload' });
  });

  test('an empty or non-string token, or no d at all, closes 4002 "Invalid identify payload"', async () => {
    for (const d of [{ token: '' }, { token: 42 }, null, 'token']) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.send({ op: 2, d });
      assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid identify payload' }, JSON.stringify(d));
    }
  });

  test('bad properties close 4002 "Invalid identify payload"', async () => {
    for (const properties of ['linux', [1], { os: 5 }]) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.send({ op: 2, d: { token: alice.token, properties } });
      assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid identify payload' });
    }
  });

  test('an unknown or malformed token closes 4004 "Invalid token"', async () => {
    for (const token of ['flx_' + 'a'.repeat(36), 'nonsense', '123.secret', 'Bot 123.secret']) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.identify(token);
      assert.deepEqual(await client.closed, { code: 4004, reason: 'Invalid token' }, token);
    }
  });

  test('the token is never taken from an Authorization header', async () => {
    const client = GatewayClient.connect(server, '?v=1&encoding=json', { authorization: alice.token });
    await client.hello();
    client.send({ op: 2, d: { properties: {} } });
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid identify payload' });
  });

  test('a second identify closes 4005', async () => {
    const { client } = await readyClient(server, alice.token);
    client.identify(alice.token);
    assert.deepEqual(await client.closed, { code: 4005, reason: 'Already authenticated' });
  });

  test('a bad shard closes 4010', async () => {
    for (const shard of [[1, 1], [0, 0], [-1, 2], 'x']) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.identify(alice.token, { shard });
      assert.deepEqual(await client.closed, { code: 4010, reason: 'Invalid shard' }, JSON.stringify(shard));
    }
  });

  test('a valid shard is echoed in READY', async () => {
    const client = GatewayClient.connect(server);
    const ready = await client.ready(alice.token, { shard: [0, 1] });
    assert.deepEqual(ready.d.shard, [0, 1]);
    await client.close();
  });
});

describe('frame rules', () => {
  test('an unknown opcode before identify closes 4003, after it 4001', async () => {
    const before = GatewayClient.connect(server);
    await before.hello();
    before.send({ op: 99, d: null });
    assert.deepEqual(await before.closed, { code: 4003, reason: 'Not authenticated' });

    const { client } = await readyClient(server, alice.token);
    client.send({ op: 99, d: null });
    assert.deepEqual(await client.closed, { code: 4001, reason: 'Unknown opcode' });
  });

  test('an authenticated-only opcode before identify closes 4003', async () => {
    for (const op of [3, 4, 8]) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.send({ op, d: {} });
      assert.deepEqual(await client.closed, { code: 4003, reason: 'Not authenticated' });
    }
  });

  test('a frame above 4096 bytes closes 4002 "Payload too large"', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    client.send({ op: 1, d: null, padding: 'x'.repeat(4100) });
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Payload too large' });
  });

  test('a frame of exactly 4096 bytes is accepted', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    const base = JSON.stringify({ op: 1, d: null, padding: '' });
    client.send(JSON.stringify({ op: 1, d: null, padding: 'x'.repeat(4096 - base.length) }));
    assert.deepEqual(await client.next(), { op: 11 });
    await client.close();
  });

  test('undecodable frames close 4002 "Decode failed"', async () => {
    for (const payload of ['{not json', '[1,2]', '{"d":1}', '{"op":"1"}']) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.send(payload);
      assert.deepEqual(await client.closed, { code: 4002, reason: 'Decode failed' }, payload);
    }
    const binary = GatewayClient.connect(server);
    await binary.hello();
    binary.ws.send(Buffer.from('{"op":1,"d":null}'), { binary: true });
    assert.deepEqual(await binary.closed, { code: 4002, reason: 'Decode failed' });
  });

  test('a bad presence update closes 4002 "Invalid presence payload"', async () => {
    const { client } = await readyClient(server, alice.token);
    client.send({ op: 3, d: { status: 'sleeping' } });
    assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid presence payload' });
  });

  test('a voice state update for a DM call (guild_id null) is accepted and ignored: DM calls are not served yet', async () => {
    const { client } = await readyClient(server, alice.token);
    client.send({ op: 4, d: { guild_id: null, channel_id: null, self_mute: false, self_deaf: false } });
    client.send({ op: 1, d: 1 });
    assert.deepEqual(await client.next(), { op: 11 });
    await client.close();
  });

  test('more than 120 frames a minute close 4008 "Rate limited"', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    for (let i = 0; i < 121; i++) client.send({ op: 1, d: null });
    const closed = await client.closed;
    assert.deepEqual(closed, { code: 4008, reason: 'Rate limited' });
    assert.equal(client.raw.filter((r) => r === '{"op":11}').length, 120);
  });
});

describe('heartbeat timers', () => {
  test('the server asks for a heartbeat, then closes a silent socket 4009', async () => {
    server.app.gateway!.setTimings({ heartbeatRequestMs: 150, zombieTimeoutMs: 400, sweepIntervalMs: 25 });
    try {
      const client = GatewayClient.connect(server);
      const opened = performance.now();
      await client.hello();
      assert.deepEqual(await client.next(), { op: 1, d: null });
      const closed = await client.closed;
      assert.deepEqual(closed, { code: 4009, reason: 'Heartbeat timeout' });
      assert.ok(performance.now() - opened >= 380);
    } finally {
      server.app.gateway!.setTimings({ heartbeatRequestMs: 37_125, zombieTimeoutMs: 45_000, sweepIntervalMs: 1000 });
    }
  });

  test('heartbeats keep a socket alive past the zombie timeout', async () => {
    server.app.gateway!.setTimings({ heartbeatRequestMs: 150, zombieTimeoutMs: 300, sweepIntervalMs: 25 });
    try {
      const { client } = await readyClient(server, alice.token);
      for (let i = 0; i < 6; i++) {
        await new Promise((r) => setTimeout(r, 100));
        client.send({ op: 1, d: 1 });
        await client.next((f) => f.op === 11);
      }
      assert.equal(client.closeInfo, undefined);
      await client.close();
    } finally {
      server.app.gateway!.setTimings({ heartbeatRequestMs: 37_125, zombieTimeoutMs: 45_000, sweepIntervalMs: 1000 });
    }
  });
});

describe('IP limits', () => {
  test('a banned IP gets the HTTP 403 ban body before the socket opens', async () => {
    const { ipBans, clock } = server.app.services;
    await ipBans.ban({ ip: '127.0.0.1', kind: 'automatic', expiresAt: clock.now() + 60_000 });
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/gateway?v=1&encoding=json`);
      const { status, body, retryAfter } = await new Promise<{ status: number; body: any; retryAfter: string }>(
        (resolve) => {
          ws.on('unexpected-response', (_req, res) => {
            let text = '';
            res.on('data', (chunk) => {
              text += chunk;
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: JSON.parse(text),
                retryAfter: String(res.headers['retry-after']),
              }),
            );
          });
          ws.on('error', () => {});
        },
      );
      assert.equal(status, 403);
      assert.equal(body.code, 'GLOBAL_IP_TEMPORARILY_BANNED');
      assert.equal(body.ip_address, '127.0.0.1');
      assert.equal(body.ban_kind, 'temporary');
      assert.equal(body.appeals_supported, false);
      assert.equal(body.appeal_email, null);
      assert.equal(typeof body.expires_at, 'string');
      assert.ok(Number(retryAfter) >= 1);
    } finally {
      await ipBans.remove('127.0.0.1');
    }
    const client = GatewayClient.connect(server);
    assert.equal((await client.hello()).op, 10);
    await client.close();
  });

  test('gateway 4004s count towards an IP ban only when strict (test mode)', async () => {
    const { ipBans, clock } = server.app.services;
    const failAs = async (headers: Record<string, string>) => {
      const client = GatewayClient.connect(server, '?v=1&encoding=json', headers);
      await client.hello();
      client.identify(`flx_${'b'.repeat(36)}`);
      assert.equal((await client.closed).code, 4004);
      await new Promise((r) => setTimeout(r, 50));
    };
    await ipBans.reset();
    await failAs({});
    assert.equal(await ipBans.recordFailure('127.0.0.1', clock.now(), 600_000), 1);
    await ipBans.reset();
    await failAs({ 'x-test-strict': 'true' });
    assert.equal(await ipBans.recordFailure('127.0.0.1', clock.now(), 600_000), 2);
    await ipBans.reset();
  });

  test('a 257th socket from one IP closes 4008 "Too many connections"', async () => {
    const clients: GatewayClient[] = [];
    for (let i = 0; i < 256; i++) clients.push(GatewayClient.connect(server));
    await Promise.all(clients.map((c) => c.hello()));
    const extra = GatewayClient.connect(server);
    assert.deepEqual(await extra.closed, { code: 4008, reason: 'Too many connections' });
    await Promise.all(clients.map((c) => c.terminate()));
    await new Promise((r) => setTimeout(r, 100));
    const again = GatewayClient.connect(server);
    assert.equal((await again.hello()).op, 10);
    await again.close();
  });
});
