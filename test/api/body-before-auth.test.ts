import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let stranger: TestUser;
let channelId: string;
let webhookId: string;

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  stranger = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'uploads' } });
  assert.equal(guild.status, 200, guild.text);
  const channels = await request(server, 'GET', `/v1/guilds/${guild.body.id}/channels`, { auth: owner.token });
  channelId = channels.body.find((c: { type: number }) => c.type === 0).id;
  const hook = await request(server, 'POST', `/v1/channels/${channelId}/webhooks`, {
    auth: owner.token,
    body: { name: 'hook' },
  });
  assert.equal(hook.status, 200, hook.text);
  webhookId = hook.body.id;
});
after(async () => {
  await server.close();
});

interface RawExchange {
  status: number;
  body: string;
  /** Body bytes this client had written when the answer arrived. */
  sentBeforeAnswer: number;
  sent: number;
  error: string | undefined;
  closedByServer: boolean;
}

/**
 * Sends request headers declaring `declared` body bytes, then (after `delayMs`) up to `send` bytes, and
 * records when the answer came and whether the server closed the socket. With `untilAnswered`, the client
 * hangs up as soon as a whole answer (its Content-Length of body) has arrived instead of waiting `waitMs`
 * for the server to close: for the tests that judge the answer, not what the server does with the socket.
 */
function rawPost(
  path: string,
  headers: Record<string, string>,
  declared: number,
  options: { send?: number; delayMs?: number; waitMs?: number; untilAnswered?: boolean } = {},
): Promise<RawExchange> {
  const { send = 0, delayMs = 300, waitMs = 3000, untilAnswered = false } = options;
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let text = '';
    let sent = 0;
    let sentBeforeAnswer = -1;
    let error: string | undefined;
    let closedByServer = false;
    const finish = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(head.split(' ')[1] ?? 0);
      resolve({ status, body, sentBeforeAnswer, sent, error, closedByServer });
    };
    socket.on('data', (chunk) => {
      if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
      text += chunk.toString();
      if (untilAnswered && answered(text)) socket.destroy();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code;
    });
    socket.on('end', () => {
      closedByServer = true;
    });
    socket.on('close', () => {
      clearTimeout(giveUp);
      finish();
    });
    const giveUp = setTimeout(() => socket.destroy(), waitMs);
    const lines = Object.entries({ host: 'x', 'content-length': String(declared), ...headers }).map(
      ([k, v]) => `${k}: ${v}`,
    );
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (sent < send && !socket.destroyed) {
        const n = Math.min(chunk.length, send - sent);
        sent += n;
        if (!socket.write(chunk.subarray(0, n))) return void socket.once('drain', pump);
      }
    };
    setTimeout(pump, delayMs);
  });
}

/** Whether `text` holds a whole HTTP answer: its head and the Content-Length of body it declares. */
function answered(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /^content-length: *(\d+)\r?$/im.exec(text.slice(0, end))?.[1];
  return length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length);
}

const HUGE = 200 * 1024 * 1024;

describe('refused before the body is read', () => {
  test('an unauthenticated message upload gets 401 while its body has not been sent', async () => {
    const answer = await rawPost(
      `/v1/channels/${channelId}/messages`,
      { 'content-type': 'multipart/form-data; boundary=x' },
      HUGE,
      { untilAnswered: true },
    );
    assert.equal(answer.status, 401);
    assert.deepEqual(JSON.parse(answer.body), { code: 'UNAUTHORIZED', message: 'Unauthorized' });
    assert.equal(answer.sentBeforeAnswer, 0);
  });

  test('a member who cannot see the channel is refused before the body', async () => {
    const answer = await rawPost(
      `/v1/channels/${channelId}/messages`,
      { authorization: stranger.token, 'content-type': 'application/json' },
      HUGE,
      { untilAnswered: true },
    );
    assert.equal(answer.status, 403);
    assert.equal(JSON.parse(answer.body).code, 'MISSING_ACCESS');
    assert.equal(answer.sentBeforeAnswer, 0);
  });

  test('a webhook execute with a wrong token is refused before the body', async () => {
    const answer = await rawPost(
      `/v1/webhooks/${webhookId}/${'x'.repeat(68)}`,
      { 'content-type': 'multipart/form-data; boundary=x' },
      HUGE,
      { untilAnswered: true },
    );
    assert.equal(answer.status, 404);
    assert.equal(JSON.parse(answer.body).code, 'UNKNOWN_WEBHOOK');
    assert.equal(answer.sentBeforeAnswer, 0);
  });

  test('a refused client that keeps sending is cut off after a bounded amount', async () => {
    const answer = await rawPost(`/v1/channels/${channelId}/messages`, {}, HUGE, { send: HUGE, delayMs: 0 });
    assert.equal(answer.status, 401);
    assert.ok(answer.sent < HUGE, `the server read all ${answer.sent} bytes`);
    assert.ok(answer.error === 'ECONNRESET' || answer.error === 'EPIPE' || answer.closedByServer, String(answer.error));
  });

  test('the owner still posts a message', async () => {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'still works' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.content, 'still works');
  });
});

