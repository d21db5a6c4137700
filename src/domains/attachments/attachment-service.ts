import { type FieldError, fieldError, formError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { UPLOAD_BUCKET } from '../media/buckets.ts';
import { signCapability } from '../media/capability.ts';
import { imageDimensions } from '../media/image-dimensions.ts';
import { sniffImageType } from '../media/user-images.ts';
import type { AttachmentView } from './attachment-view.ts';
import { attachmentObjectKey, deleteDiscardedFiles, queueDiscardedFiles } from './discarded-files.ts';
import { MAX_FILE_BYTES } from './multipart.ts';
import { HEAD_BYTES, type StagedFile } from './streamed-multipart.ts';

export const UPLOAD_TTL_S = 900;

/**
 * Files a request deletes itself once it deleted or edited messages (a bulk delete: 100 messages of up to 10 files);
 * beyond that, the janitor's next sweep deletes them.
 */
export const REQUEST_DISCARD_LIMIT = 1000;
const REQUEST_DISCARD_BATCH = 100;

export interface AttachmentRef {
  /** The upload index of an inline file (`files[n]`), a relay upload's own id, or (edits) an existing attachment's id. */
  id: string;
  filename?: string | undefined;
  title?: string | null | undefined;
  description?: string | null | undefined;
  upload_filename?: string | undefined;
  flags?: number | undefined;
}

export interface PlannedUpload {
  id: string;
  filename: string;
  file_size: number;
  content_type?: string | undefined;
}

/**
 * A stored name's bound in UTF-8 bytes: it is one path segment of the object key, and the local store adds
 * `.type` beside it, so 255 bytes (NAME_MAX) would answer ENAMETOOLONG. The same name is shown to users.
 */
export const MAX_FILENAME_BYTES = 200;
/** An extension this long or shorter survives truncation (`report.pdf` stays a PDF). */
const MAX_KEPT_EXTENSION = 16;

/** Control characters (C0, DEL, C1), lone surrogates, and bidi controls that could disguise an extension. */
function unsafeCodePoint(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0xd800 && code <= 0xdfff) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function truncateUtf8(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const c of text) {
    const size = Buffer.byteLength(c);
    if (bytes + size > maxBytes) break;
    out += c;
    bytes += size;
  }
  return out;
}

/**
 * Keeps filenames to one safe path segment; the name is shown to users and part of the media URL. Unsafe
 * characters (NUL and other controls included) become `_` rather than refusing the upload, and long names are
 * cut to MAX_FILENAME_BYTES keeping their extension.
 */
export function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = [...base]
    .map((c) => (unsafeCodePoint(c.codePointAt(0) ?? 0) || '"<>|?*:'.includes(c) ? '_' : c))
    .join('')
    .replace(/^\.+/, '');
  if (Buffer.byteLength(cleaned) <= MAX_FILENAME_BYTES) return cleaned || 'file';
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 && cleaned.length - dot <= MAX_KEPT_EXTENSION ? cleaned.slice(dot) : '';
  const stem = extension ? cleaned.slice(0, dot) : cleaned;
  return truncateUtf8(stem, MAX_FILENAME_BYTES - Buffer.byteLength(extension)) + extension || 'file';
}

/**
 * Checks a message's attachment entries against its inline files before anything is stored, as strictly as the
 * established format: every file needs the entry naming its index, every entry needs its file, a relay upload
 * (`upload_filename`) or, in an edit, an attachment the message already has; ids are unique; a file's name
 * (the entry's `filename`, else the part's) is not empty.
 */
