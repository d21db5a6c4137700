import { randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { ApiError, fieldError } from '../../http/errors.ts';
import type { StreamedBody } from '../../http/route.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { MAX_FIELD_BYTES, MAX_FIELDS, MAX_FILE_BYTES, MAX_FILES, MAX_PART_HEADER_BYTES } from './multipart.ts';

/** Where inline files wait, under a random name, until the message that carries them is stored. */
export const STAGING_BUCKET = 'staging';
/** How much of each file is kept in memory: enough to sniff an image type and read its dimensions. */
export const HEAD_BYTES = 64 * 1024;

/** An inline file already in the object store (at `stagedKey`), not in memory. */
export interface StagedFile {
  /** The form field (`files[3]`). */
  field: string;
  /** The part's filename as sent (may be empty: the attachment entry can name it). */
  filename: string;
  contentType: string;
  size: number;
  stagedKey: string;
  /** The first HEAD_BYTES bytes (all of a small file). */
  head: Buffer;
}

export interface StreamedMultipart {
  fields: Map<string, string>;
  files: StagedFile[];
}

const malformed = () => fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body');

/**
 * Replaces raw control bytes (other than tab, CR, LF) inside part headers with `_`, chunk by chunk: clients put
 * a filename in the header as they got it, busboy refuses a header holding a NUL, and a filename with control
 * characters is sanitised rather than refused (issue 16). File bytes pass through untouched. It also counts
 * the body against the route's bound.
 */
class PartHeaderScrubber extends Transform {
  private readonly delimiter: Buffer;
  /** Bytes held back because a delimiter or a header end may straddle two chunks. */
  private carry: Buffer = Buffer.alloc(0);
  private state: 'body' | 'header' | 'done' = 'body';
  private headerBytes = 0;
  private total = 0;

  constructor(
    boundary: string,
    private readonly limit: number,
  ) {
    super();
    this.delimiter = Buffer.from(`--${boundary}`, 'latin1');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.total += chunk.length;
    if (this.total > this.limit) {
      callback(new ApiError('PAYLOAD_TOO_LARGE'));
      return;
    }
    if (this.state === 'done') {
      callback(null, chunk);
      return;
    }
    // Always a copy: header bytes are scrubbed in place, never in the caller's chunk.
    const buffer = Buffer.concat([this.carry, chunk]);
    let position = 0;
    let emitUpTo = buffer.length;
    for (;;) {
      if (this.state === 'body') {
        const found = buffer.indexOf(this.delimiter, position);
        if (found === -1) {
          emitUpTo = Math.max(position, buffer.length - (this.delimiter.length + 1));
          break;
        }
        const start = found + this.delimiter.length;
        if (buffer.length < start + 2) {
          emitUpTo = found;
          break;
        }
        if (buffer[start] === 0x2d && buffer[start + 1] === 0x2d) {
          this.state = 'done';
          emitUpTo = buffer.length;
          break;
        }
        this.state = 'header';
        this.headerBytes = 0;
        position = start;
        continue;
      }
      // In a part's headers: scrub up to their end (CR LF CR LF), or all we have.
      const end = buffer.indexOf('\r\n\r\n', position);
      const stop = end === -1 ? buffer.length : end;
      // Without the end in sight, the last 3 bytes wait for the next chunk (the end may straddle the two).
      const scanned = end === -1 ? Math.max(position, buffer.length - 3) : end;
      this.headerBytes += scanned - position;
      if (this.headerBytes <= MAX_PART_HEADER_BYTES) {
        for (let i = position; i < stop; i++) {
          const byte = buffer[i] as number;
          if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0a) || byte === 0x7f) buffer[i] = 0x5f;
        }
      }
      if (end === -1) {
        emitUpTo = scanned;
        break;
      }
      this.state = 'body';
      position = end + 4;
    }
    this.carry = buffer.subarray(emitUpTo);
    callback(null, buffer.subarray(0, emitUpTo));
  }

  override _flush(callback: TransformCallback): void {
    callback(null, this.carry);
  }
}

/**
 * Reads a multipart/form-data body as it arrives: fields are kept (bounded), each file part is streamed to the
 * object store under `staging/` and only its first bytes stay in memory. Refusals are the same 400s as the
 * buffered reader (`BINARY_TYPE_MAX_SIZE` for a file above 25 MiB, limits on files, fields and parts) and a
 * body over the route's bound is 413; staged objects are removed when the exchange ends, whatever happened
 * (a consumer moves what it keeps first).
 */
export interface StreamedMultipartOptions {
  /** A smaller bound per file than MAX_FILE_BYTES, and the message of its `BINARY_TYPE_MAX_SIZE` (stickers). */
  maxFileBytes?: number;
  tooLargeMessage?: string;
  /** The field the size refusal names (default: the part's own field). */
  tooLargeField?: string;
}

