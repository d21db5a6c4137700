import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConcurrencyGate } from '../../src/platform/concurrency-gate.ts';

test('per-key and total bounds, released slots are reusable, double release is harmless', () => {
  const gate = new ConcurrencyGate(3, 2);
  const a1 = gate.tryEnter('a');
  const a2 = gate.tryEnter('a');
  assert.ok(a1 && a2);
  assert.equal(gate.tryEnter('a'), undefined, 'third for one key');
  const b1 = gate.tryEnter('b');
  assert.ok(b1);
  assert.equal(gate.tryEnter('c'), undefined, 'total reached');
  a1();
  a1();
  assert.equal(gate.inUse, 2);
  assert.ok(gate.tryEnter('c'));
  assert.equal(gate.tryEnter('a'), undefined, 'total reached again');
});
