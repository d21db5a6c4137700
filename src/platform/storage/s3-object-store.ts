import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { isSafeKey, type ObjectStore } from './object-store.ts';

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
