import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { STRICT } from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { GatewayClient, readyClient } from './gateway-client.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

async function flagSuspicious(user: TestUser): Promise<void> {
  const res = await harness(server, 'POST', `/users/${user.id}/security-flags`, {
    suspicious_activity_flag_names: ['REQUIRE_VERIFIED_EMAIL'],
  });
  assert.equal(res.status, 200, res.text);
}

describe('identify allowance (strict upgrades)', () => {
  test('an account gets 20 identifies a minute; the 21st closes 4008 Rate limited', async () => {
    const carol = await registerUser(server);
    const clients: GatewayClient[] = [];
    for (let i = 0; i < 20; i++) {
      const client = GatewayClient.connect(server, undefined, STRICT);
      const ready = await client.ready(carol.token);
      assert.equal(ready.t, 'READY');
      clients.push(client);
    }
    const refused = GatewayClient.connect(server, undefined, STRICT);
    await refused.hello();
    refused.identify(carol.token);
    assert.deepEqual(await refused.closed, { code: 4008, reason: 'Rate limited' });

    // Another account from the same address still identifies (the address allowance is 60 a minute).
    const dave = await registerUser(server);
    const other = GatewayClient.connect(server, undefined, STRICT);
    assert.equal((await other.ready(dave.token)).t, 'READY');
    await Promise.all([...clients, other].map((c) => c.close()));
  });
});

describe('resumable sessions per account', () => {
  test('at 100 the session detached longest ago is dropped; with 100 sockets open the next is refused', async () => {
    const erin = await registerUser(server);
    const first = await readyClient(server, erin.token);
    const firstSessionId = first.ready.d.session_id as string;
    await first.client.terminate();
    const open: GatewayClient[] = [];
    for (let i = 0; i < 99; i++) open.push((await readyClient(server, erin.token)).client);

    // 100 sessions (one detached): a new identify evicts the detached one, which can no longer resume.
    open.push((await readyClient(server, erin.token)).client);
    const resumer = GatewayClient.connect(server);
    await resumer.hello();
    resumer.send({ op: 6, d: { token: erin.token, session_id: firstSessionId, seq: 1 } });
    assert.deepEqual(await resumer.next((f) => f.op === 9), { op: 9, d: false });
    await resumer.close();

    // 100 sessions, all attached: nothing can be evicted.
    const refused = GatewayClient.connect(server);
    await refused.hello();
    refused.identify(erin.token);
    assert.deepEqual(await refused.closed, { code: 4008, reason: 'Too many sessions' });
    await Promise.all(open.map((c) => c.close()));
  });
});

describe('suspicious-activity flags set after identify', () => {
  test('the full session ends with op 9 and 4000; identifying again gives a restricted session', async () => {
    const frank = await registerUser(server);
    const { client } = await readyClient(server, frank.token);
    await flagSuspicious(frank);
    assert.deepEqual(await client.next((f) => f.op === 9), { op: 9, d: false });
    assert.deepEqual(await client.closed, { code: 4000, reason: 'Session restricted' });

    const again = GatewayClient.connect(server);
    const ready = await again.ready(frank.token);
    assert.deepEqual(ready.d.guilds, []);
    // A restricted session is not ended again by the next change of the user.
    await flagSuspicious(frank);
    assert.ok(await again.nothing((f) => f.op === 9));
    await again.close();
  });

  test('a session detached before the flags were set cannot be resumed', async () => {
    const grace = await registerUser(server);
    const { client, ready } = await readyClient(server, grace.token);
    await client.terminate();
    await flagSuspicious(grace);
    const resumer = GatewayClient.connect(server);
    await resumer.hello();
    resumer.send({ op: 6, d: { token: grace.token, session_id: ready.d.session_id, seq: 1 } });
    assert.deepEqual(await resumer.next((f) => f.op === 9), { op: 9, d: false });
    await resumer.close();
  });
});
