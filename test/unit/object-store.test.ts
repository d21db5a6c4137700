import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { LocalObjectStore, type ObjectStore, ObjectTooLargeError } from '../../src/platform/storage/object-store.ts';
import { S3ObjectStore } from '../../src/platform/storage/s3-object-store.ts';
import { startTestS3, type TestS3 } from '../support/s3-server.ts';

let s3: TestS3;
let localRoot: string;
const BUCKET = 'hearth-contract';

before(async () => {
  s3 = await startTestS3();
  await s3.createBucket(BUCKET);
  localRoot = await mkdtemp(join(tmpdir(), 'hearth-objects-'));
});
after(async () => {
  await s3?.close();
  if (localRoot) await rm(localRoot, { recursive: true, force: true });
});

function s3Store(overrides: Partial<ConstructorParameters<typeof S3ObjectStore>[0]> = {}): S3ObjectStore {
  return new S3ObjectStore({
    bucket: BUCKET,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    ...overrides,
  });
}

const UNSAFE_KEYS = ['', '../escape', 'a/../../b', 'a//b', './a', 'a/', '/a', 'a\\b', 'a\0b', 'x'.repeat(1025)];

/** Both stores must behave the same: the rest of the server only ever sees `ObjectStore`. */
for (const kind of ['local', 's3'] as const) {
  describe(`ObjectStore contract: ${kind}`, () => {
    let store: ObjectStore;
    before(() => {
      store = kind === 'local' ? new LocalObjectStore(localRoot) : s3Store();
    });

    it('stores bytes with their content type, reports the size, and deletes', async () => {
      const key = `attachments/1/${randomBytes(4).toString('hex')}/photo one.png`;
      const bytes = randomBytes(3000);
      await store.put(key, bytes, 'image/png');
      const got = await store.get(key);
      assert.ok(got, 'the object should be found');
      assert.ok(got.bytes.equals(bytes));
      assert.equal(got.contentType, 'image/png');
      assert.equal(await store.size(key), 3000);
      await store.delete(key);
      assert.equal(await store.get(key), undefined);
      assert.equal(await store.size(key), undefined);
      await store.delete(key); // deleting what is gone is not an error
    });

    it('overwrites an existing key, content type included', async () => {
      const key = `uploads/${randomBytes(4).toString('hex')}`;
      await store.put(key, Buffer.from('first'), 'text/plain');
      await store.put(key, Buffer.from('second!'), 'application/json');
      const got = await store.get(key);
      assert.equal(got?.bytes.toString(), 'second!');
      assert.equal(got?.contentType, 'application/json');
      assert.equal(await store.size(key), 7);
    });

    it('stores an empty object', async () => {
      const key = `empty/${randomBytes(4).toString('hex')}`;
      await store.put(key, Buffer.alloc(0), 'application/octet-stream');
      const got = await store.get(key);
      assert.equal(got?.bytes.length, 0);
      assert.equal(await store.size(key), 0);
    });

    it('answers undefined for a missing key, never an exception', async () => {
      assert.equal(await store.get('avatars/none/deadbeef.png'), undefined);
      assert.equal(await store.size('avatars/none/deadbeef.png'), undefined);
    });

    it('streams an object bigger than one multipart part, reads its head, and moves it with its type', async () => {
      const key = `staging/${randomBytes(4).toString('hex')}`;
      const bytes = randomBytes(11 * 1024 * 1024 + 123);
      const chunks = function* () {
        for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024);
      };
      assert.equal(await store.putStream(key, Readable.from(chunks()), 'video/mp4', 20 * 1024 * 1024), bytes.length);
      assert.equal(await store.size(key), bytes.length);
      assert.ok((await store.head(key, 100))?.equals(bytes.subarray(0, 100)));
      const target = `attachments/9/${randomBytes(4).toString('hex')}/clip one.mp4`;
      await store.move(key, target, 'video/mp4');
      assert.equal(await store.size(key), undefined);
      const got = await store.get(target);
      assert.ok(got?.bytes.equals(bytes));
      assert.equal(got?.contentType, 'video/mp4');
    });

    it('reads an object back as a stream, whole or a byte range, with its size and type from stat', async () => {
      const key = `attachments/3/${randomBytes(4).toString('hex')}/clip.webm`;
      const bytes = randomBytes(300_000);
      await store.put(key, bytes, 'video/webm');
      const info = await store.stat(key);
      assert.equal(info?.size, 300_000);
      assert.equal(info?.contentType, 'video/webm');
      assert.ok(Math.abs((info?.modified ?? 0) - Date.now()) < 60_000, 'modified is the time of writing');
      assert.equal(typeof info?.version, 'string');
      const collect = async (stream: Readable | undefined) => {
        assert.ok(stream, 'the object should be found');
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      };
      assert.ok((await collect(await store.readStream(key))).equals(bytes));
      assert.ok(
        (await collect(await store.readStream(key, { start: 1000, end: 1999 }))).equals(bytes.subarray(1000, 2000)),
      );
      assert.ok(
        (await collect(await store.readStream(key, { start: 299_999, end: 299_999 }))).equals(bytes.subarray(299_999)),
      );
      assert.equal(await store.stat('attachments/3/none/clip.webm'), undefined);
      assert.equal(await store.readStream('attachments/3/none/clip.webm'), undefined);
      assert.equal(await store.readStream('../escape'), undefined);
      // Written again with other bytes of the same size: the version changes, so the object's HTTP validator does.
      await store.put(key, randomBytes(300_000), 'video/webm');
      assert.notEqual((await store.stat(key))?.version, info?.version);
      await store.delete(key);
    });

    it('streams a small object in one piece, and an empty one', async () => {
      const key = `staging/${randomBytes(4).toString('hex')}`;
      assert.equal(
        await store.putStream(key, Readable.from([Buffer.from('ab'), Buffer.from('c')]), 'text/plain', 3),
        3,
      );
      assert.equal((await store.get(key))?.bytes.toString(), 'abc');
      assert.equal((await store.head(key, 10))?.toString(), 'abc');
      const empty = `staging/${randomBytes(4).toString('hex')}`;
      assert.equal(await store.putStream(empty, Readable.from([]), 'text/plain', 3), 0);
      assert.equal(await store.size(empty), 0);
    });

    it('leaves nothing behind when a stream passes its bound or fails midway', async () => {
      const tooBig = `staging/${randomBytes(4).toString('hex')}`;
      const big = function* () {
        for (let i = 0; i < 200; i++) yield randomBytes(64 * 1024);
      };
      await assert.rejects(store.putStream(tooBig, Readable.from(big()), 'x/y', 6 * 1024 * 1024), ObjectTooLargeError);
      assert.equal(await store.size(tooBig), undefined);
      const cut = `staging/${randomBytes(4).toString('hex')}`;
      const failing = async function* () {
        for (let i = 0; i < 100; i++) yield randomBytes(64 * 1024);
        throw new Error('client went away');
      };
      await assert.rejects(store.putStream(cut, failing(), 'x/y', 25 * 1024 * 1024), /client went away/);
      assert.equal(await store.size(cut), undefined);
      // No half-written file beside the objects either (the test S3 server cannot list multipart uploads).
      if (kind === 'local') {
        const { readdir } = await import('node:fs/promises');
        const names = await readdir(join(localRoot, 'staging'));
        assert.deepEqual(
          names.filter((n) => n.includes('partial')),
          [],
        );
      } else
        assert.deepEqual(
          (await s3.listKeys(BUCKET)).filter((k) => k === tooBig || k === cut),
          [],
        );
    });

    it('lists the keys under a prefix written before a time, never their type files', async () => {
      const prefix = `sweep-${kind}-${randomBytes(4).toString('hex')}`;
      await store.put(`${prefix}/a`, Buffer.from('a'), 'text/plain');
      await store.put(`${prefix}/deeper/b`, Buffer.from('b'), 'text/plain');
      await store.put(`other-${prefix}/c`, Buffer.from('c'), 'text/plain');
      assert.deepEqual(await store.keysOlderThan(prefix, Date.now() - 60_000, 10), []);
      assert.deepEqual((await store.keysOlderThan(prefix, Date.now() + 60_000, 10)).sort(), [
        `${prefix}/a`,
        `${prefix}/deeper/b`,
      ]);
      assert.equal((await store.keysOlderThan(prefix, Date.now() + 60_000, 1)).length, 1);
      assert.deepEqual(await store.keysOlderThan(`none-${prefix}`, Date.now() + 60_000, 10), []);
    });

    it('refuses unsafe keys: put throws, get and size find nothing, delete does nothing', async () => {
      for (const key of UNSAFE_KEYS) {
        await assert.rejects(store.put(key, Buffer.from('x'), 'text/plain'), /unsafe object key/, JSON.stringify(key));
        assert.equal(await store.get(key), undefined, JSON.stringify(key));
        assert.equal(await store.size(key), undefined, JSON.stringify(key));
        await store.delete(key);
      }
    });
  });
}

