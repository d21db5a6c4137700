import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseByteRange } from '../../src/domains/media/byte-range.ts';

/** The `Range` header reader of stored media (docs/media.md#ranges), with its edges and random input. */
describe('parseByteRange', () => {
  it('reads one range of the three forms, its end clamped to the last byte', () => {
    assert.deepEqual(parseByteRange('bytes=0-99', 1000), { start: 0, end: 99 });
    assert.deepEqual(parseByteRange('bytes=500-', 1000), { start: 500, end: 999 });
    assert.deepEqual(parseByteRange('bytes=-100', 1000), { start: 900, end: 999 });
    assert.deepEqual(parseByteRange('bytes=-5000', 1000), { start: 0, end: 999 });
    assert.deepEqual(parseByteRange('bytes=990-5000', 1000), { start: 990, end: 999 });
    assert.deepEqual(parseByteRange(' bytes=7-7 ', 1000), { start: 7, end: 7 });
  });

  it('answers unsatisfiable for a start past the end and an empty suffix', () => {
    assert.equal(parseByteRange('bytes=1000-', 1000), 'unsatisfiable');
    assert.equal(parseByteRange('bytes=1000-2000', 1000), 'unsatisfiable');
    assert.equal(parseByteRange('bytes=-0', 1000), 'unsatisfiable');
    assert.equal(parseByteRange('bytes=0-', 0), 'unsatisfiable');
    assert.equal(parseByteRange('bytes=-1', 0), 'unsatisfiable');
  });

  it('ignores what it does not act on: no header, other units, several ranges, reversed or garbled', () => {
    for (const header of [
      undefined,
      '',
      'bytes=',
      'bytes=-',
      'items=0-1',
      'bytes=0-1,5-6',
      'bytes=9-3',
      'bytes=a-b',
      'bytes=1e3-',
      'bytes=0x10-',
      'bytes=1234567890123456-',
      'bytes = 0-1',
    ])
      assert.equal(parseByteRange(header, 1000), undefined, String(header));
  });

  it('never throws and only ever answers a range inside the object, for random input', () => {
    const alphabet = 'bytes=-0123456789, ab';
    for (let i = 0; i < 5000; i++) {
      const length = Math.floor(Math.random() * 24);
      const header = Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
      const size = Math.floor(Math.random() * 2000);
      const answer = parseByteRange(`bytes=${header}`, size);
      if (answer === undefined || answer === 'unsatisfiable') continue;
      assert.ok(Number.isInteger(answer.start) && Number.isInteger(answer.end), header);
      assert.ok(answer.start >= 0 && answer.start <= answer.end && answer.end < size, `${header} of ${size}`);
    }
  });
});
