import { ApiError, fieldError } from '../../http/errors.ts';

/** The JSON body limit of every route (api.md §1.1), also for routes that read raw bytes. */
const MAX_JSON_BYTES = 1024 * 1024;

import type { RequestContext } from '../../http/route.ts';
import { parseMultipart, type UploadedFile } from './multipart.ts';

export interface MessageRequest {
  /** The JSON payload (the body, or `payload_json` of a multipart body), not yet validated. */
  payload: unknown;
  /** Inline files keyed by attachment index (`files[n]` → n); unindexed files get the next free index. */
  files: Map<string, UploadedFile>;
}

/**
 * Reads a message create/edit or webhook execute body: JSON, or multipart with `payload_json` and
 * `files[n]` (api.md §3.10). Routes using it declare `bodyKind: 'raw'`.
 */
export async function readMessageRequest(ctx: Pick<RequestContext, 'rawBody' | 'request'>): Promise<MessageRequest> {
  const raw = Buffer.isBuffer(ctx.rawBody) ? ctx.rawBody : Buffer.alloc(0);
  const contentType = String(ctx.request.headers['content-type'] ?? '');
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    if (raw.length === 0) return { payload: {}, files: new Map() };
    if (raw.length > MAX_JSON_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE');
    try {
      return { payload: JSON.parse(raw.toString('utf8')), files: new Map() };
    } catch {
      throw fieldError('body', 'INVALID_FORMAT', 'Malformed JSON body');
    }
  }
  const body = await parseMultipart(raw, contentType);
  let payload: unknown = {};
  const json = body.fields.get('payload_json');
  if (json !== undefined) {
    try {
      payload = JSON.parse(json);
    } catch {
      throw fieldError('payload_json', 'INVALID_FORMAT', 'Malformed payload_json');
    }
  } else {
    // Plain form fields (content, username, …) stand in for payload_json.
    payload = Object.fromEntries([...body.fields].filter(([name]) => !name.startsWith('files')));
  }
  const files = new Map<string, UploadedFile>();
  let next = 0;
  for (const file of body.files) {
    const match = /^files\[(\d{1,2})\]$/.exec(file.field);
    let index = match ? match[1] : undefined;
    while (index === undefined || files.has(index)) index = String(next++);
    files.set(index, file);
  }
  return { payload, files };
}
