import busboy from 'busboy';
import { type ApiError, fieldError } from '../../http/errors.ts';

export const MAX_FILE_BYTES = 25 * 1024 * 1024;
export const MAX_FILES = 10;
/** Form fields besides files: `payload_json`, and room for a client's extras; more is a malformed body. */
export const MAX_FIELDS = 50;
export const MAX_FIELD_BYTES = 1024 * 1024;

export interface UploadedFile {
  /** The form field (`files[3]`). */
  field: string;
  /** The part's filename as sent (may be empty: the attachment entry can name it). */
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface MultipartBody {
  fields: Map<string, string>;
  files: UploadedFile[];
}

/** Part headers longer than this are left as they are (busboy refuses them anyway). */
export const MAX_PART_HEADER_BYTES = 16 * 1024;

/**
 * Replaces raw control bytes (other than tab, CR, LF) inside part headers with `_`. Clients put a filename in
 * the header as they got it (undici's and browsers' FormData escape only CR, LF and `"`), and busboy refuses
 * a header holding a NUL; a filename with control characters is sanitised, not refused (issue 16), so they are
 * neutralised before parsing. Bodies are never touched; the buffer is copied only when a header needs it.
 */
function neutraliseHeaderControls(body: Buffer, contentType: string): Buffer {
  const boundary = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  const value = boundary?.[1] ?? boundary?.[2];
  if (!value) return body;
  const delimiter = Buffer.from(`--${value}`, 'latin1');
  let out = body;
  let position = body.indexOf(delimiter);
  while (position !== -1) {
    const start = position + delimiter.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break;
    const end = body.indexOf('\r\n\r\n', start);
    if (end === -1) break;
    if (end - start <= MAX_PART_HEADER_BYTES) {
      for (let i = start; i < end; i++) {
        const byte = body[i] as number;
        if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0a) || byte === 0x7f) {
          if (out === body) out = Buffer.from(body);
          out[i] = 0x5f;
        }
      }
    }
    position = body.indexOf(delimiter, end + 4);
  }
  return out;
}

/**
 * Parses a buffered multipart/form-data body with limits; every failure is a 400 (INVALID_FORM_BODY), never a
 * 5xx: a file above 25 MiB is `BINARY_TYPE_MAX_SIZE` on its field, too many files, fields or parts and a
 * truncated field are refused rather than silently cut.
 */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // Browsers and undici send filenames as raw UTF-8 (busboy's default, latin1, mangles `é`).
        defParamCharset: 'utf8',
        limits: {
          files: MAX_FILES,
          fileSize: MAX_FILE_BYTES,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_FILES + MAX_FIELDS,
        },
      });
    } catch {
      reject(fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body'));
      return;
    }
    const fields = new Map<string, string>();
    const files: UploadedFile[] = [];
    // The first refusal wins; busboy keeps draining the body so that `close` still comes.
    let failure: ApiError | undefined;
    const fail = (error: ApiError) => {
      failure ??= error;
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated)
        fail(fieldError(name, 'CONTENT_EXCEEDS_MAX_LENGTH', `Form field exceeds ${MAX_FIELD_BYTES} bytes`));
      else fields.set(name, value);
    });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!failure) chunks.push(chunk);
      });
      // A body cut inside a file errors the file stream too; unheard, that would be an uncaught exception.
      stream.on('error', () => fail(fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body')));
      stream.on('limit', () => {
        fail(fieldError(field, 'BINARY_TYPE_MAX_SIZE', 'File cannot be larger than 25 MiB'));
      });
      stream.on('end', () => {
        if (failure) return;
        files.push({
          field,
          filename: info.filename ?? '',
          contentType: info.mimeType || 'application/octet-stream',
          bytes: Buffer.concat(chunks),
        });
      });
    });
    parser.on('filesLimit', () => fail(fieldError('files', 'INVALID_FORMAT', `At most ${MAX_FILES} files`)));
    parser.on('fieldsLimit', () => fail(fieldError('body', 'INVALID_FORMAT', `At most ${MAX_FIELDS} form fields`)));
    parser.on('partsLimit', () =>
      fail(fieldError('body', 'INVALID_FORMAT', `At most ${MAX_FILES + MAX_FIELDS} form parts`)),
    );
    parser.on('error', () => reject(fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body')));
    parser.on('close', () => (failure ? reject(failure) : resolve({ fields, files })));
    parser.end(neutraliseHeaderControls(body, contentType));
  });
}
