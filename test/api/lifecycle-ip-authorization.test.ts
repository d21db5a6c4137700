import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { assertFieldError, emailsTo, lastEmail, linkToken, login, setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBAPP = 'https://app.hearth.test';
let server: TestServer;
before(async () => {
  server = await startTestServer({ HEARTH_WEBAPP_URL: WEBAPP, HEARTH_TRUSTED_PROXIES: '127.0.0.1/32' });
});
after(async () => {
  await server?.close();
});
beforeEach(async () => {
  await setClock(server, 0);
});

let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `192.0.2.${ipCounter}`;
}

async function challenge(user: TestUser, ip: string) {
  const res = await login(server, user.email, user.password, { 'x-forwarded-for': ip });
  assert.equal(res.status, 403, res.text);
  return res;
}

function poll(ticket: string) {
  return request(server, 'GET', `/v1/auth/ip-authorization/poll?ticket=${encodeURIComponent(ticket)}`);
}

function authorize(token: string) {
  return request(server, 'POST', '/v1/auth/authorize-ip', { body: { token } });
}

function resend(ticket: string) {
  return request(server, 'POST', '/v1/auth/ip-authorization/resend', { body: { ticket } });
}

describe('IP authorisation challenge', () => {
  it('holds a login from a new address and mails an approval link', async () => {
    const user = await registerUser(server);
    const ip = freshIp();
    const res = await challenge(user, ip);
    assert.equal(res.body.code, 'IP_AUTHORIZATION_REQUIRED');
    assert.equal(res.body.ip_authorization_required, true);
    assert.match(res.body.ticket, /^[A-Za-z0-9]{64}$/);
    assert.equal(res.body.email, user.email);
    assert.equal(res.body.resend_available_in, 30);
    assert.equal(res.body.token, undefined);
    const mail = await lastEmail(server, user.email, 'ip_authorization');
    assert.equal(mail.subject, 'New login location detected');
    const token = linkToken(mail, '/authorize-ip', WEBAPP);
    assert.ok(mail.html.includes(`${WEBAPP}/authorize-ip#token=${token}`));
    // Neither secret is stored in the clear.
    const { db } = server.app.services;
    const leaked = await db.query(
      `SELECT 1 FROM one_time_tokens WHERE token_hash IN ($1, $2) OR data::text LIKE $3 OR data::text LIKE $4`,
      [token, res.body.ticket, `%${token}%`, `%${res.body.ticket}%`],
    );
    assert.equal(leaked.length, 0);
  });

  it('issues the session only after the link is followed, then hands it to the ticket for 60 s', async () => {
    const user = await registerUser(server);
    const ip = freshIp();
    const { ticket } = (await challenge(user, ip)).body;
    assert.deepEqual((await poll(ticket)).body, { completed: false });
    const token = (await lastEmail(server, user.email, 'ip_authorization')).metadata.token;

    const ok = await authorize(token);
    assert.equal(ok.status, 204);
    assert.equal(ok.text, '');

    const first = await poll(ticket);
    assert.equal(first.status, 200);
    assert.equal(first.body.completed, true);
    assert.equal(first.body.user_id, user.id);
    assert.equal(first.body.user.id, user.id);
    assert.match(first.body.token, /^flx_[A-Za-z0-9]{36}$/);
    // Polling does not consume the ticket.
    const second = await poll(ticket);
    assert.equal(second.body.token, first.body.token);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: first.body.token });
    assert.equal(me.status, 200);

    // The address is now authorised: a second login from it goes straight through.
    const direct = await login(server, user.email, user.password, { 'x-forwarded-for': ip });
    assert.equal(direct.status, 200, direct.text);

    await setClock(server, 61_000);
    assertFieldError(await poll(ticket), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
  });

  it('says which address, device and time asked; the session it makes lists that device', async () => {
    const user = await registerUser(server);
    const ip = freshIp();
    const agent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36';
    const res = await login(server, user.email, user.password, { 'x-forwarded-for': ip, 'user-agent': agent });
    assert.equal(res.status, 403, res.text);
    const mail = await lastEmail(server, user.email, 'ip_authorization');
    assert.match(
      mail.text,
      new RegExp(
        `Address: ${ip.replaceAll('.', '\\.')}\nDevice: Chrome on Linux\nTime: \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC`,
      ),
    );
    assert.ok(mail.html.includes(`Address: ${ip}<br>Device: Chrome on Linux`));
    assert.ok(!mail.text.includes('Mozilla'), 'the raw user agent is not repeated');
    assert.equal((await authorize(mail.metadata.token as string)).status, 204);
    const session = (await poll(res.body.ticket)).body.token as string;
    const list = await request(server, 'GET', '/v1/auth/sessions', { auth: session });
    const mine = list.body.find((s: { client_os: string | null }) => s.client_os !== null);
    assert.equal(mine?.client_os, 'Linux');
    assert.equal(mine?.client_platform, 'Chrome');
    assert.equal(mine?.client_location, null);
  });

  it('refuses a reused, forged or expired link', async () => {
    const user = await registerUser(server);
    const { ticket } = (await challenge(user, freshIp())).body;
    const token = (await lastEmail(server, user.email, 'ip_authorization')).metadata.token;
    assert.equal((await authorize(token)).status, 204);
    assertFieldError(await authorize(token), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
    assertFieldError(await authorize('x'.repeat(64)), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
    assert.equal((await poll(ticket)).body.completed, true);

    const late = await registerUser(server);
    const held = (await challenge(late, freshIp())).body.ticket;
    const lateToken = (await lastEmail(server, late.email, 'ip_authorization')).metadata.token;
    await setClock(server, 15 * 60_000 + 1000);
    assertFieldError(await authorize(lateToken), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
    assertFieldError(await poll(held), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
  });

  it('answers a forged ticket on poll and resend with INVALID_OR_EXPIRED_AUTHORIZATION_TICKET', async () => {
    assertFieldError(await poll('n'.repeat(64)), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
    assertFieldError(await resend('n'.repeat(64)), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
  });
});

describe('IP authorisation resend', () => {
  it('waits 30 s, resends once with a new link, then refuses', async () => {
    const user = await registerUser(server);
    const { ticket } = (await challenge(user, freshIp())).body;
    const firstToken = (await lastEmail(server, user.email, 'ip_authorization')).metadata.token;

    const early = await resend(ticket);
    assert.equal(early.status, 429);
    assert.equal(early.body.code, 'IP_AUTHORIZATION_RESEND_COOLDOWN');
    assert.ok(early.body.resend_available_in >= 29 && early.body.resend_available_in <= 30, early.text);

    await setClock(server, 31_000);
    const ok = await resend(ticket);
    assert.equal(ok.status, 204);
    const mails = await emailsTo(server, user.email, 'ip_authorization');
    assert.equal(mails.length, 2);
    const secondToken = mails[1]?.metadata.token;
    assert.notEqual(secondToken, firstToken);

    const again = await resend(ticket);
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'IP_AUTHORIZATION_RESEND_LIMIT_EXCEEDED');

    // The earlier link died with the resend; the new one completes the ticket.
    assertFieldError(await authorize(firstToken), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
    assert.equal((await authorize(secondToken)).status, 204);
    assert.equal((await poll(ticket)).body.completed, true);
  });
});

describe('IP authorisation harness', () => {
  it('plants a ticket and token chosen by the caller, and expires them', async () => {
    const user = await registerUser(server);
    const ticket = randomBytes(24).toString('hex');
    const token = randomBytes(24).toString('hex');
    const ip = freshIp();
    const seeded = await harness(server, 'POST', '/auth/ip-authorization', {
      ticket,
      token,
      user_id: user.id,
      email: user.email,
      client_ip: ip,
      resend_used: true,
      created_at: Date.now() - 60_000,
    });
    assert.equal(seeded.status, 200);
    assert.deepEqual(seeded.body, { success: true });
    assert.deepEqual((await poll(ticket)).body, { completed: false });
    const limit = await resend(ticket);
    assert.equal(limit.body.code, 'IP_AUTHORIZATION_RESEND_LIMIT_EXCEEDED');
    assert.equal((await authorize(token)).status, 204);
    const done = await poll(ticket);
    assert.equal(done.body.completed, true);
    assert.equal(done.body.user_id, user.id);
    const direct = await login(server, user.email, user.password, { 'x-forwarded-for': ip });
    assert.equal(direct.status, 200);

    const other = randomBytes(24).toString('hex');
    const otherToken = randomBytes(24).toString('hex');
    await harness(server, 'POST', '/auth/ip-authorization', {
      ticket: other,
      token: otherToken,
      user_id: user.id,
      email: user.email,
      client_ip: freshIp(),
    });
    const expired = await harness(server, 'POST', '/auth/ip-authorization/expire', {
      ticket: other,
      token: otherToken,
    });
    assert.deepEqual(expired.body, { success: true });
    assertFieldError(await poll(other), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
    assertFieldError(await authorize(otherToken), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
  });

  it('refuses a bot account named by the token or ticket', async () => {
    const user = await registerUser(server);
    const { ticket } = (await challenge(user, freshIp())).body;
    const token = (await lastEmail(server, user.email, 'ip_authorization')).metadata.token;
    await harness(server, 'POST', `/users/${user.id}/set-bot-flag`, { is_bot: true });
    for (const res of [await authorize(token), await poll(ticket), await resend(ticket)]) {
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
    }
  });

  it('treats a deleted account behind a link as unknown', async () => {
    const user = await registerUser(server);
    const { ticket } = (await challenge(user, freshIp())).body;
    const token = (await lastEmail(server, user.email, 'ip_authorization')).metadata.token;
    await harness(server, 'POST', `/users/${user.id}/security-flags`, { set_flags: ['DELETED'] });
    assertFieldError(await authorize(token), 'token', 'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN');
    assertFieldError(await poll(ticket), 'ticket', 'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET');
  });
});

describe('authorised addresses', () => {
  it('DELETE /users/@me/authorized-ips needs sudo, then every address must be approved again', async () => {
    const user = await registerUser(server);
    const noProof = await request(server, 'DELETE', '/v1/users/@me/authorized-ips', { auth: user.token });
    assert.equal(noProof.status, 403);
    assert.equal(noProof.body.code, 'SUDO_MODE_REQUIRED');
    const res = await request(server, 'DELETE', '/v1/users/@me/authorized-ips', {
      auth: user.token,
      body: { password: user.password },
    });
    assert.equal(res.status, 204);
    // Registration had authorised loopback; now even it is new.
    const again = await login(server, user.email, user.password);
    assert.equal(again.status, 403);
    assert.equal(again.body.code, 'IP_AUTHORIZATION_REQUIRED');
  });
});
