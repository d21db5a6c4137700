import sharp from 'sharp';
import { type FieldError, fieldError, formError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { UPLOAD_BUCKET } from '../media/buckets.ts';
import { signCapability } from '../media/capability.ts';
import { sniffImageType } from '../media/user-images.ts';
import { MAX_FILE_BYTES, type UploadedFile } from './multipart.ts';

export const UPLOAD_TTL_S = 900;

export interface AttachmentRef {
  id: string;
  filename?: string | undefined;
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

/** Keeps filenames to one safe path segment; the name is shown to users and part of the media URL. */
export function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = [...base]
    .map((c) => (c.charCodeAt(0) < 0x20 || '"<>|?*:'.includes(c) ? '_' : c))
    .join('')
    .replace(/^\.+/, '')
    .slice(0, 255);
  return cleaned || 'file';
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

  /** Plans relay uploads: single-use keys bound to the identity and channel (api.md §3.10). */
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
   * Turns the `attachments` entries of a message plus its inline files into stored attachments. Entries with
   * `upload_filename` claim a relay upload; entries whose `id` names an inline file describe it; inline files no
   * entry names still attach.
   */
  async resolve(
    userId: string,
    channelId: string,
    refs: readonly AttachmentRef[],
    files: ReadonlyMap<string, UploadedFile>,
  ): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    const used = new Set<string>();
    for (const [index, ref] of refs.entries()) {
      if (ref.upload_filename !== undefined) {
        out.push(await this.claim(userId, channelId, ref, index));
        continue;
      }
      const file = files.get(ref.id);
      if (file) {
        used.add(ref.id);
        out.push(
          await this.store(
            channelId,
            file.bytes,
            ref.filename ?? file.filename,
            file.contentType,
            ref.description ?? null,
            ref.flags ?? 0,
          ),
        );
      }
    }
    for (const [id, file] of files) {
      if (!used.has(id)) out.push(await this.store(channelId, file.bytes, file.filename, file.contentType, null, 0));
    }
    return out;
  }

  private async claim(
    userId: string,
    channelId: string,
    ref: AttachmentRef,
    index: number,
  ): Promise<Record<string, unknown>> {
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
    const object = await this.deps.objects.get(`${UPLOAD_BUCKET}/${ref.upload_filename}`);
    if (!object || object.bytes.length !== Number(row.file_size)) {
      throw fieldError(`attachments.${index}.upload_filename`, 'FILE_NOT_FOUND', 'The uploaded file is missing');
    }
    await this.deps.objects.delete(`${UPLOAD_BUCKET}/${ref.upload_filename}`);
    return this.store(
      channelId,
      object.bytes,
      ref.filename ?? row.filename,
      row.content_type ?? object.contentType,
      ref.description ?? null,
      ref.flags ?? 0,
    );
  }

  private async store(
    channelId: string,
    bytes: Buffer,
    rawName: string,
    declaredType: string,
    description: string | null,
    flags: number,
  ) {
    const id = this.deps.ids.next();
    const filename = safeFilename(rawName);
    // The type comes from the bytes for images; anything else keeps the declared type but is served as a download.
    const sniffed = sniffImageType(bytes);
    const contentType = sniffed ?? declaredType.split(';')[0]?.trim() ?? 'application/octet-stream';
    await this.deps.objects.put(`attachments/${channelId}/${id}/${filename}`, bytes, contentType);
    let dimensions: { width?: number; height?: number } = {};
    if (sniffed) {
      try {
        const meta = await sharp(bytes).metadata();
        dimensions = { width: meta.width, height: meta.height };
      } catch {
        dimensions = {};
      }
    }
    const url = `${this.deps.mediaBase()}/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    return {
      id,
      filename,
      description,
      content_type: contentType,
      size: bytes.length,
      url,
      proxy_url: url,
      ...dimensions,
      flags,
    };
  }
}
