import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { TEST_TOKEN } from '../support/server.ts';
import { freePort, residentBytes, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';

/**
 * Uploads stream to the object store (docs/media.md#uploads-in-flight), proved on the real entrypoint in its own
 * process so its memory can be read from /proc.
 */
const MiB = 1024 * 1024;
let spawned: Spawned;
let server: { url: string; port: number };
let dataDir: string;
let owner: TestUser;
let channelId: string;

async function guildChannel(user: TestUser): Promise<string> {
  const guild = await request(server, 'POST', '/v1/guilds', { auth: user.token, body: { name: 'streams' } });
  assert.equal(guild.status, 200, guild.text);
  const channels = await request(server, 'GET', `/v1/guilds/${guild.body.id}/channels`, { auth: user.token });
  return channels.body.find((c: { type: number }) => c.type === 0).id;
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hearth-streams-'));
  const port = await freePort();
  server = { url: `http://127.0.0.1:${port}`, port };
  spawned = spawnEntrypoint({
    PORT: String(port),
    HOST: '127.0.0.1',
    HEARTH_DATA_DIR: dataDir,
    HEARTH_PUBLIC_URL: server.url,
    HEARTH_TEST_MODE: '1',
    HEARTH_TEST_TOKEN: TEST_TOKEN,
    HEARTH_LOG_LEVEL: 'info',
  });
  await waitForHealth(server.url, spawned);
  owner = await registerUser(server);
  channelId = await guildChannel(owner);
});

after(async () => {
  spawned?.child.kill('SIGKILL');
  await spawned?.exited;
  await rm(dataDir, { recursive: true, force: true });
});

/** The server's resident memory in bytes, from /proc. */
function rss(): Promise<number> {
  return residentBytes(spawned.child.pid);
}

/** Every file under the object store's directory, relative to it. */
async function storedFiles(): Promise<string[]> {
  const root = join(dataDir, 'objects');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(root.length + 1));
}

/**
 * A chunked multipart message with `files` of `fileBytes` each, generated as it is sent (1 MiB blocks of
 * random bytes, varied per block), so neither side ever needs it whole. Resolves with the answer and each
 * file's SHA-256.
 */
function streamMessage(
  files: number,
  fileBytes: number,
  options: { abortAfter?: number; auth?: string } = {},
): Promise<{ status: number; body: string; hashes: string[] }> {
  const boundary = `b${randomBytes(8).toString('hex')}`;
  const block = randomBytes(MiB);
  const hashes: string[] = [];
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      headers: {
        authorization: options.auth ?? owner.token,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, hashes }));
    });
    req.on('error', (error) => (options.abortAfter === undefined ? reject(error) : undefined));
    const write = (data: Buffer | string) =>
      new Promise<void>((done) => {
        if (req.write(data)) done();
        else req.once('drain', done);
      });
    void (async () => {
      const attachments = Array.from({ length: files }, (_, i) => ({ id: i, filename: `part${i}.bin` }));
      await write(
        `--${boundary}\r\nContent-Disposition: form-data; name="payload_json"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ content: 'big', attachments })}\r\n`,
      );
      let sent = 0;
      for (let i = 0; i < files; i++) {
        await write(
          `--${boundary}\r\nContent-Disposition: form-data; name="files[${i}]"; filename="part${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        );
        const hash = createHash('sha256');
        for (let at = 0; at < fileBytes; at += MiB) {
          const piece = Buffer.from(block.subarray(0, Math.min(MiB, fileBytes - at)));
          piece.writeUInt32BE(i * 1000 + at / MiB, 0);
          hash.update(piece);
          await write(piece);
          sent += piece.length;
          if (options.abortAfter !== undefined && sent >= options.abortAfter) {
            req.destroy();
            resolve({ status: 0, body: '', hashes });
            return;
          }
        }
        hashes.push(hash.digest('hex'));
        await write('\r\n');
      }
      req.end(`--${boundary}--\r\n`);
    })();
  });
}

describe('uploads stream to the object store', { timeout: 240_000 }, () => {
  test('a 60 MiB message upload (three 20 MiB files) succeeds while the server grows far less than the upload', async () => {
    // Warm-up: the first upload loads what an upload needs once (parsers, store directories, image library).
    const warm = await streamMessage(1, 2 * MiB);
    assert.equal(warm.status, 200, warm.body);
    const baseline = await rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      rss().then(
        (value) => {
          peak = Math.max(peak, value);
        },
        () => {},
      );
    }, 25);
    const big = await streamMessage(3, 20 * MiB);
    clearInterval(sampler);
    peak = Math.max(peak, await rss());
    assert.equal(big.status, 200, big.body);
    const message = JSON.parse(big.body);
    assert.deepEqual(
      message.attachments.map((a: { filename: string; size: number }) => [a.filename, a.size]),
      [
        ['part0.bin', 20 * MiB],
        ['part1.bin', 20 * MiB],
        ['part2.bin', 20 * MiB],
      ],
    );
    const growth = peak - baseline;
    console.log(`upload-streaming: RSS ${(baseline / MiB).toFixed(1)} MiB before, peak ${(peak / MiB).toFixed(1)} MiB`);
    // Buffered, the body alone would be 60 MiB (and was: ~250 MiB per request before, docs/media.md).
    assert.ok(growth < 30 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB during a 60 MiB upload`);
    // Every byte arrived: the stored files hash as sent.
    for (const [index, attachment] of (message.attachments as { url: string }[]).entries()) {
      const res = await fetch(attachment.url);
      assert.equal(res.status, 200);
      const stored = createHash('sha256')
        .update(Buffer.from(await res.arrayBuffer()))
        .digest('hex');
      assert.equal(stored, big.hashes[index], `file ${index}`);
    }
    // Nothing is left in staging once the message is stored.
    assert.deepEqual(
      (await storedFiles()).filter((f) => f.startsWith('staging/')),
      [],
    );
  });

  test('an upload cut off midway leaves no object, staged or partial, and no 500', async () => {
    const before = await storedFiles();
    const cut = await streamMessage(3, 20 * MiB, { abortAfter: 30 * MiB });
    assert.equal(cut.status, 0);
    // The server notices the disconnect, stops, and removes what it had staged.
    let left: string[] = [];
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = (await storedFiles()).filter((f) => !before.includes(f));
      if (left.length === 0) break;
    }
    assert.deepEqual(left, []);
    assert.doesNotMatch(spawned.stdout() + spawned.stderr(), /"status":5\d\d|unhandled error/);
    // And the server goes on serving uploads.
    const next = await streamMessage(1, MiB);
    assert.equal(next.status, 200, next.body);
  });

  test('a file over 25 MiB is refused with 400 BINARY_TYPE_MAX_SIZE and nothing of it is kept', async () => {
    const before = await storedFiles();
    const res = await streamMessage(1, 26 * MiB);
    assert.equal(res.status, 400, res.body);
    const body = JSON.parse(res.body);
    assert.equal(body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(
      body.errors.map((e: { path: string; code: string }) => [e.path, e.code]),
      [['files[0]', 'BINARY_TYPE_MAX_SIZE']],
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      (await storedFiles()).filter((f) => !before.includes(f)),
      [],
    );
  });
});

