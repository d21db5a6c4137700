import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { GatewayEvent, GatewayEvents } from '../../src/domains/events/dispatch.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { GatewayClient, readyClient } from './gateway-client.ts';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

before(async () => {
  server = await startTestServer();
  alice = await registerUser(server);
  bob = await registerUser(server);
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  await setClock(0);
});

async function setClock(offsetMs: number): Promise<void> {
  const res = await harness(server, 'POST', '/clock', { offset_ms: offsetMs });
  assert.equal(res.status, 200, res.text);
}

function toUser<E extends GatewayEvent>(userId: string, event: E, payload: GatewayEvents[E]) {
  return server.app.services.dispatcher.dispatch(event, payload, { kind: 'users', userIds: [userId] });
}

async function login(user: TestUser): Promise<string> {
  const res = await request(server, 'POST', '/v1/auth/login', { body: { email: user.email, password: user.password } });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

function resume(client: GatewayClient, token: string, sessionId: string, seq: number | null) {
  client.send({ op: 6, d: { token, session_id: sessionId, seq } });
}

describe('dispatch sequence', () => {
  test('dispatches to a user are numbered from 2 after READY', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    assert.equal(ready.s, 1);
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'one' });
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'two' });
    const first = await client.dispatch('USER_NOTE_UPDATE');
    const second = await client.dispatch('USER_NOTE_UPDATE');
    assert.deepEqual(first, { op: 0, t: 'USER_NOTE_UPDATE', d: { id: bob.id, note: 'one' }, s: 2 });
    assert.deepEqual(second, { op: 0, t: 'USER_NOTE_UPDATE', d: { id: bob.id, note: 'two' }, s: 3 });
    await client.close();
  });

  test('every session of the user gets it, other users do not', async () => {
    const a1 = await readyClient(server, alice.token);
    const a2 = await readyClient(server, alice.token);
    const b = await readyClient(server, bob.token);
    await toUser(alice.id, 'USER_UPDATE', { id: alice.id } as GatewayEvents['USER_UPDATE']);
    assert.equal((await a1.client.dispatch('USER_UPDATE')).s, 2);
    assert.equal((await a2.client.dispatch('USER_UPDATE')).s, 2);
    assert.ok(await b.client.nothing((f) => f.t === 'USER_UPDATE'));
    await Promise.all([a1.client.close(), a2.client.close(), b.client.close()]);
  });
});

describe('resume', () => {
  test('inside the window: missed events are replayed, then RESUMED', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    const sessionId = ready.d.session_id;
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'seen' });
    assert.equal((await client.dispatch('USER_NOTE_UPDATE')).s, 2);
    await client.terminate();
    await new Promise((r) => setTimeout(r, 50));
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'missed 1' });
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'missed 2' });

    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, sessionId, 2);
    const r1 = await again.next();
    const r2 = await again.next();
    const resumed = await again.next();
    assert.deepEqual(r1, { op: 0, t: 'USER_NOTE_UPDATE', d: { id: bob.id, note: 'missed 1' }, s: 3 });
    assert.deepEqual(r2, { op: 0, t: 'USER_NOTE_UPDATE', d: { id: bob.id, note: 'missed 2' }, s: 4 });
    assert.deepEqual(resumed, { op: 0, t: 'RESUMED', d: {}, s: 5 });
    // Live again: the next dispatch continues the sequence.
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'live' });
    assert.equal((await again.dispatch('USER_NOTE_UPDATE')).s, 6);
    await again.close();
  });

  test('a resume from an earlier seq replays what the client did not acknowledge', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'a' });
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'b' });
    await client.dispatch('USER_NOTE_UPDATE');
    await client.dispatch('USER_NOTE_UPDATE');
    await client.terminate();
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 1);
    assert.equal((await again.next()).d.note, 'a');
    assert.equal((await again.next()).d.note, 'b');
    assert.equal((await again.next()).t, 'RESUMED');
    await again.close();
  });

  test('a second socket resuming a live session takes it over; the first closes 4000', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 1);
    assert.equal((await again.next()).t, 'RESUMED');
    assert.deepEqual(await client.closed, { code: 4000, reason: 'Session unavailable' });
    await again.close();
  });

  test('outside the window (clock moved past 10 s): op 9 d:false, and the socket may identify', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await client.terminate();
    await new Promise((r) => setTimeout(r, 50));
    await setClock(10_500);
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 1);
    assert.deepEqual(await again.next(), { op: 9, d: false });
    again.identify(alice.token);
    const fresh = await again.dispatch('READY');
    assert.notEqual(fresh.d.session_id, ready.d.session_id);
    await again.close();
  });

  test('just inside the window (clock moved 9 s) the resume still works', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await client.terminate();
    await new Promise((r) => setTimeout(r, 50));
    await setClock(9_000);
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 1);
    assert.equal((await again.next()).t, 'RESUMED');
    await again.close();
  });

  test('an unknown session id gets op 9 d:false', async () => {
    const client = GatewayClient.connect(server);
    await client.hello();
    resume(client, alice.token, 'A'.repeat(32), 1);
    assert.deepEqual(await client.next(), { op: 9, d: false });
    await client.close();
  });

  test('a client closing with 1000 can still resume inside the window (the platform clients do)', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await client.close(1000);
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'while closed' });
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 1);
    const replayed = await again.dispatch('USER_NOTE_UPDATE');
    assert.equal(replayed.d.note, 'while closed');
    assert.equal((await again.dispatch('RESUMED')).t, 'RESUMED');
    await again.close();
  });

  test('a malformed resume closes 4002 "Invalid resume payload"', async () => {
    for (const d of [
      null,
      { session_id: 'abc', seq: 1 },
      { token: alice.token, seq: 1 },
      { token: alice.token, session_id: 'abc', seq: -1 },
      { token: alice.token, session_id: 'abc', seq: 'x' },
      { token: alice.token, session_id: 'a b', seq: 1 },
    ]) {
      const client = GatewayClient.connect(server);
      await client.hello();
      client.send({ op: 6, d });
      assert.deepEqual(await client.closed, { code: 4002, reason: 'Invalid resume payload' }, JSON.stringify(d));
    }
  });

  test("another account's token, or an invalid one, closes 4004", async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await client.terminate();
    for (const token of [bob.token, `flx_${'z'.repeat(36)}`]) {
      const again = GatewayClient.connect(server);
      await again.hello();
      resume(again, token, ready.d.session_id, 1);
      assert.deepEqual(await again.closed, { code: 4004, reason: 'Invalid token' });
    }
    // The session was not harmed by the attempts.
    const owner = GatewayClient.connect(server);
    await owner.hello();
    resume(owner, alice.token, ready.d.session_id, 1);
    assert.equal((await owner.next()).t, 'RESUMED');
    await owner.close();
  });

  test('a seq above the current one, or below the acknowledged one, closes 4007', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'x' });
    await toUser(alice.id, 'USER_NOTE_UPDATE', { id: bob.id, note: 'y' });
    await client.dispatch('USER_NOTE_UPDATE');
    await client.dispatch('USER_NOTE_UPDATE');
    client.send({ op: 1, d: 3 });
    await client.next((f) => f.op === 11);
    await client.terminate();

    const above = GatewayClient.connect(server);
    await above.hello();
    resume(above, alice.token, ready.d.session_id, 9);
    assert.deepEqual(await above.closed, { code: 4007, reason: 'Invalid sequence' });

    const below = GatewayClient.connect(server);
    await below.hello();
    resume(below, alice.token, ready.d.session_id, 2);
    assert.deepEqual(await below.closed, { code: 4007, reason: 'Invalid sequence' });

    const exact = GatewayClient.connect(server);
    await exact.hello();
    resume(exact, alice.token, ready.d.session_id, 3);
    assert.deepEqual(await exact.next(), { op: 0, t: 'RESUMED', d: {}, s: 4 });
    await exact.close();
  });

  test('a seq below the replay floor (before READY) gets op 9', async () => {
    const { client, ready } = await readyClient(server, alice.token);
    await client.terminate();
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, alice.token, ready.d.session_id, 0);
    assert.deepEqual(await again.next(), { op: 9, d: false });
    await again.close();
  });
});

