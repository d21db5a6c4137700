import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

/** The parts of s3rver (CommonJS, untyped) this helper uses. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
interface S3rverAccounts {
  DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

const require = createRequire(import.meta.url);

export interface TestS3 {
  /** http://127.0.0.1:<port> of the signature-checking front. */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client with the right keys, for creating buckets and listing what the server stored. */
  client: S3Client;
  /** Requests refused because their SigV4 signature did not verify. */
  rejected: number;
  createBucket(name: string): Promise<void>;
  listKeys(bucket: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A real S3-compatible server on loopback: s3rver (S3 REST API, filesystem-backed) behind a small front that
 * verifies every request's AWS Signature V4 with the test keys and forwards it. s3rver itself checks only the
 * access key id of V4 requests, so without the front a store that signed with the wrong secret, or not at
 * all, would pass.
 */
/** The settings that store a process's objects in `bucket` on this server. */
export function s3Env(s3: TestS3, bucket = 'hearth'): Record<string, string> {
  return {
    HEARTH_S3_BUCKET: bucket,
    HEARTH_S3_ENDPOINT: s3.endpoint,
    HEARTH_S3_REGION: s3.region,
    HEARTH_S3_ACCESS_KEY_ID: s3.accessKeyId,
    HEARTH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}

export async function startTestS3(): Promise<TestS3> {
  const S3rver = require('s3rver') as S3rverClass;
  const accounts = require('s3rver/lib/models/account.js') as S3rverAccounts;
  const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const region = 'us-east-1';
  accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

  const directory = await mkdtemp(join(tmpdir(), 'hearth-s3-'));
  const backend = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [] });
  const backendPort = (await backend.run()).port;

  const state = { rejected: 0 };
  const front = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const problem = verifySigV4(req, body, { accessKeyId, secretAccessKey, region });
    if (problem) {
      state.rejected += 1;
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${problem}</Code><Message>refused</Message></Error>`);
      return;
    }
    const upstream = httpRequest({
      host: '127.0.0.1',
      port: backendPort,
      method: req.method,
      path: req.url,
      headers: req.headers,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      // A client that goes away mid-answer (a killed server) must not leave the backend's response open.
      res.once('close', () => answer.destroy());
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    upstream.end(body);
  }
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

  return {
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    client,
    get rejected() {
      return state.rejected;
    },
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async listKeys(bucket) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async close() {
      client.destroy();
      await closeServer(front);
      await backend.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Returns the S3 error code for a request whose AWS Signature V4 header does not verify, else undefined. */
function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  keys: { accessKeyId: string; secretAccessKey: string; region: string },
): string | undefined {
  const header = req.headers.authorization;
  if (!header) return 'AccessDenied';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      header,
    );
  if (!match) return 'AccessDenied';
  const [, accessKeyId, date, region, signedHeaders, signature] = match as unknown as string[];
  if (accessKeyId !== keys.accessKeyId) return 'InvalidAccessKeyId';
  if (region !== keys.region) return 'AuthorizationHeaderMalformed';
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date as string)) return 'AccessDenied';
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256Hex(body)) return 'XAmzContentSHA256Mismatch';

  // S3 signs the path exactly as sent (encoded once, never normalised), so the raw request target is used.
  const target = req.url ?? '/';
  const at = target.indexOf('?');
  const path = at === -1 ? target : target.slice(0, at);
  const rawQuery = at === -1 ? '' : target.slice(at + 1);
  const query = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = decodeURIComponent(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? '' : decodeURIComponent(pair.slice(eq + 1));
      return `${rfc3986(name)}=${rfc3986(value)}`;
    })
    .sort()
    .join('&');
  const names = (signedHeaders as string).split(';');
  if (!names.includes('host')) return 'AccessDenied';
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [req.method, path, query, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${keys.secretAccessKey}`, date as string), region as string), 's3'),
    'aws4_request',
  );
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest();
  return timingSafeEqual(expected, Buffer.from(signature as string, 'hex')) ? undefined : 'SignatureDoesNotMatch';
}