describe('S3ObjectStore specifics', () => {
  it('keeps the content type as the S3 object Content-Type, under the prefix', async () => {
    const store = s3Store({ prefix: '/tenant-a/hearth/' });
    const key = `attachments/7/${randomBytes(4).toString('hex')}/a.webp`;
    await store.put(key, Buffer.from('RIFF'), 'image/webp');
    assert.ok((await s3.listKeys(BUCKET)).includes(`tenant-a/hearth/${key}`));
    const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `tenant-a/hearth/${key}` }));
    assert.equal(head.ContentType, 'image/webp');
    assert.equal(head.ContentLength, 4);
    // Another prefix is another namespace.
    assert.equal(await s3Store({ prefix: 'tenant-b' }).get(key), undefined);
    assert.equal((await store.get(key))?.bytes.toString(), 'RIFF');
  });

  it('refuses an unsafe prefix', () => {
    assert.throws(() => s3Store({ prefix: 'a/../b' }), /unsafe object key prefix/);
  });

  it('signs with the configured secret: a wrong secret is refused, not treated as a missing object', async () => {
    const before = s3.rejected;
    const wrong = s3Store({ secretAccessKey: `${s3.secretAccessKey}x` });
    await assert.rejects(wrong.put('a/b', Buffer.from('x'), 'text/plain'), { name: 'SignatureDoesNotMatch' });
    await assert.rejects(wrong.get('a/b'), { name: 'SignatureDoesNotMatch' });
    assert.equal(s3.rejected, before + 2);
  });

  it('reports a missing bucket as an error rather than a missing object', async () => {
    await assert.rejects(s3Store({ bucket: 'no-such-bucket' }).get('a/b'), { name: 'NoSuchBucket' });
  });
});

