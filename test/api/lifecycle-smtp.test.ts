import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { registerUser, request } from '../support/client.ts';
import { login } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBAPP = 'https://web.hearth.test';

interface Delivered {
  to: string[];
  raw: string;
}

let smtp: SMTPServer;
let server: TestServer;
const delivered: Delivered[] = [];

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        delivered.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const { port } = smtp.server.address() as AddressInfo;
  server = await startTestServer({
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    SMTP_FROM: 'Hearth <no-reply@hearth.test>',
    HEARTH_WEBAPP_URL: WEBAPP,
  });
});

after(async () => {
  await server?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

/** Waits for the SMTP server to receive a message to `to` whose subject matches. */
async function receive(to: string, subject: string): Promise<Delivered> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = delivered.find((m) => m.to.includes(to) && headerOf(m.raw, 'subject') === subject);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no "${subject}" message to ${to} reached the SMTP server`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function headerOf(block: string, name: string): string | undefined {
  const unfolded = block.split(/\r?\n\r?\n/)[0]?.replace(/\r?\n[ \t]+/g, ' ') ?? '';
  const line = unfolded.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

function decode(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return Buffer.from(
        body
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('utf8');
    default:
      return body;
  }
}

/** The decoded text/plain and text/html parts of a multipart/alternative message. */
function parts(raw: string): Record<string, string> {
  const contentType = headerOf(raw, 'content-type') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  assert.ok(boundary, `not multipart: ${contentType}`);
  const out: Record<string, string> = {};
  for (const section of raw.split(`--${boundary}`).slice(1)) {
    if (section.startsWith('--')) break;
    const part = section.replace(/^\r?\n/, '');
    const type = headerOf(part, 'content-type')?.split(';')[0]?.trim();
    const body = part
      .split(/\r?\n\r?\n/)
      .slice(1)
      .join('\n\n');
    if (type) out[type] = decode(body, headerOf(part, 'content-transfer-encoding'));
  }
  return out;
}

function tokenFrom(text: string, path: string): string {
  const match = new RegExp(`${WEBAPP.replace(/\./g, '\\.')}${path}#token=([A-Za-z0-9]{64})`).exec(text);
  assert.ok(match, `no ${path} link in: ${text}`);
  return match[1] as string;
}

describe('account emails over real SMTP', () => {
  it('delivers a verification link and a password reset that complete through the API', async () => {
    const user = await registerUser(server);

    const verification = await receive(user.email, 'Verify your email address');
    assert.match(headerOf(verification.raw, 'from') ?? '', /no-reply@hearth\.test/);
    const verifyParts = parts(verification.raw);
    assert.ok(verifyParts['text/plain'], 'text part');
    assert.ok(verifyParts['text/html'], 'html part');
    const verifyToken = tokenFrom(verifyParts['text/plain'] as string, '/verify');
    assert.ok((verifyParts['text/html'] as string).includes(verifyToken));
    assert.equal((await request(server, 'POST', '/v1/auth/verify', { body: { token: verifyToken } })).status, 204);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.body.verified, true);

    assert.equal((await request(server, 'POST', '/v1/auth/forgot', { body: { email: user.email } })).status, 204);
    const reset = await receive(user.email, 'Reset your password');
    const resetToken = tokenFrom(parts(reset.raw)['text/plain'] as string, '/reset');
    const done = await request(server, 'POST', '/v1/auth/reset', {
      body: { token: resetToken, password: 'delivered-by-smtp-1' },
    });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.user_id, user.id);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
    assert.equal((await login(server, user.email, 'delivered-by-smtp-1')).status, 200);
  });
});
