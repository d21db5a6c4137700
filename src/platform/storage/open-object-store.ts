import type { Logger } from '../log.ts';
import { LocalObjectStore, type ObjectStore } from './object-store.ts';

/**
 * The local filesystem unless `HEARTH_S3_BUCKET` is set. The S3 client is loaded only then, so a deployment
 * without S3 never pays for the SDK.
 */
/** The object-store settings (a subset of the server's Config; platform code does not import the config module). */
export interface ObjectStoreSettings {
  s3Bucket: string | undefined;
  s3AccessKeyId: string | undefined;
  s3SecretAccessKey: string | undefined;
  s3Region: string;
  s3Endpoint: string | undefined;
  s3ForcePathStyle: boolean;
  s3Prefix: string | undefined;
}

export async function openObjectStore(
  config: ObjectStoreSettings,
  localRoot: string,
  log: Logger,
): Promise<ObjectStore> {
  const { s3Bucket, s3AccessKeyId, s3SecretAccessKey } = config;
  if (!s3Bucket) return new LocalObjectStore(localRoot);
  // loadConfig refuses a bucket without keys; this guards callers that build a Config by hand.
  if (!s3AccessKeyId || !s3SecretAccessKey) throw new Error('HEARTH_S3_BUCKET needs the access key id and secret');
  const { S3ObjectStore } = await import('./s3-object-store.ts');
  // The keys never reach the log; the endpoint cannot carry credentials (loadConfig refuses user info).
  log.info('object store', {
    kind: 's3',
    bucket: s3Bucket,
    region: config.s3Region,
    endpoint: config.s3Endpoint ?? 'aws',
    path_style: config.s3ForcePathStyle,
    prefix: config.s3Prefix ?? '',
  });
  return new S3ObjectStore({
    bucket: s3Bucket,
    region: config.s3Region,
    endpoint: config.s3Endpoint,
    forcePathStyle: config.s3ForcePathStyle,
    accessKeyId: s3AccessKeyId,
    secretAccessKey: s3SecretAccessKey,
    prefix: config.s3Prefix,
  });
}
