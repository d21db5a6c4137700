import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSnowflake,
  SNOWFLAKE_EPOCH_MS,
  SnowflakeGenerator,
  snowflakeTimestamp,
} from '../../src/platform/crypto/snowflake.ts';

describe('snowflakes', () => {
  it('use Discord\u2019s epoch, 2015-01-01T00:00:00Z', () => {
    assert.equal(SNOWFLAKE_EPOCH_MS, 1420070400000n);
    assert.equal(SnowflakeGenerator.atTime(1420070400000), '0');
    // A well-known Discord id decodes to its documented timestamp.
    assert.equal(snowflakeTimestamp('175928847299117063'), 1462015105796);
  });

  it('lay out time, worker and sequence bits', () => {
    const now = 1_700_000_000_000;
    const id = BigInt(new SnowflakeGenerator(5, () => now).next());
    assert.equal(id >> 22n, BigInt(now) - SNOWFLAKE_EPOCH_MS);
    assert.equal((id >> 12n) & 0x3ffn, 5n);
    assert.equal(id & 0xfffn, 0n);
    assert.equal(id >> 63n, 0n);
  });

  it('never decrease, within a millisecond, across sequence overflow and when the clock goes back', () => {
    let now = 1_700_000_000_000;
    const gen = new SnowflakeGenerator(1, () => now);
    let last = -1n;
    for (let i = 0; i < 10_000; i++) {
      if (i === 5000) now -= 10_000;
      if (i % 3000 === 0) now += 1;
      const id = BigInt(gen.next());
      assert.ok(id > last, `id ${i} did not increase`);
      last = id;
    }
  });

  it('are unique across 100,000 calls in real time', () => {
    const gen = new SnowflakeGenerator(0);
    const ids = new Set(Array.from({ length: 100_000 }, () => gen.next()));
    assert.equal(ids.size, 100_000);
  });

  it('parse digit strings and JSON integers, and reject the rest', () => {
    assert.deepEqual(parseSnowflake('123'), { ok: true, value: '123' });
    assert.deepEqual(parseSnowflake(123), { ok: true, value: '123' });
    assert.deepEqual(parseSnowflake('0009'), { ok: true, value: '9' });
    assert.deepEqual(parseSnowflake('9223372036854775807'), { ok: true, value: '9223372036854775807' });
    assert.deepEqual(parseSnowflake('9223372036854775808'), { ok: false, reason: 'range' });
    assert.deepEqual(parseSnowflake('99999999999999999999'), { ok: false, reason: 'range' });
    // A number past 2^63−1 is out of range however many digits it has (docs/conventions.md#ids-and-time).
    assert.deepEqual(parseSnowflake('123456789012345678901'), { ok: false, reason: 'range' });
    assert.deepEqual(parseSnowflake('9'.repeat(5000)), { ok: false, reason: 'range' });
    assert.deepEqual(parseSnowflake(`${'0'.repeat(30)}42`), { ok: true, value: '42' });
    for (const bad of ['', '-1', '1.5', '1e3', ' 1', 'abc', '12345678901234567890x', -1, 1.5, null, {}, [], true]) {
      assert.deepEqual(parseSnowflake(bad), { ok: false, reason: 'format' }, JSON.stringify(bad));
    }
    assert.deepEqual(parseSnowflake(undefined), { ok: false, reason: 'format' });
  });
});
