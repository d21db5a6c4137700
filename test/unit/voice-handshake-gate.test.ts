import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HandshakeGate } from '../../src/domains/voice/sfu/handshake-gate.ts';

test('join admission: at most `limit` at once, the rest in arrival order, double release harmless', async () => {
  const gate = new HandshakeGate(2, 60_000);
  const first = await gate.acquire();
  const second = await gate.acquire();
  const order: number[] = [];
  const third = gate.acquire().then((release) => {
    order.push(3);
    return release;
  });
  const fourth = gate.acquire().then((release) => {
    order.push(4);
    return release;
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual([gate.inProgress, gate.queued, order.length], [2, 2, 0]);
  first();
  first();
  const releaseThird = await third;
  assert.deepEqual([gate.inProgress, gate.queued, order], [2, 1, [3]]);
  second();
  const releaseFourth = await fourth;
  assert.deepEqual(order, [3, 4]);
  releaseThird();
  releaseFourth();
  assert.deepEqual([gate.inProgress, gate.queued], [0, 0]);
});

test('join admission: a slot held past the hold limit is given back', async () => {
  const gate = new HandshakeGate(1, 30);
  await gate.acquire();
  // Never released by its holder: the second waits for the hold limit, then gets the slot.
  const release = await gate.acquire();
  assert.deepEqual([gate.inProgress, gate.queued], [1, 0]);
  release();
  assert.equal(gate.inProgress, 0);
});