export function checkAttachmentPairing(
  refs: readonly AttachmentRef[],
  files: ReadonlyMap<string, StagedFile>,
  existingIds: ReadonlySet<string> = new Set(),
): void {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [index, ref] of refs.entries()) {
    if (seen.has(ref.id)) {
      errors.push({ path: `attachments.${index}.id`, code: 'INVALID_FORMAT', message: 'Duplicate attachment id' });
      continue;
    }
    seen.add(ref.id);
    const file = ref.upload_filename === undefined ? files.get(ref.id) : undefined;
    if (ref.filename === '' || (file && (ref.filename ?? file.filename) === ''))
      errors.push({ path: `attachments.${index}.filename`, code: 'BASE_TYPE_REQUIRED', message: 'Filename is empty' });
    if (ref.upload_filename === undefined && !file && !existingIds.has(ref.id)) {
      errors.push({
        path: `attachments.${index}.id`,
        code: 'FILE_NOT_FOUND',
        message: `No file was uploaded as files[${ref.id}]`,
      });
    }
  }
  for (const [index, file] of files) {
    if (!refs.some((ref) => ref.upload_filename === undefined && ref.id === index))
      errors.push({
        path: file.field,
        code: 'BASE_TYPE_REQUIRED',
        message: `No attachments entry has id ${index}`,
      });
  }
  if (errors.length) throw formError(errors);
}

/**
 * Stores message attachments (inline multipart files or claimed relay uploads) under
 * `attachments/<channel>/<id>/<filename>` and builds their wire objects with media-proxy URLs.
 */
export class AttachmentService {
  constructor(
    private readonly deps: {
      db: Database;
      objects: ObjectStore;
      ids: SnowflakeGenerator;
      clock: Clock;
      relaySecret: string;
      /** `endpoints.media` */
      mediaBase: () => string;
    },
  ) {}

