import type { ByteRange } from '../../platform/storage/object-store.ts';

/**
 * Reads an HTTP `Range` header against an object of `size` bytes (docs/media.md#ranges). One range only:
 * `bytes=a-b`, `bytes=a-` or the suffix `bytes=-n`, its end clamped to the last byte.
 * - `undefined`: no header, or one this server does not act on (another unit, several ranges, garbled): the
 *   whole object is served with 200, as RFC 9110 allows.
 * - `'unsatisfiable'`: a well-formed range that starts past the end (or a zero-length suffix): 416.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
