import { Readable } from 'node:stream';
import { fieldError } from '../errors.ts';
import { type AnyRoute, StreamedBody } from '../route.ts';
import { JSON_BODY_LIMIT } from './upload-admission.ts';

/**
 * Step 7: the raw request bytes become what the route reads: JSON by default (content type not required),
 * a form, or the bytes as they are (`raw`, `multipart`). Malformed JSON is a field error on `body`.
 */
export function decodeBody(spec: Pick<AnyRoute, 'bodyKind'>, body: unknown): unknown {
  const kind = spec.bodyKind ?? 'json';
  if (kind === 'raw' || kind === 'multipart') return body;
  if (!Buffer.isBuffer(body) || body.length === 0) return {};
  const text = body.toString('utf8');
  if (kind === 'form') return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw fieldError('body', 'INVALID_FORMAT', 'Malformed JSON body');
  }
}

/**
 * Step 7 for a `stream` route: the unread request stream (docs/media.md#uploads-in-flight). What the route
 * staged is cleaned up when the exchange ends (`onClose` registers that).
 */
export function decodeStreamedBody(
  spec: Pick<AnyRoute, 'bodyLimit'>,
  body: unknown,
  contentType: string,
  onClose: (settle: () => void) => void,
): StreamedBody {
  const limit = spec.bodyLimit ?? JSON_BODY_LIMIT;
  const streamed =
    body instanceof Readable ? new StreamedBody(body, contentType, limit) : StreamedBody.empty(contentType, limit);
  onClose(() => streamed.settle());
  return streamed;
}
