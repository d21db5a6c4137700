import { createHash } from 'node:crypto';

/**
 * HTTP validators and conditional requests for media (docs/media.md#conditional-requests), after RFC 9110
 * §8.8 and §13: a strong `ETag` and a `Last-Modified` on every media response, `If-Match`,
 * `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since` evaluated in the RFC's order, and `If-Range`.
 * Garbled headers are never an error: a malformed member of an entity-tag list matches nothing, and a date that
 * is not a valid HTTP-date is ignored.
 */
export interface Validators {
  /** A strong entity tag, quotes included. */
  etag: string;
  /** Last modification, ms since the epoch (sent, and compared, to the second). */
  lastModified?: number;
}

/** A strong entity tag from the parts that determine a representation's bytes (never the bytes themselves). */
export function entityTag(parts: readonly (string | number)[]): string {
  const digest = createHash('sha256').update(parts.join('\n')).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** A strong entity tag from the bytes themselves (what the media proxy sends: it holds them anyway). */
export function contentTag(bytes: Buffer, contentType: string): string {
  const digest = createHash('sha256').update(contentType).update('\n').update(bytes).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** IMF-fixdate, the one form sent (`Sun, 06 Nov 1994 08:49:37 GMT`). */
export function httpDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toUTCString();
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850_DATE =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utc(year: number, month: string, day: number, hour: number, minute: number, second: number) {
  const m = MONTHS.indexOf(month);
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, m, day, hour, minute, Math.min(second, 59));
  const date = new Date(ms);
  // A day past the month's end (`31 Feb`) is not a date.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== m || date.getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * An HTTP-date in any of the three forms RFC 9110 §5.6.7 has recipients accept (a two-digit RFC 850 year
 * within 50 years of now); undefined for anything else, including impossible calendar dates.
 */
export function parseHttpDate(value: string | undefined): number | undefined {
  if (value === undefined || value.length > 64) return undefined;
  const text = value.trim();
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, d, mon, y, h, mi, s] = match as unknown as string[];
    return utc(Number(y), mon as string, Number(d), Number(h), Number(mi), Number(s));
  }
  match = RFC850_DATE.exec(text);
  if (match) {
    const [, d, mon, yy, h, mi, s] = match as unknown as string[];
    const now = new Date().getUTCFullYear();
    let year = Math.floor(now / 100) * 100 + Number(yy);
    if (year > now + 50) year -= 100;
    return utc(year, mon as string, Number(d), Number(h), Number(mi), Number(s));
  }
  match = ASCTIME_DATE.exec(text);
  if (match) {
    const [, mon, d, h, mi, s, y] = match as unknown as string[];
    return utc(Number(y), mon as string, Number((d as string).trim()), Number(h), Number(mi), Number(s));
  }
  return undefined;
}

interface ParsedTag {
  weak: boolean;
  /** The opaque tag with its quotes. */
  opaque: string;
}

const TAG_AT = /\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/y;

/**
 * `*`, or the well-formed entity tags of a list (`"a", W/"b"`). A member that is not an entity tag is skipped
 * (up to the next comma), so it matches nothing; at most 64 members are read.
 */
export function parseEntityTags(value: string | string[] | undefined): '*' | ParsedTag[] | undefined {
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(', ') : value).slice(0, 8192);
  if (text.trim() === '*') return '*';
  const tags: ParsedTag[] = [];
  let position = 0;
  while (position < text.length && tags.length < 64) {
    TAG_AT.lastIndex = position;
    const match = TAG_AT.exec(text);
    if (match) {
      tags.push({ weak: match[1] !== undefined, opaque: match[2] as string });
      position = TAG_AT.lastIndex;
      continue;
    }
    const comma = text.indexOf(',', position);
    if (comma === -1) break;
    position = comma + 1;
  }
  return tags;
}

type Headers = Record<string, string | string[] | undefined>;
const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const seconds = (ms: number) => Math.floor(ms / 1000) * 1000;

/**
 * What a GET's preconditions decide (RFC 9110 §13.2.2): `proceed`, `not-modified` (answer 304) or `failed`
 * (answer 412).
 */
export function evaluatePreconditions(headers: Headers, validators: Validators): 'proceed' | 'not-modified' | 'failed' {
  const ifMatch = parseEntityTags(headers['if-match']);
  if (ifMatch !== undefined) {
    // Strong comparison: a weak tag never matches.
    const matched = ifMatch === '*' || ifMatch.some((t) => !t.weak && t.opaque === validators.etag);
    if (!matched) return 'failed';
  } else {
    const since = parseHttpDate(single(headers['if-unmodified-since']));
    if (since !== undefined && validators.lastModified !== undefined && seconds(validators.lastModified) > since)
      return 'failed';
  }
  const ifNoneMatch = parseEntityTags(headers['if-none-match']);
  if (ifNoneMatch !== undefined) {
    // Weak comparison: `W/"x"` matches `"x"`.
    const matched = ifNoneMatch === '*' || ifNoneMatch.some((t) => t.opaque === validators.etag);
    return matched ? 'not-modified' : 'proceed';
  }
  const since = parseHttpDate(single(headers['if-modified-since']));
  if (since !== undefined && validators.lastModified !== undefined && seconds(validators.lastModified) <= since)
    return 'not-modified';
  return 'proceed';
}

/**
 * Whether a `Range` may be acted on given `If-Range` (RFC 9110 §13.1.5): true without `If-Range`; with one,
 * only for a strong entity tag equal to ours, or an HTTP-date equal to our Last-Modified. A weak tag, a stale
 * validator or a garbled one means the whole representation (200).
 */
export function ifRangeHolds(headers: Headers, validators: Validators): boolean {
  const raw = single(headers['if-range']);
  if (raw === undefined) return true;
  const value = raw.trim();
  if (value.startsWith('"') || value.startsWith('W/')) {
    const tags = parseEntityTags(value);
    return Array.isArray(tags) && tags.length === 1 && !tags[0]?.weak && tags[0]?.opaque === validators.etag;
  }
  const date = parseHttpDate(value);
  return date !== undefined && validators.lastModified !== undefined && date === seconds(validators.lastModified);
}
