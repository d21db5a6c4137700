import { ApiError, fieldError } from '../../http/errors.ts';
import { type RequestContext, StreamedBody } from '../../http/route.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { readStreamedMultipart, type StagedFile } from './streamed-multipart.ts';

/** The JSON body limit of every route (docs/conventions.md#requests), also for routes that read raw bytes. */
const MAX_JSON_BYTES = 1024 * 1024;

export interface MessageRequest {
  /** The JSON payload (the body, or `payload_json` of a multipart body), not yet validated. */
  payload: unknown;
  /** Inline files keyed by attachment index (`files[n]` → n); unindexed files get the next free index. */
  files: Map<string, StagedFile>;
}

/** A JSON body read from the stream, refused with 413 as soon as it passes MAX_JSON_BYTES. */
async function readJsonBytes(body: StreamedBody): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body.stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    length += bytes.length;
    if (length > MAX_JSON_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE');
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, length);
}

/**
 * Reads a message create/edit or webhook execute body: JSON, or multipart with `payload_json` and
 * `files[n]` (docs/media.md). Routes using it declare `bodyKind: 'stream'`: files go to the object store as
 * they arrive (staged, see `readStreamedMultipart`), never whole into memory.
 */
export async function readMessageRequest(
  ctx: Pick<RequestContext, 'rawBody' | 'request'>,
  objects: ObjectStore,
): Promise<MessageRequest> {
  if (!(ctx.rawBody instanceof StreamedBody)) throw new Error('readMessageRequest needs a bodyKind: stream route');
  const streamed = ctx.rawBody;
  const contentType = streamed.contentType;
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    const raw = await readJsonBytes(streamed);
    if (raw.length === 0) return { payload: {}, files: new Map() };
    if (raw.length > MAX_JSON_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE');
    try {
      return { payload: JSON.parse(raw.toString('utf8')), files: new Map() };
    } catch {
      throw fieldError('body', 'INVALID_FORMAT', 'Malformed JSON body');
    }
  }
  const body = await readStreamedMultipart(streamed, objects);
  // A multipart message carries its JSON in `payload_json` (the established format is strict here: loose
  // form fields do not stand in for it).
  const json = body.fields.get('payload_json');
  if (json === undefined) throw fieldError('payload_json', 'BASE_TYPE_REQUIRED', 'This field is required');
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    throw fieldError('payload_json', 'INVALID_FORMAT', 'Malformed payload_json');
  }
  // busboy reads a part without a filename (and not typed application/octet-stream) as a plain field; a
  // file part with an empty filename is refused rather than read as text.
  for (const name of body.fields.keys())
    if (/^files\[\d{1,2}\]$/.test(name)) throw fieldError(name, 'BASE_TYPE_REQUIRED', 'Filename is empty');
  const files = new Map<string, StagedFile>();
  const unindexed: StagedFile[] = [];
  for (const file of body.files) {
    const index = /^files\[(\d{1,2})\]$/.exec(file.field)?.[1];
    if (index === undefined) unindexed.push(file);
    else if (files.has(String(Number(index))))
      throw fieldError(file.field, 'INVALID_FORMAT', 'Two files share this index');
    else files.set(String(Number(index)), file);
  }
  // `file`, `files` and the like take the next free index; their attachment entry must still name it.
  let next = 0;
  for (const file of unindexed) {
    while (files.has(String(next))) next++;
    files.set(String(next), file);
  }
  return { payload, files };
}
