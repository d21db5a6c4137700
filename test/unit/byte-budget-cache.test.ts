import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteBudgetCache } from '../../src/platform/cache/byte-budget-cache.ts';

const of = (size: number) => ({ bytes: Buffer.alloc(size) });

describe('ByteBudgetCache', () => {
  it('drops the least recently used when the budget is passed, a read counting as a use', () => {
    const cache = new ByteBudgetCache(10, 10);
    cache.set('a', of(4));
    cache.set('b', of(4));
    assert.ok(cache.get('a'));
    cache.set('c', of(4));
    assert.equal(cache.get('b'), undefined);
    assert.ok(cache.get('a'));
    assert.ok(cache.get('c'));
    assert.equal(cache.size, 8);
  });

  it('keeps nothing above the entry bound, and a replaced entry counts once', () => {
    const cache = new ByteBudgetCache(100, 5);
    cache.set('big', of(6));
    assert.equal(cache.get('big'), undefined);
    cache.set('x', of(3));
    cache.set('x', of(5));
    assert.equal(cache.size, 5);
  });

  it('drops an entry read at or after its expiry', () => {
    const cache = new ByteBudgetCache(100, 100);
    cache.set('soon', of(3), 1000);
    assert.ok(cache.get('soon', 999));
    assert.equal(cache.get('soon', 1000), undefined);
    assert.equal(cache.size, 0);
  });
});