describe('revocation', () => {
  test('logout closes that session with op 9 then 4004; other sessions stay', async () => {
    const token = await login(alice);
    const doomed = await readyClient(server, token);
    const other = await readyClient(server, alice.token);
    const res = await request(server, 'POST', '/v1/auth/logout', { auth: token });
    assert.equal(res.status, 204);
    assert.deepEqual(await doomed.client.next(), { op: 9, d: false });
    assert.deepEqual(await doomed.client.closed, { code: 4004, reason: 'Invalid token' });
    await toUser(alice.id, 'USER_UPDATE', { id: alice.id } as GatewayEvents['USER_UPDATE']);
    assert.equal((await other.client.dispatch('USER_UPDATE')).s, 2);
    // The revoked session cannot be resumed either.
    const again = GatewayClient.connect(server);
    await again.hello();
    resume(again, token, doomed.ready.d.session_id, 1);
    assert.deepEqual(await again.closed, { code: 4004, reason: 'Invalid token' });
    await other.client.close();
  });

  test('session logout of another session disconnects it with op 9 + 4004', async () => {
    const token = await login(alice);
    const doomed = await readyClient(server, token);
    const hash = doomed.ready.d.auth_session_id_hash;
    const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
      auth: alice.token,
      body: { session_id_hashes: [hash], password: alice.password },
    });
    assert.equal(res.status, 204, res.text);
    assert.deepEqual(await doomed.client.next(), { op: 9, d: false });
    assert.deepEqual(await doomed.client.closed, { code: 4004, reason: 'Invalid token' });
  });

  test('revoking every session of a user closes all of them', async () => {
    const token = await login(bob);
    const one = await readyClient(server, token);
    const two = await readyClient(server, bob.token);
    await server.app.services.sessions.revokeAll(bob.id);
    for (const { client } of [one, two]) {
      assert.deepEqual(await client.next(), { op: 9, d: false });
      assert.deepEqual(await client.closed, { code: 4004, reason: 'Invalid token' });
    }
    bob = await registerUser(server);
  });

  test('a revoked token cannot identify', async () => {
    const token = await login(alice);
    await request(server, 'POST', '/v1/auth/logout', { auth: token });
    const client = GatewayClient.connect(server);
    await client.hello();
    client.identify(token);
    assert.deepEqual(await client.closed, { code: 4004, reason: 'Invalid token' });
  });
});

describe('drain', () => {
  test('shutdown sends op 7 then closes 4000 with the drain reason', async () => {
    const own = await startTestServer();
    const user = await registerUser(own);
    const { client } = await readyClient(own, user.token);
    const idle = GatewayClient.connect(own);
    await idle.hello();
    await own.close();
    assert.deepEqual(await client.next(), { op: 7, d: null });
    assert.deepEqual(await client.closed, { code: 4000, reason: 'Session drain requested; reconnect to continue' });
    assert.equal((await idle.closed).code, 4000);
  });
});