describe('uploads held at once', () => {
  test('a fourth concurrent large upload of one user gets 429 before its body; a finished one frees its slot', async () => {
    const headers = { authorization: owner.token, 'content-type': 'multipart/form-data; boundary=x' };
    const size = 5 * 1024 * 1024;
    const held = [1, 2, 3].map(() => {
      const socket = net.connect(server.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST /v1/channels/${channelId}/messages HTTP/1.1\r\nhost: x\r\nauthorization: ${owner.token}\r\ncontent-type: multipart/form-data; boundary=x\r\ncontent-length: ${size}\r\n\r\n--x`,
      );
      return socket;
    });
    await new Promise((r) => setTimeout(r, 300));
    const refused = await rawPost(`/v1/channels/${channelId}/messages`, headers, size, { untilAnswered: true });
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body).code, 'RATE_LIMITED');
    assert.equal(refused.sentBeforeAnswer, 0);
    for (const socket of held) socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    // A slot is free again: the request is admitted and waits for its body (no answer within the wait).
    const admitted = await rawPost(`/v1/channels/${channelId}/messages`, headers, size, { waitMs: 800 });
    assert.equal(admitted.status, 0);
    assert.equal(admitted.closedByServer, false);
  });
});

describe('413 without a broken pipe', () => {
  test('a 2 MiB JSON body sent in full gets its 413 and the connection stays usable', async () => {
    const size = 2 * 1024 * 1024;
    const answer = await rawPost('/v1/auth/login', { 'content-type': 'application/json' }, size, {
      send: size,
      delayMs: 0,
      waitMs: 1500,
    });
    assert.equal(answer.status, 413);
    assert.deepEqual(JSON.parse(answer.body), { code: 'PAYLOAD_TOO_LARGE', message: 'Payload too large' });
    assert.equal(answer.error, undefined);
    assert.equal(answer.sent, size);
    // The server did not close: the socket was still open when the client gave up waiting.
    assert.equal(answer.closedByServer, false);
  });
});

describe('timeouts', () => {
  test('a client trickling its body is answered 408 and disconnected', async () => {
    const slow = await startTestServer({
      HEARTH_HTTP_REQUEST_TIMEOUT_MS: '1500',
      HEARTH_HTTP_IDLE_TIMEOUT_MS: '10000',
    });
    try {
      const started = Date.now();
      const result = await new Promise<{ text: string; ms: number }>((resolve) => {
        const socket = net.connect(slow.port, '127.0.0.1');
        let text = '';
        socket.on('data', (d) => {
          text += d.toString();
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ text, ms: Date.now() - started });
        });
        socket.write(
          'POST /v1/auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n',
        );
        const drip = setInterval(() => socket.write(' '), 200);
        setTimeout(() => socket.destroy(), 8000);
      });
      assert.match(result.text, /^HTTP\/1\.1 408 /);
      assert.match(result.text, /"code":"REQUEST_TIMEOUT"/);
      assert.ok(result.ms < 5000, `took ${result.ms} ms`);
    } finally {
      await slow.close();
    }
  });

  test('shutdown does not wait for a stalled upload', async () => {
    const other = await startTestServer();
    const socket = net.connect(other.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /v1/channels/${channelId}/messages HTTP/1.1\r\nhost: x\r\nauthorization: ${owner.token}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"content":`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await other.close();
    const ms = Date.now() - started;
    socket.destroy();
    assert.ok(ms < 9000, `shutdown took ${ms} ms`);
  });
});

describe('over-long path segment', () => {
  test('414 URI_TOO_LONG from the catalogue, without echoing the path', async () => {
    const secret = 'S'.repeat(5000);
    // A POST: a GET falls through to the web client's history fallback, whose answer is a plain 404.
    const res = await request(server, 'POST', `/v1/webhooks/123/${secret}`, { body: {} });
    assert.equal(res.status, 414);
    assert.deepEqual(res.body, { code: 'URI_TOO_LONG', message: 'URI too long' });
    assert.ok(!res.text.includes('SSSS'));
  });
});
