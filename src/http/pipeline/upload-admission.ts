import type { IncomingMessage } from 'node:http';
import type { ConcurrencyGate } from '../../platform/concurrency-gate.ts';
import { rateLimited } from '../errors.ts';
import type { AnyRoute } from '../route.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;
export const UPLOADS_TOTAL = 32;
export const UPLOADS_PER_CALLER = 3;

/**
 * A body above the JSON limit (an upload, streamed to the object store as it arrives): at most UPLOADS_TOTAL
 * of them at once in this process and UPLOADS_PER_CALLER per user (or address), else 429 RATE_LIMITED before
 * a byte is read (docs/media.md#uploads-in-flight). Returns the slot's release, or undefined when no slot is
 * needed.
 */
export function admitUpload(
  uploads: ConcurrencyGate,
  spec: Pick<AnyRoute, 'bodyLimit'>,
  request: Pick<IncomingMessage, 'complete' | 'headers'>,
  caller: string,
): (() => void) | undefined {
  if ((spec.bodyLimit ?? JSON_BODY_LIMIT) <= JSON_BODY_LIMIT || request.complete) return undefined;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared <= JSON_BODY_LIMIT) return undefined;
  const processFull = uploads.inUse >= uploads.total;
  const release = uploads.tryEnter(caller);
  // `shared`: the process is at its bound for everyone; `user`: this caller has its share in flight.
  if (!release) throw rateLimited(1000, false, { 'X-RateLimit-Scope': processFull ? 'shared' : 'user' });
  return release;
}
