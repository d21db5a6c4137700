import type { SearchParams } from '../../api/chat-types.ts';

/** The filters the search box understands, Discord's words (docs/web.md, "Search"). */
export const SEARCH_FILTERS = ['from', 'mentions', 'in', 'has', 'before', 'after', 'during', 'pinned'] as const;
export type SearchFilter = (typeof SEARCH_FILTERS)[number];

/** The `has:` values the server accepts (docs/chat.md). */
export const HAS_VALUES = ['link', 'embed', 'file', 'image', 'video', 'sound', 'sticker'] as const;

/** A filter the box could not turn into a parameter: shown to the person, nothing is searched. */
export interface SearchProblem {
  filter: SearchFilter;
  value: string;
  kind: 'user' | 'channel' | 'has' | 'date' | 'pinned';
}

/** Names → ids, from what the client holds (members, recipients, channels). */
export interface SearchResolver {
  user(name: string): string | undefined;
  channel(name: string): string | undefined;
}

export interface ParsedSearch {
  params: SearchParams;
  /** The words to mark in the results (the content part, without excluded words and operators). */
  terms: string[];
  problems: SearchProblem[];
}

interface Token {
  filter?: SearchFilter;
  value: string;
  /** For content: the token as typed (quotes and `-` kept), for the server's websearch syntax. */
  raw: string;
}

/** `word`, `"a phrase"`, `key:value` and `key:"a value"`, split on whitespace outside quotes. */
export function tokenize(input: string): Token[] {
  const out: Token[] = [];
  const re = /(?:(\w+):(?:"([^"]*)"?|(\S*)))|(-?"[^"]*"?)|(\S+)/g;
  for (const m of input.matchAll(re)) {
    const key = m[1]?.toLowerCase();
    if (key !== undefined && (SEARCH_FILTERS as readonly string[]).includes(key)) {
      out.push({ filter: key as SearchFilter, value: m[2] ?? m[3] ?? '', raw: m[0] });
    } else {
      out.push({ value: m[0], raw: m[0] });
    }
  }
  return out;
}

const EPOCH = 1420070400000n;

/** The smallest snowflake of a millisecond (ids are ms since 2015 shifted by 22 bits). */
function idAt(ms: number): bigint {
  return (BigInt(Math.max(ms, 1420070400000)) - EPOCH) << 22n;
}

/** `YYYY-MM-DD` → the start of that day and of the next, in the person's time zone (as Discord does). */
function dayBounds(value: string): [number, number] | undefined {
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(value);
  if (!m) return undefined;
  const start = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (Number.isNaN(start.getTime()) || start.getDate() !== Number(m[3])) return undefined;
  const end = new Date(start);
  end.setDate(end.getDate() + 1);
  return [start.getTime(), end.getTime()];
}

/**
 * Turns what was typed into the search route's parameters. Bounds are exclusive ids: `before:D` keeps what
 * was written before day D began, `after:D` what was written after it ended, `during:D` that day only.
 */
export function parseSearch(input: string, resolve: SearchResolver): ParsedSearch {
  const params: SearchParams = {};
  const words: string[] = [];
  const terms: string[] = [];
  const problems: SearchProblem[] = [];
  let minId: bigint | undefined;
  let maxId: bigint | undefined;
  const lower = (id: bigint) => {
    minId = minId === undefined || id > minId ? id : minId;
  };
  const upper = (id: bigint) => {
    maxId = maxId === undefined || id < maxId ? id : maxId;
  };
  const add = (key: 'author_id' | 'mentions' | 'channel_id' | 'has', value: string) => {
    const list = params[key] ?? [];
    if (!list.includes(value)) list.push(value);
    params[key] = list;
  };
  for (const token of tokenize(input)) {
    const { filter, value } = token;
    if (!filter) {
      words.push(token.raw);
      if (!token.raw.startsWith('-') && token.raw.toLowerCase() !== 'or') {
        for (const word of token.raw.replaceAll('"', ' ').split(/[^\p{L}\p{N}]+/u)) if (word) terms.push(word);
      }
      continue;
    }
    if (!value) continue;
    switch (filter) {
      case 'from':
      case 'mentions': {
        const id = resolve.user(value);
        if (id) add(filter === 'from' ? 'author_id' : 'mentions', id);
        else problems.push({ filter, value, kind: 'user' });
        break;
      }
      case 'in': {
        const id = resolve.channel(value);
        if (id) add('channel_id', id);
        else problems.push({ filter, value, kind: 'channel' });
        break;
      }
      case 'has': {
        const v = value.toLowerCase();
        if ((HAS_VALUES as readonly string[]).includes(v)) add('has', v);
        else problems.push({ filter, value, kind: 'has' });
        break;
      }
      case 'pinned': {
        const v = value.toLowerCase();
        if (v === 'true' || v === 'false') params.pinned = v;
        else problems.push({ filter, value, kind: 'pinned' });
        break;
      }
      default: {
        const day = dayBounds(value);
        if (!day) {
          problems.push({ filter, value, kind: 'date' });
          break;
        }
        if (filter === 'before') upper(idAt(day[0]));
        else if (filter === 'after') lower(idAt(day[1]) - 1n);
        else {
          lower(idAt(day[0]) - 1n);
          upper(idAt(day[1]));
        }
      }
    }
  }
  const content = words.join(' ').trim();
  if (content) params.content = content.slice(0, 1024);
  if (minId !== undefined && minId >= 0n) params.min_id = String(minId);
  if (maxId !== undefined) params.max_id = String(maxId);
  return { params, terms, problems };
}

/** A search with nothing to look for (no word, no filter) is not sent. */
export function isEmptySearch(params: SearchParams): boolean {
  return Object.keys(params).length === 0;
}

/**
 * Splits text into plain and marked parts: each term matches as a whole word, case-insensitively (the
 * server's `simple` configuration matches whole lower-cased words, no stems).
 */
export function markTerms(text: string, terms: string[]): { text: string; mark: boolean }[] {
  const unique = [...new Set(terms.map((t) => t.toLowerCase()))].filter(Boolean);
  if (unique.length === 0) return [{ text, mark: false }];
  const escaped = unique.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).sort((a, b) => b.length - a.length);
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  const parts: { text: string; mark: boolean }[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    if (at > last) parts.push({ text: text.slice(last, at), mark: false });
    parts.push({ text: m[0], mark: true });
    last = at + m[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), mark: false });
  return parts;
}