describe('uploads in flight are capped', { timeout: 120_000 }, () => {
  /** Opens an upload that declares `size` bytes and sends only the start: it holds its slot. */
  function holdUpload(auth: string, channel: string): net.Socket {
    const socket = net.connect(server.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(
      `POST /v1/channels/${channel}/messages HTTP/1.1\r\nhost: x\r\nauthorization: ${auth}\r\ncontent-type: multipart/form-data; boundary=x\r\ncontent-length: ${5 * MiB}\r\n\r\n--x`,
    );
    return socket;
  }

  test('past 32 uploads at once in the process, anyone gets 429 RATE_LIMITED (scope shared); past 3, a user gets scope user', async () => {
    const users = await Promise.all(Array.from({ length: 12 }, () => registerUser(server)));
    const channels = await Promise.all(users.map((user) => guildChannel(user)));
    const held: net.Socket[] = [];
    try {
      // Eleven users hold 3 uploads each but the last, who holds 2: 32 in flight.
      for (let u = 0; u < 11; u++)
        for (let n = 0; n < (u === 10 ? 2 : 3); n++)
          held.push(holdUpload((users[u] as TestUser).token, channels[u] as string));
      await new Promise((r) => setTimeout(r, 1000));
      const post = (user: TestUser, channel: string) =>
        fetch(`${server.url}/v1/channels/${channel}/messages`, {
          method: 'POST',
          headers: { authorization: user.token, 'content-type': 'multipart/form-data; boundary=x' },
          body: Buffer.alloc(2 * MiB, 0x20),
        });
      const fresh = await post(users[11] as TestUser, channels[11] as string);
      assert.equal(fresh.status, 429);
      assert.equal(fresh.headers.get('x-ratelimit-scope'), 'shared');
      assert.equal(((await fresh.json()) as { code: string }).code, 'RATE_LIMITED');
      // A small JSON message is no upload: it still goes through.
      const small = await request(server, 'POST', `/v1/channels/${channels[11]}/messages`, {
        auth: (users[11] as TestUser).token,
        body: { content: 'still here' },
      });
      assert.equal(small.status, 200, small.text);
      // One slot frees: the twelfth user is admitted; the first user, at 3 of their own, still is not.
      held.pop()?.destroy();
      await new Promise((r) => setTimeout(r, 500));
      const mine = await post(users[0] as TestUser, channels[0] as string);
      assert.equal(mine.status, 429);
      assert.equal(mine.headers.get('x-ratelimit-scope'), 'user');
      const admitted = await post(users[11] as TestUser, channels[11] as string);
      // Admitted and read: the body is not multipart, so the answer is the parser's 400, not a 429.
      assert.equal(admitted.status, 400);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
