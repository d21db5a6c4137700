import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { type ByteRange, boundedChunks, isSafeKey, type ObjectInfo, type ObjectStore } from './object-store.ts';

/** S3's smallest multipart part (except the last): a streamed upload holds at most this much at once. */
const PART_BYTES = 5 * 1024 * 1024;

export interface S3ObjectStoreOptions {
  bucket: string;
  region: string;
  /** Unset = the AWS endpoint of the region; set for MinIO, Garage, Ceph RGW, R2 and the like. */
  endpoint?: string | undefined;
  /** `https://host/bucket/key` instead of `https://bucket.host/key`; most self-hosted services need it. */
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  /** Slash-separated folder every key is stored under (several deployments can share one bucket). */
  prefix?: string | undefined;
}

/** An `ObjectStore` on any S3-compatible service; the object's Content-Type carries the stored type. */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(options: S3ObjectStoreOptions) {
    const prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
    if (prefix !== '' && !isSafeKey(prefix)) throw new Error('unsafe object key prefix');
    this.prefix = prefix === '' ? '' : `${prefix}/`;
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      // Explicit credentials keep the SDK from searching the environment, profiles or instance metadata.
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      // Many S3-compatible services reject or ignore the SDK's default CRC32 checksums; send and check
      // them only where the S3 API demands it.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private keyOf(key: string): string {
    if (!isSafeKey(key)) throw new Error('unsafe object key');
    return this.prefix + key;
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.keyOf(key),
        Body: bytes,
        ContentLength: bytes.length,
        ContentType: contentType,
      }),
    );
  }

  /**
   * Small objects (one part or less) go up in one PutObject; larger ones as a multipart upload of 5 MiB parts,
   * aborted on any failure so no partial object (or orphaned parts) remains.
   */
  async putStream(
    key: string,
    source: AsyncIterable<Buffer | string>,
    contentType: string,
    maxBytes: number,
  ): Promise<number> {
    const Key = this.keyOf(key);
    let uploadId: string | undefined;
    const parts: { ETag: string | undefined; PartNumber: number }[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let size = 0;
    const flush = async () => {
      if (uploadId === undefined) {
        const created = await this.client.send(
          new CreateMultipartUploadCommand({ Bucket: this.bucket, Key, ContentType: contentType }),
        );
        uploadId = created.UploadId;
      }
      const body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const PartNumber = parts.length + 1;
      const uploaded = await this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key,
          UploadId: uploadId,
          PartNumber,
          Body: body,
          ContentLength: body.length,
        }),
      );
      parts.push({ ETag: uploaded.ETag, PartNumber });
    };
    try {
      for await (const chunk of boundedChunks(source, maxBytes)) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        size += chunk.length;
        if (pendingBytes >= PART_BYTES) await flush();
      }
      if (uploadId === undefined) {
        await this.put(key, Buffer.concat(pending, pendingBytes), contentType);
        return size;
      }
      if (pendingBytes > 0) await flush();
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      return size;
    } catch (error) {
      if (uploadId !== undefined)
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId }))
          .catch(() => undefined);
      throw error;
    }
  }

  async head(key: string, length: number): Promise<Buffer | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key), Range: `bytes=0-${length - 1}` }),
      );
      return object.Body ? Buffer.from(await object.Body.transformToByteArray()).subarray(0, length) : Buffer.alloc(0);
    } catch (error) {
      if (isMissing(error)) return undefined;
      // An empty object has no satisfiable range.
      if ((error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode === 416)
        return Buffer.alloc(0);
      throw error;
    }
  }

  /** A server-side copy then a delete: the bytes never pass through this process. */
  async move(from: string, to: string, contentType: string): Promise<void> {
    const source = this.keyOf(from);
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: this.keyOf(to),
        CopySource: `${this.bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
        ContentType: contentType,
        MetadataDirective: 'REPLACE',
      }),
    );
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: source }));
  }

  async get(key: string): Promise<{ bytes: Buffer; contentType: string } | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key) }));
      const bytes = object.Body ? Buffer.from(await object.Body.transformToByteArray()) : Buffer.alloc(0);
      return { bytes, contentType: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key) }));
      return {
        size: head.ContentLength ?? 0,
        contentType: head.ContentType ?? 'application/octet-stream',
        modified: head.LastModified?.getTime() ?? 0,
        version: `${head.ETag ?? ''}.${head.LastModified?.getTime() ?? 0}`,
      };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** One GetObject (with a `Range` when asked); its body is passed on as it arrives, never gathered. */
  async readStream(key: string, range?: ByteRange): Promise<Readable | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      const object = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const body = object.Body;
      if (!body) return Readable.from([]);
      // In Node the SDK's body is an IncomingMessage (a Readable); anything else is adapted from its web stream.
      if (body instanceof Readable) return body;
      return Readable.fromWeb(body.transformToWebStream() as Parameters<typeof Readable.fromWeb>[0]);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async size(key: string): Promise<number | undefined> {
    if (!isSafeKey(key)) return undefined;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key) }));
      return head.ContentLength;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    if (!isSafeKey(key)) return;
    // S3 answers 204 for a key that does not exist, so deleting twice is not an error here either.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key) }));
  }

  async keysOlderThan(prefix: string, before: number, limit: number): Promise<string[]> {
    if (!isSafeKey(prefix)) return [];
    const listed = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.keyOf(prefix)}/` }),
    );
    // One page (up to 1000 keys) per call: a sweep deletes what it lists, so the next call sees the rest.
    return (listed.Contents ?? [])
      .filter((object) => object.Key !== undefined && (object.LastModified?.getTime() ?? before) < before)
      .slice(0, limit)
      .map((object) => (object.Key as string).slice(this.prefix.length));
  }

  /** Closes the client's idle connections. */
  close(): void {
    this.client.destroy();
  }
}

/**
 * A missing object is `NoSuchKey` on GET and a bodiless 404 (`NotFound`) on HEAD. Other failures (access
 * denied, unknown bucket, network) stay errors: answering "not found" for them would hide a broken setup.
 */
function isMissing(error: unknown): boolean {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  return (e?.name === 'NoSuchKey' || e?.name === 'NotFound') && e.$metadata?.httpStatusCode === 404;
}