  /** Plans relay uploads: single-use keys bound to the identity and channel (docs/media.md). */
  async plan(userId: string, channelId: string, entries: PlannedUpload[]) {
    const now = this.deps.clock.now();
    const expiresS = Math.floor(now / 1000) + UPLOAD_TTL_S;
    const errors: FieldError[] = [];
    entries.forEach((entry, index) => {
      if (entry.file_size > MAX_FILE_BYTES)
        errors.push({
          path: `attachments.${index}.file_size`,
          code: 'CONTENT_EXCEEDS_MAX_LENGTH',
          message: 'File exceeds 25 MiB',
        });
    });
    if (errors.length) throw formError(errors);
    const planned = [];
    for (const entry of entries) {
      const key = randomBase62(32);
      const contentType = entry.content_type ?? 'application/octet-stream';
      await this.deps.db.query(
        `INSERT INTO pending_uploads (upload_key, user_id, channel_id, filename, file_size, content_type, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [key, userId, channelId, safeFilename(entry.filename), entry.file_size, contentType, new Date(expiresS * 1000)],
      );
      const t = signCapability(this.deps.relaySecret, {
        b: UPLOAD_BUCKET,
        k: key,
        m: 'put',
        ct: contentType,
        mb: entry.file_size,
        e: expiresS,
      });
      planned.push({
        id: entry.id,
        upload_filename: key,
        upload_mode: 'singlepart',
        upload_url: `${this.deps.mediaBase()}/v1/relay/${key}?t=${t}`,
        content_type: contentType,
        expires_at: new Date(expiresS * 1000).toISOString(),
      });
    }
    return { attachments: planned };
  }

  /**
   * Turns the `attachments` entries of a message plus its inline files into stored attachments, in the entries'
   * order (checked by `checkAttachmentPairing` first, so a refused body stores nothing): entries with
   * `upload_filename` claim a relay upload, entries naming an inline file's index describe it, and in an edit
   * entries naming one of `existing` keep it.
   */
  async resolve(
    userId: string,
    channelId: string,
    refs: readonly AttachmentRef[],
    files: ReadonlyMap<string, StagedFile>,
    existing: readonly AttachmentView[] = [],
  ): Promise<AttachmentView[]> {
    const kept = new Map(existing.map((a) => [a.id, a]));
    checkAttachmentPairing(refs, files, new Set(kept.keys()));
    const out: AttachmentView[] = [];
    for (const [index, ref] of refs.entries()) {
      if (ref.upload_filename !== undefined) {
        out.push(await this.claim(userId, channelId, ref, index));
        continue;
      }
      const file = files.get(ref.id);
      if (file) {
        out.push(
          await this.store(channelId, file.stagedKey, file, ref.filename ?? file.filename, file.contentType, ref),
        );
        continue;
      }
      const previous = kept.get(ref.id);
      if (previous) out.push(previous);
    }
    return out;
  }

  /**
   * Deletes the files of attachments message `messageId` no longer has (an edit dropped them): their URLs answer 404
   * from then on, unless a forward of the message still shows them (they stay queued until it is gone). The edit is
   * already stored, so a store failure leaves a queued file for the janitor, not a broken message.
   */
  async discard(channelId: string, messageId: string, removed: readonly AttachmentView[]): Promise<void> {
    if (removed.length === 0) return;
    await queueDiscardedFiles(this.deps.db, channelId, messageId, removed);
    await this.deleteDiscarded([messageId]);
  }

  /**
   * Deletes now the queued files of messages a request just deleted (the database queued them) or edited, up to
   * `REQUEST_DISCARD_LIMIT` of them; the janitor's sweep takes whatever is left (docs/media.md, Attachments). The
   * messages are already gone, so a failure here is left to that sweep rather than failing the request.
   */
  async deleteDiscarded(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    await deleteDiscardedFiles(this.deps.db, this.deps.objects, {
      messageIds,
      batchSize: REQUEST_DISCARD_BATCH,
      maxBatches: REQUEST_DISCARD_LIMIT / REQUEST_DISCARD_BATCH,
    }).catch(() => 0);
  }

  private async claim(userId: string, channelId: string, ref: AttachmentRef, index: number): Promise<AttachmentView> {
    const [row] = await this.deps.db.query<{ filename: string; content_type: string | null; file_size: string }>(
      `UPDATE pending_uploads SET claimed_at = $4
        WHERE upload_key = $1 AND user_id = $2 AND channel_id = $3 AND claimed_at IS NULL AND expires_at > $4
        RETURNING filename, content_type, file_size`,
      [ref.upload_filename, userId, channelId, new Date(this.deps.clock.now())],
    );
    if (!row)
      throw fieldError(
        `attachments.${index}.upload_filename`,
        'UPLOADED_ATTACHMENT_NOT_FOUND',
        'Uploaded attachment not found',
      );
    const key = `${UPLOAD_BUCKET}/${ref.upload_filename}`;
    const size = await this.deps.objects.size(key);
    const head = size === undefined ? undefined : await this.deps.objects.head(key, HEAD_BYTES);
    if (size === undefined || head === undefined || size !== Number(row.file_size)) {
      throw fieldError(`attachments.${index}.upload_filename`, 'FILE_NOT_FOUND', 'The uploaded file is missing');
    }
    return this.store(
      channelId,
      key,
      { size, head },
      ref.filename ?? row.filename,
      row.content_type ?? 'application/octet-stream',
      ref,
    );
  }

  /**
   * Moves an object already in the store (a staged inline file, a relay upload) to its attachment key: the
   * bytes are never read whole, only their first HEAD_BYTES for the image type and dimensions.
   */
  private async store(
    channelId: string,
    sourceKey: string,
    file: { size: number; head: Buffer },
    rawName: string,
    declaredType: string,
    ref: AttachmentRef,
  ): Promise<AttachmentView> {
    const id = this.deps.ids.next();
    const filename = safeFilename(rawName);
    // The type comes from the bytes for images; anything else keeps the declared type but is served as a download.
    const sniffed = sniffImageType(file.head);
    const contentType = sniffed ?? declaredType.split(';')[0]?.trim() ?? 'application/octet-stream';
    await this.deps.objects.move(sourceKey, attachmentObjectKey(channelId, { id, filename }), contentType);
    const dimensions = sniffed ? await imageDimensions(file.head) : {};
    const url = `${this.deps.mediaBase()}/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    return {
      id,
      filename,
      ...(ref.title ? { title: ref.title } : {}),
      description: ref.description ?? null,
      content_type: contentType,
      size: file.size,
      url,
      proxy_url: url,
      ...dimensions,
      flags: ref.flags ?? 0,
    };
  }
}