describe('S3 settings', () => {
  const TEST_ENV = { HEARTH_TEST_MODE: '1', HEARTH_TEST_TOKEN: 't' };
  function refusal(env: Record<string, string>, argv: string[] = []): string {
    try {
      loadConfig({ ...TEST_ENV, ...env }, argv);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
    assert.fail('expected the configuration to be refused');
  }

  it('defaults to the local filesystem', () => {
    const config = loadConfig(TEST_ENV);
    assert.equal(config.s3Bucket, undefined);
    assert.equal(config.s3Region, 'us-east-1');
    assert.equal(config.s3ForcePathStyle, false);
    assert.equal(config.s3Prefix, undefined);
  });

  it('reads every S3 setting from the environment and from flags', () => {
    const env = {
      HEARTH_S3_BUCKET: 'media',
      HEARTH_S3_ENDPOINT: 'https://minio.example:9000',
      HEARTH_S3_REGION: 'eu-west-3',
      HEARTH_S3_ACCESS_KEY_ID: 'AK',
      HEARTH_S3_SECRET_ACCESS_KEY: 'SK',
      HEARTH_S3_FORCE_PATH_STYLE: 'true',
      HEARTH_S3_PREFIX: '/prod/hearth/',
    };
    const expected = {
      s3Bucket: 'media',
      s3Endpoint: 'https://minio.example:9000',
      s3Region: 'eu-west-3',
      s3AccessKeyId: 'AK',
      s3SecretAccessKey: 'SK',
      s3ForcePathStyle: true,
      s3Prefix: 'prod/hearth',
    };
    const fromEnv = loadConfig({ ...TEST_ENV, ...env });
    const fromFlags = loadConfig(TEST_ENV, [
      '--s3-bucket=media',
      '--s3-endpoint',
      'https://minio.example:9000',
      '--s3-region=eu-west-3',
      '--s3-access-key-id=AK',
      '--s3-secret-access-key=SK',
      '--s3-force-path-style',
      '--s3-prefix=/prod/hearth/',
    ]);
    for (const config of [fromEnv, fromFlags])
      for (const [key, value] of Object.entries(expected)) assert.equal(config[key as keyof typeof config], value, key);
  });

  it('needs both keys with a bucket, naming the missing setting', () => {
    assert.equal(
      refusal({ HEARTH_S3_BUCKET: 'media', HEARTH_S3_SECRET_ACCESS_KEY: 'SK' }),
      'HEARTH_S3_ACCESS_KEY_ID: must be set when HEARTH_S3_BUCKET is set',
    );
    assert.equal(
      refusal({ HEARTH_S3_BUCKET: 'media', HEARTH_S3_ACCESS_KEY_ID: 'AK' }),
      'HEARTH_S3_SECRET_ACCESS_KEY: must be set when HEARTH_S3_BUCKET is set',
    );
  });

  it('refuses S3 settings without a bucket instead of silently ignoring them', () => {
    assert.equal(
      refusal({ HEARTH_S3_ENDPOINT: 'http://127.0.0.1:9000' }),
      'HEARTH_S3_BUCKET: must be set when HEARTH_S3_ENDPOINT is set',
    );
    assert.equal(
      refusal({ HEARTH_S3_SECRET_ACCESS_KEY: 'SK' }),
      'HEARTH_S3_BUCKET: must be set when HEARTH_S3_SECRET_ACCESS_KEY is set',
    );
  });

  it('refuses bad values and never echoes the secret', () => {
    const keys = { HEARTH_S3_BUCKET: 'media', HEARTH_S3_ACCESS_KEY_ID: 'AK', HEARTH_S3_SECRET_ACCESS_KEY: 'hush-123' };
    assert.match(refusal({ ...keys, HEARTH_S3_BUCKET: 'a/b' }), /^HEARTH_S3_BUCKET: must be a bucket name/);
    assert.match(refusal({ ...keys, HEARTH_S3_ENDPOINT: 'ftp://x' }), /^HEARTH_S3_ENDPOINT: must use http: or https:/);
    const withUserInfo = refusal({ ...keys, HEARTH_S3_ENDPOINT: 'https://AK:hush-123@s3.example' });
    assert.match(withUserInfo, /^HEARTH_S3_ENDPOINT: must not contain credentials/);
    assert.ok(!withUserInfo.includes('hush-123'));
    assert.match(refusal({ ...keys, HEARTH_S3_PREFIX: 'a/../b' }), /^HEARTH_S3_PREFIX: /);
    assert.match(refusal({ ...keys, HEARTH_S3_REGION: ' ' }), /^HEARTH_S3_REGION: must not be empty/);
    assert.match(refusal({ ...keys, HEARTH_S3_FORCE_PATH_STYLE: 'maybe' }), /^HEARTH_S3_FORCE_PATH_STYLE: /);
  });
});
