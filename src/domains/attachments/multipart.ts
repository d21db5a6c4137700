import busboy from 'busboy';
import { ApiError, fieldError } from '../../http/errors.ts';

export const MAX_FILE_BYTES = 25 * 1024 * 1024;
export const MAX_FILES = 10;

export interface UploadedFile {
  /** The form field (`files[3]`). */
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface MultipartBody {
  fields: Map<string, string>;
  files: UploadedFile[];
}

/** Parses a buffered multipart/form-data body with limits; every failure is a 4xx. */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { files: MAX_FILES, fileSize: MAX_FILE_BYTES, fields: 50, fieldSize: 1024 * 1024 },
      });
    } catch {
      reject(fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body'));
      return;
    }
    const fields = new Map<string, string>();
    const files: UploadedFile[] = [];
    let failure: ApiError | undefined;
    parser.on('field', (name, value) => fields.set(name, value));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        failure = new ApiError('PAYLOAD_TOO_LARGE', { message: 'File exceeds 25 MiB' });
      });
      stream.on('end', () => {
        files.push({
          field,
          filename: info.filename || 'file',
          contentType: info.mimeType || 'application/octet-stream',
          bytes: Buffer.concat(chunks),
        });
      });
    });
    parser.on('filesLimit', () => {
      failure = fieldError('files', 'INVALID_FORMAT', `At most ${MAX_FILES} files`);
    });
    parser.on('error', () => reject(fieldError('body', 'INVALID_FORMAT', 'Malformed multipart body')));
    parser.on('close', () => (failure ? reject(failure) : resolve({ fields, files })));
    parser.end(body);
  });
}
