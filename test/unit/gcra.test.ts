import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { gcra } from '../../src/platform/state/rate-limiter.ts';

/** The pure GCRA step; the backends are checked against it in shared-state.test.ts. */
describe('gcra', () => {
  it('starts full and counts down', () => {
    let tat: number | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const step = gcra(tat, 4, 1000, 0);
      tat = step.tat;
      assert.equal(step.decision.allowed, true);
      remaining.push(step.decision.remaining);
    }
    assert.deepEqual(remaining, [3, 2, 1, 0]);
    const denied = gcra(tat, 4, 1000, 0);
    assert.equal(denied.decision.allowed, false);
    assert.equal(denied.decision.retryAfterMs, 250);
    assert.equal(denied.decision.resetAfterMs, 1000);
    // A denial leaves the state untouched.
    assert.equal(denied.tat, tat);
  });

  it('admits a whole burst at an epoch time when the window is no multiple of the interval (15 in 10 s)', () => {
    for (const now of [0, 1_764_000_000_000, 1_799_999_999_999.5]) {
      let tat: number | undefined;
      const remaining: number[] = [];
      for (let i = 0; i < 15; i++) {
        const step = gcra(tat, 15, 10_000, now);
        assert.equal(step.decision.allowed, true, `request ${i + 1} at ${now}`);
        tat = step.tat;
        remaining.push(step.decision.remaining);
      }
      assert.deepEqual(remaining, [14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      assert.equal(gcra(tat, 15, 10_000, now).decision.allowed, false, `the 16th at ${now}`);
    }
  });

  it('treats a stale arrival time like an empty bucket', () => {
    const step = gcra(-5000, 10, 1000, 0);
    assert.equal(step.decision.remaining, 9);
    assert.equal(step.tat, 100);
  });

  it('never admits more than limit + elapsed/interval requests (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 100, max: 60_000 }),
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 300 }),
        (limit, windowMs, gaps) => {
          let tat: number | undefined;
          let now = 0;
          let admitted = 0;
          for (const gap of gaps) {
            now += gap;
            const step = gcra(tat, limit, windowMs, now);
            tat = step.tat;
            if (step.decision.allowed) admitted += 1;
            else assert.ok(step.decision.retryAfterMs > 0);
            assert.ok(step.decision.remaining >= 0 && step.decision.remaining < limit);
          }
          const interval = windowMs / limit;
          assert.ok(admitted <= limit + Math.floor(now / interval) + 1e-9);
        },
      ),
    );
  });

  it('admits a request exactly when retryAfterMs has passed (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 100, max: 10_000 }), (limit, windowMs) => {
        let tat: number | undefined;
        for (let i = 0; i < limit; i++) tat = gcra(tat, limit, windowMs, 0).tat;
        const denied = gcra(tat, limit, windowMs, 0);
        assert.equal(denied.decision.allowed, false);
        assert.equal(gcra(tat, limit, windowMs, denied.decision.retryAfterMs).decision.allowed, true);
      }),
    );
  });
});
