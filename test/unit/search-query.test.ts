import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markTerms, parseSearch, tokenize } from '../../web/src/features/chat/search-query.ts';

/** The web client's search box syntax → the search route's parameters (docs/web.md, "Search"). */
const resolver = {
  user: (name: string) => ({ ana: '11', 'bo bo': '12' })[name.replace(/^@/, '').toLowerCase()],
  channel: (name: string) => ({ general: '21', 'team chat': '22' })[name.replace(/^#/, '').toLowerCase()],
};

/** The smallest id of a millisecond, as the server mints them (ms since 2015 shifted by 22 bits). */
const idAt = (ms: number) => (BigInt(ms) - 1420070400000n) << 22n;

describe('search box syntax', () => {
  it('keeps words (quotes, or, -word) as content and marks only the wanted words', () => {
    const parsed = parseSearch('"brown fox" or -lazy dog', resolver);
    assert.deepEqual(parsed.params, { content: '"brown fox" or -lazy dog' });
    assert.deepEqual(parsed.terms, ['brown', 'fox', 'dog']);
    assert.deepEqual(parsed.problems, []);
  });

  it('turns people, channels, has and pinned into ids and values, repeated filters into lists', () => {
    const parsed = parseSearch(
      'from:Ana from:"bo bo" mentions:@ana in:#general in:"team chat" has:link has:FILE pinned:true hello',
      resolver,
    );
    assert.deepEqual(parsed.params, {
      author_id: ['11', '12'],
      mentions: ['11'],
      channel_id: ['21', '22'],
      has: ['link', 'file'],
      pinned: 'true',
      content: 'hello',
    });
    assert.deepEqual(parsed.problems, []);
  });

  it('bounds dates by the day in local time, exclusively, the tighter bound winning', () => {
    const day = new Date(2024, 0, 31).getTime();
    const next = new Date(2024, 1, 1).getTime();
    assert.deepEqual(parseSearch('before:2024-01-31', resolver).params, { max_id: String(idAt(day)) });
    assert.deepEqual(parseSearch('after:2024-01-31', resolver).params, { min_id: String(idAt(next) - 1n) });
    assert.deepEqual(parseSearch('during:2024-01-31', resolver).params, {
      min_id: String(idAt(day) - 1n),
      max_id: String(idAt(next)),
    });
    assert.deepEqual(
      parseSearch('during:2024-01-31 before:2024-01-15', resolver).params.max_id,
      String(idAt(new Date(2024, 0, 15).getTime())),
    );
  });

  it('reports what it cannot resolve, per filter', () => {
    const parsed = parseSearch('from:nobody in:nowhere has:gif before:2024-02-30 after:soon pinned:maybe', resolver);
    assert.deepEqual(
      parsed.problems.map((p) => `${p.filter}:${p.value}:${p.kind}`),
      [
        'from:nobody:user',
        'in:nowhere:channel',
        'has:gif:has',
        'before:2024-02-30:date',
        'after:soon:date',
        'pinned:maybe:pinned',
      ],
    );
  });

  it('leaves unknown keys and empty filters as they are', () => {
    assert.deepEqual(parseSearch('https://example.com/x from:', resolver).params, { content: 'https://example.com/x' });
    assert.deepEqual(
      tokenize('in:"team chat" word').map((t) => [t.filter ?? '', t.value]),
      [
        ['in', 'team chat'],
        ['', 'word'],
      ],
    );
  });

  it('marks whole words, case-insensitively', () => {
    assert.deepEqual(markTerms('Fox, foxes and a FOX.', ['fox']), [
      { text: 'Fox', mark: true },
      { text: ', foxes and a ', mark: false },
      { text: 'FOX', mark: true },
      { text: '.', mark: false },
    ]);
    // Regular-expression characters in a term are matched as themselves.
    assert.deepEqual(markTerms('a+b (c)', ['c)', 'a+b']), [
      { text: 'a+b', mark: true },
      { text: ' (', mark: false },
      { text: 'c)', mark: true },
    ]);
  });
});
