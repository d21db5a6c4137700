import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { adminUser } from '../support/admin.ts';
import { harness, registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { freePort } from '../support/spawn.ts';

/**
 * Email over real SMTP: an smtp-server on loopback receives what Hearth's nodemailer transport sends.
 * Links are built from the configured web-app URL, never from the request.
 */
interface Received {
  from: string;
  to: string[];
  raw: string;
}

const WEBAPP = 'https://app.hearth.example';
const FROM = 'Hearth Test <no-reply@hearth.example>';
const received: Received[] = [];
let smtp: SMTPServer;
let server: TestServer;
let deadSmtpServer: TestServer;

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        raw += chunk;
      });
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve) => {
    smtp.listen(0, '127.0.0.1', () => {
      const address = smtp.server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  server = await startTestServer({
    SMTP_URL: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    SMTP_FROM: FROM,
    HEARTH_WEBAPP_URL: WEBAPP,
  });
  deadSmtpServer = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${await freePort()}` });
});
after(async () => {
  await server?.close();
  await deadSmtpServer?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

async function waitForMail(to: string): Promise<Received> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const mail = received.find((m) => m.to.includes(to));
    if (mail) return mail;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no email for ${to} arrived over SMTP`);
}

interface Part {
  contentType: string;
  body: string;
}

/** Just enough MIME: split multipart/alternative, decode quoted-printable or base64 bodies. */
function mimeParts(raw: string): { headers: string; parts: Part[] } {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(headers)?.[1];
  assert.ok(boundary, 'the email is multipart');
  const parts = raw
    .slice(split + 4)
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => {
      const at = chunk.indexOf('\r\n\r\n');
      const partHeaders = chunk.slice(0, at).replace(/\r\n[ \t]+/g, ' ');
      const encoded = chunk.slice(at + 4).replace(/\r\n$/, '');
      const encoding = /content-transfer-encoding:\s*([\w-]+)/i.exec(partHeaders)?.[1]?.toLowerCase();
      let body = encoded;
      if (encoding === 'quoted-printable') {
        body = Buffer.from(
          encoded
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        ).toString('utf8');
      } else if (encoding === 'base64') {
        body = Buffer.from(encoded, 'base64').toString('utf8');
      }
      return { contentType: /content-type:\s*([^;\r\n]+)/i.exec(partHeaders)?.[1]?.trim() ?? '', body };
    });
  return { headers, parts };
}

describe('SMTP delivery', () => {
  it('sends the verification email with text and HTML parts and a link to the web app', async () => {
    const user = await registerUser(server);
    const mail = await waitForMail(user.email);
    assert.deepEqual(mail.to, [user.email]);
    assert.equal(mail.from, 'no-reply@hearth.example');

    const { headers, parts } = mimeParts(mail.raw);
    assert.match(headers, /^Subject: Verify your email address$/im);
    assert.match(headers, /^From: Hearth Test <no-reply@hearth\.example>$/im);
    assert.match(headers, /^Content-Type: multipart\/alternative/im);
    const text = parts.find((p) => p.contentType === 'text/plain');
    const html = parts.find((p) => p.contentType === 'text/html');
    assert.ok(text, 'a text/plain part');
    assert.ok(html, 'a text/html part');

    // The captured copy (test mode) and the delivered one carry the same single-use token.
    const captured = await harness(server, 'GET', `/emails?recipient=${encodeURIComponent(user.email)}`);
    assert.equal(captured.body.count, 1);
    const token: string = captured.body.emails[0].metadata.token;
    assert.match(token, /^[A-Za-z0-9]{64}$/);
    const link = `${WEBAPP}/verify#token=${token}`;
    assert.ok(text.body.includes(link), `text part links to ${link}:\n${text.body}`);
    assert.ok(html.body.includes(`href="${link}"`), `html part links to ${link}:\n${html.body}`);
    assert.ok(!text.body.includes(server.url), 'links never use the request origin');

    // The link's token really verifies the address.
    const verify = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assert.equal(verify.status, 204, verify.text);
  });

  it('does not fail the request when the SMTP server is down, and says delivery is failing', async () => {
    const status = async (target: TestServer) =>
      (await request(target, 'GET', '/.well-known/service')).body.features.email_delivery;
    assert.equal(await status(server), 'ok');
    assert.equal(await status(deadSmtpServer), 'ok', 'nothing has failed yet');
    const started = Date.now();
    const user = await registerUser(deadSmtpServer);
    assert.match(user.token, /^flx_/);
    const captured = await harness(deadSmtpServer, 'GET', `/emails?recipient=${encodeURIComponent(user.email)}`);
    assert.equal(captured.body.count, 1);
    // The verification email was refused at connect: people are now told, and so are administrators.
    assert.equal(await status(deadSmtpServer), 'failing');
    const admin = await adminUser(deadSmtpServer, ['*']);
    const config = await request(deadSmtpServer, 'POST', '/v1/admin/instance-config/get', { auth: admin.token });
    assert.equal(config.status, 200, config.text);
    const delivery = config.body.email.delivery;
    assert.equal(delivery.status, 'failing');
    assert.ok(delivery.failed_deliveries >= 1, String(delivery.failed_deliveries));
    assert.match(delivery.last_error, /ECONNREFUSED/);
    assert.ok(Date.parse(delivery.failing_since) >= started - 1000, delivery.failing_since);
    // A read-modify-write client may send the status back as it read it.
    const update = await request(deadSmtpServer, 'POST', '/v1/admin/instance-config/update', {
      auth: admin.token,
      body: { email: config.body.email },
    });
    assert.equal(update.status, 200, update.text);
    // A working server stays `ok` after it delivered.
    await registerUser(server);
    assert.equal(await status(server), 'ok');
  });
});