export function readStreamedMultipart(
  body: StreamedBody,
  objects: ObjectStore,
  options: StreamedMultipartOptions = {},
): Promise<StreamedMultipart> {
  const maxFileBytes = Math.min(options.maxFileBytes ?? MAX_FILE_BYTES, MAX_FILE_BYTES);
  const staged: string[] = [];
  const puts: Promise<unknown>[] = [];
  body.afterResponse(async () => {
    await Promise.allSettled(puts);
    await Promise.all(staged.map((key) => objects.delete(key).catch(() => undefined)));
  });
  return new Promise((resolve, reject) => {
    const boundary = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(body.contentType);
    const value = boundary?.[1] ?? boundary?.[2];
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': body.contentType },
        // Browsers and undici send filenames as raw UTF-8 (busboy's default, latin1, mangles `é`).
        defParamCharset: 'utf8',
        limits: {
          files: MAX_FILES,
          fileSize: maxFileBytes,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_FILES + MAX_FIELDS,
        },
      });
    } catch {
      reject(malformed());
      return;
    }
    if (!value) {
      reject(malformed());
      return;
    }
    const fields = new Map<string, string>();
    const files: StagedFile[] = [];
    // The first refusal wins.
    let failure: Error | undefined;
    let settled = false;
    const source = body.stream;
    const scrubber = new PartHeaderScrubber(value, body.limit);
    const stop = (error: Error) => {
      failure ??= error;
      if (settled) return;
      settled = true;
      source.unpipe(scrubber);
      scrubber.unpipe(parser);
      // Ends every file stream still open, so each staged put fails and removes its partial object. Deferred:
      // busboy emits its events from inside its parse step and goes on using its state afterwards.
      setImmediate(() => parser.destroy(failure));
      Promise.allSettled(puts).then(() => reject(failure));
    };
    parser.on('field', (name, text, info) => {
      if (info.valueTruncated)
        stop(fieldError(name, 'CONTENT_EXCEEDS_MAX_LENGTH', `Form field exceeds ${MAX_FIELD_BYTES} bytes`));
      else fields.set(name, text);
    });
    parser.on('file', (field, stream, info) => {
      if (failure) {
        stream.resume();
        return;
      }
      const key = `${STAGING_BUCKET}/${randomBytes(16).toString('hex')}`;
      staged.push(key);
      const headChunks: Buffer[] = [];
      let headLength = 0;
      let limited = false;
      let cut = false;
      // A body cut inside a file errors the file stream (the client went away, or the parser was stopped).
      stream.on('error', () => {
        cut = true;
      });
      stream.on('limit', () => {
        limited = true;
        stop(
          fieldError(
            options.tooLargeField ?? field,
            'BINARY_TYPE_MAX_SIZE',
            options.tooLargeMessage ?? 'File cannot be larger than 25 MiB',
          ),
        );
      });
      async function* tapped(): AsyncGenerator<Buffer> {
        for await (const chunk of stream) {
          const bytes = chunk as Buffer;
          if (headLength < HEAD_BYTES) {
            const part = bytes.subarray(0, HEAD_BYTES - headLength);
            headChunks.push(Buffer.from(part));
            headLength += part.length;
          }
          yield bytes;
        }
        // busboy ends a file at the size limit without an error: never store a cut file.
        if (limited) throw new ApiError('PAYLOAD_TOO_LARGE');
      }
      const contentType = info.mimeType || 'application/octet-stream';
      const put = objects.putStream(key, tapped(), contentType, maxFileBytes).then(
        (size) => {
          files.push({
            field,
            filename: info.filename ?? '',
            contentType,
            size,
            stagedKey: key,
            head: Buffer.concat(headChunks, headLength),
          });
        },
        (error: unknown) => {
          // A refusal or a cut body is the client's doing (4xx); a store that fails on its own is a 500.
          stop(failure ?? (error instanceof ApiError ? error : cut ? malformed() : (error as Error)));
        },
      );
      puts.push(put);
    });
    parser.on('filesLimit', () => stop(fieldError('files', 'INVALID_FORMAT', `At most ${MAX_FILES} files`)));
    parser.on('fieldsLimit', () => stop(fieldError('body', 'INVALID_FORMAT', `At most ${MAX_FIELDS} form fields`)));
    parser.on('partsLimit', () =>
      stop(fieldError('body', 'INVALID_FORMAT', `At most ${MAX_FILES + MAX_FIELDS} form parts`)),
    );
    parser.on('error', () => stop(malformed()));
    parser.on('close', () => {
      if (settled) return;
      // Files finish storing after their part ends; the body is read when every put has settled.
      Promise.allSettled(puts).then(() => {
        if (settled) return;
        settled = true;
        // Parts keep the order they were sent in (a put may finish out of order).
        files.sort((a, b) => staged.indexOf(a.stagedKey) - staged.indexOf(b.stagedKey));
        resolve({ fields, files });
      });
    });
    scrubber.on('error', (error) => stop(error instanceof ApiError ? error : malformed()));
    // A client that disconnects mid-body: the request stream errors or closes without ending.
    source.on('error', () => stop(malformed()));
    source.on('close', () => {
      if (!source.readableEnded) stop(malformed());
    });
    source.pipe(scrubber).pipe(parser);
  });
}
