import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { postAttachment } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { migratedDataDir } from '../support/data-dir.ts';
import { startTestS3, type TestS3 } from '../support/s3-server.ts';
import { TEST_TOKEN } from '../support/server.ts';
import { freePort, peakGrowth, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';

/**
 * Stored attachments are streamed from the object store, never read whole (docs/media.md#streamed-downloads),
 * and answer byte ranges (docs/media.md#ranges). Proved on the real entrypoint in its own process, on the
 * local store and on an S3-compatible one, so the server's memory can be read from /proc.
 */
const MiB = 1024 * 1024;
const FILE_BYTES = 24 * MiB;
const BUCKET = 'hearth-downloads';

let s3: TestS3;
before(async () => {
  s3 = await startTestS3();
  await s3.createBucket(BUCKET);
});
after(async () => {
  await s3?.close();
});

/** Downloads a URL as a stream, hashing it on the way; resolves with the status, headers, length and hash. */
async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const hash = createHash('sha256');
  let length = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    length += chunk.length;
  }
  return { status: res.status, headers: res.headers, length, sha256: hash.digest('hex') };
}

for (const kind of ['local', 's3'] as const) {
  describe(`attachments served from the ${kind} store`, { timeout: 240_000 }, () => {
    let spawned: Spawned;
    let server: { url: string };
    let dataDir: string;
    let owner: TestUser;
    let big: { url: string; bytes: Buffer };
    let small: { url: string; bytes: Buffer };

    async function upload(channelId: string, filename: string, bytes: Buffer): Promise<string> {
      const attachment = await postAttachment(server, owner.token, channelId, {
        filename,
        bytes,
        type: 'application/octet-stream',
      });
      assert.equal(attachment.size, bytes.length);
      return attachment.url;
    }

    before(async () => {
      dataDir = await migratedDataDir('hearth-downloads-');
      const port = await freePort();
      server = { url: `http://127.0.0.1:${port}` };
      spawned = spawnEntrypoint({
        PORT: String(port),
        HOST: '127.0.0.1',
        HEARTH_DATA_DIR: dataDir,
        HEARTH_PUBLIC_URL: server.url,
        HEARTH_TEST_MODE: '1',
        HEARTH_TEST_TOKEN: TEST_TOKEN,
        HEARTH_LOG_LEVEL: 'info',
        ...(kind === 's3'
          ? {
              HEARTH_S3_BUCKET: BUCKET,
              HEARTH_S3_ENDPOINT: s3.endpoint,
              HEARTH_S3_REGION: s3.region,
              HEARTH_S3_ACCESS_KEY_ID: s3.accessKeyId,
              HEARTH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
              HEARTH_S3_FORCE_PATH_STYLE: 'true',
            }
          : {}),
      });
      await waitForHealth(server.url, spawned);
      owner = await registerUser(server);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'downloads' } });
      assert.equal(guild.status, 200, guild.text);
      const channelId = guild.body.system_channel_id as string;
      const bigBytes = randomBytes(FILE_BYTES);
      big = { url: await upload(channelId, 'clip.webm', bigBytes), bytes: bigBytes };
      const smallBytes = randomBytes(1000);
      small = { url: await upload(channelId, 'notes.bin', smallBytes), bytes: smallBytes };
    });

    after(async () => {
      spawned?.child.kill('SIGKILL');
      await spawned?.exited;
      await rm(dataDir, { recursive: true, force: true });
    });

    test('three concurrent downloads of a 24 MiB attachment arrive whole while the server grows far less', async () => {
      // Warm-up: the first download loads what serving needs once.
      const warm = await download(big.url);
      assert.equal(warm.status, 200);
      const expected = createHash('sha256').update(big.bytes).digest('hex');
      const { result, growth, baseline } = await peakGrowth(spawned.child.pid, () =>
        Promise.all([download(big.url), download(big.url), download(big.url)]),
      );
      console.log(
        `download-streaming (${kind}): RSS ${(baseline / MiB).toFixed(1)} MiB before, grew ${(growth / MiB).toFixed(1)} MiB`,
      );
      for (const res of result) {
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-length'), String(FILE_BYTES));
        assert.equal(res.headers.get('accept-ranges'), 'bytes');
        assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
        assert.equal(res.headers.get('content-type'), 'application/octet-stream');
        assert.equal(res.headers.get('content-disposition'), `inline; filename*=UTF-8''clip.webm`);
        assert.equal(res.length, FILE_BYTES);
        assert.equal(res.sha256, expected);
      }
      // Read whole, the three bodies alone would be 72 MiB.
      assert.ok(growth < 30 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB during 72 MiB of downloads`);
    });

    test('a Range is answered 206 with exactly those bytes and a Content-Range', async () => {
      const cases: [string, number, number][] = [
        ['bytes=0-0', 0, 0],
        ['bytes=1000-2999', 1000, 2999],
        [`bytes=${20 * MiB}-`, 20 * MiB, FILE_BYTES - 1],
        ['bytes=-500', FILE_BYTES - 500, FILE_BYTES - 1],
        [`bytes=${FILE_BYTES - 10}-${FILE_BYTES + 5000}`, FILE_BYTES - 10, FILE_BYTES - 1],
      ];
      for (const [range, start, end] of cases) {
        const res = await fetch(big.url, { headers: { range } });
        assert.equal(res.status, 206, range);
        assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${FILE_BYTES}`, range);
        assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
        assert.equal(res.headers.get('accept-ranges'), 'bytes');
        assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
        const body = Buffer.from(await res.arrayBuffer());
        assert.ok(body.equals(big.bytes.subarray(start, end + 1)), range);
      }
    });

    test('an unsatisfiable Range is answered 416 RANGE_NOT_SATISFIABLE with the size', async () => {
      for (const range of [`bytes=${FILE_BYTES}-`, `bytes=${FILE_BYTES + 1}-${FILE_BYTES + 9}`, 'bytes=-0']) {
        const res = await fetch(big.url, { headers: { range } });
        assert.equal(res.status, 416, range);
        assert.equal(res.headers.get('content-range'), `bytes */${FILE_BYTES}`, range);
        const body = (await res.json()) as { code: string; message: string };
        assert.equal(body.code, 'RANGE_NOT_SATISFIABLE');
        assert.equal(body.message, 'Range not satisfiable');
      }
    });

    test('a Range this server does not act on gets the whole object with 200', async () => {
      // Several ranges, another unit, a garbled one, an inverted one, and any Range under If-Range.
      const variants: Record<string, string>[] = [
        { range: 'bytes=0-1,5-9' },
        { range: 'items=0-1' },
        { range: 'bytes=abc' },
        { range: 'bytes=9-1' },
        { range: 'bytes=0-9', 'if-range': '"whatever"' },
      ];
      for (const headers of variants) {
        const res = await fetch(small.url, { headers });
        assert.equal(res.status, 200, JSON.stringify(headers));
        assert.equal(res.headers.get('content-range'), null);
        assert.equal(res.headers.get('content-length'), '1000');
        assert.ok(Buffer.from(await res.arrayBuffer()).equals(small.bytes));
      }
    });

    test('a missing attachment is still 404 NOT_FOUND, with or without a Range', async () => {
      const missing = small.url.replace(/\/notes\.bin$/, '/other.bin');
      for (const headers of [{}, { range: 'bytes=0-9' }] as Record<string, string>[]) {
        const res = await fetch(missing, { headers });
        assert.equal(res.status, 404);
        assert.equal(((await res.json()) as { code: string }).code, 'NOT_FOUND');
      }
    });
  });
}
