import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Janitor } from '../../src/domains/maintenance/janitor.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { createApplication, type TestApplication } from '../support/applications.ts';
import { guildWithMembers } from '../support/chat.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { assertFieldError, lastEmail, linkToken } from '../support/lifecycle.ts';
import { enableTotp, STRICT, setClock, totpCode } from '../support/mfa.ts';
import { approve, clientPost, issueTokens } from '../support/oauth2.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WEBAPP = 'https://app.hearth.test';
const REDIRECT = 'https://client.example/callback';
const HOUR = 3600_000;

let server: TestServer;
before(async () => {
  server = await startTestServer({ HEARTH_WEBAPP_URL: WEBAPP });
});
after(async () => {
  await server?.close();
});
afterEach(async () => {
  await setClock(server, 0);
  await harness(server, 'POST', '/rate-limits/reset');
});

const sweep = () => server.app.services.janitor.sweep();

async function count(sql: string, params: unknown[]): Promise<number> {
  const [row] = await server.app.services.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params);
  return Number(row?.n ?? 0);
}

const tokenRows = (token: string) => count('one_time_tokens WHERE token_hash = $1', [digest(token)]);

async function resetToken(email: string): Promise<string> {
  const res = await request(server, 'POST', '/v1/auth/forgot', { body: { email } });
  assert.equal(res.status, 204, res.text);
  return linkToken(await lastEmail(server, email, 'password_reset'), '/reset', WEBAPP);
}

describe('one-time tokens', () => {
  it('go an hour after they expire; consumed ones stay until then, and every use answers as before', async () => {
    const used = await registerUser(server);
    const idle = await registerUser(server);
    const consumed = await resetToken(used.email);
    const reset = await request(server, 'POST', '/v1/auth/reset', {
      body: { token: consumed, password: 'new-pass-1234' },
    });
    assert.equal(reset.status, 200, reset.text);
    const unused = await resetToken(idle.email);
    const reuse = () =>
      request(server, 'POST', '/v1/auth/reset', { body: { token: consumed, password: 'other-pass-99' } });
    assertFieldError(await reuse(), 'token', 'INVALID_OR_EXPIRED_RESET_TOKEN');

    await sweep();
    assert.equal(await tokenRows(consumed), 1, 'a consumed token is kept until it expires');
    assert.equal(await tokenRows(unused), 1);

    // Expired (1 h TTL) but inside the grace period: still kept.
    await setClock(server, HOUR + 30 * 60_000);
    await sweep();
    assert.equal(await tokenRows(consumed), 1);
    assert.equal(await tokenRows(unused), 1);
    assertFieldError(await reuse(), 'token', 'INVALID_OR_EXPIRED_RESET_TOKEN');

    await setClock(server, 2 * HOUR + 1000);
    const fresh = await resetToken(idle.email);
    const report = await sweep();
    assert.ok(report.oneTimeTokens >= 2, JSON.stringify(report));
    assert.equal(await tokenRows(consumed), 0);
    assert.equal(await tokenRows(unused), 0);
    assert.equal(await tokenRows(fresh), 1, 'a live token stays');

    // Same answers as before the rows went.
    assertFieldError(await reuse(), 'token', 'INVALID_OR_EXPIRED_RESET_TOKEN');
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${unused}`)).body, { valid: false });
    assert.deepEqual((await request(server, 'GET', `/v1/auth/reset/${fresh}`)).body, { valid: true });
  });
});

describe('relay uploads', () => {
  let owner: TestUser;
  let channelId: string;
  before(async () => {
    ({ owner, channelId } = await guildWithMembers(server, 0));
  });

  async function planAndPut(filename: string, bytes: string): Promise<string> {
    const planned = await request(server, 'POST', `/v1/channels/${channelId}/attachments`, {
      auth: owner.token,
      body: { attachments: [{ id: '1', filename, file_size: bytes.length, content_type: 'text/plain' }] },
    });
    assert.equal(planned.status, 200, planned.text);
    const [slot] = planned.body.attachments;
    const put = await fetch(slot.upload_url, { method: 'PUT', body: bytes });
    assert.equal(put.status, 200);
    return slot.upload_filename;
  }

  const uploadRows = (key: string) => count('pending_uploads WHERE upload_key = $1', [key]);
  const bytesOf = async (key: string) => (await server.app.services.objects.get(`uploads/${key}`))?.bytes.toString();
  const claim = (key: string) =>
    request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'x', attachments: [{ id: '1', filename: 'a.txt', upload_filename: key }] },
    });

  it('staged upload files a crashed process left behind go after an hour; recent ones stay', async () => {
    const objects = server.app.services.objects;
    await objects.put('staging/orphan0123456789abcdef', Buffer.from('half an upload'), 'application/octet-stream');
    let report = await sweep();
    assert.equal(report.stagedObjects, 0);
    assert.equal(await objects.size('staging/orphan0123456789abcdef'), 14);
    await setClock(server, HOUR + 5000);
    report = await sweep();
    assert.equal(report.stagedObjects, 1);
    assert.equal(await objects.size('staging/orphan0123456789abcdef'), undefined);
  });

  it('unclaimed uploads go with their bytes an hour after they expire; live ones stay', async () => {
    const abandoned = await planAndPut('abandoned.txt', 'hello');
    const claimed = await planAndPut('claimed.txt', 'world');
    assert.equal((await claim(claimed)).status, 200);
    assert.equal(await bytesOf(abandoned), 'hello');

    await sweep();
    assert.equal(await uploadRows(abandoned), 1);
    assert.equal(await bytesOf(abandoned), 'hello');

    // Planned uploads live 15 minutes; 15 min + 1 h + a bit later they are due.
    await setClock(server, 15 * 60_000 + HOUR + 5000);
    const live = await planAndPut('live.txt', 'still');
    const report = await sweep();
    assert.ok(report.pendingUploads >= 2, JSON.stringify(report));
    assert.equal(await uploadRows(abandoned), 0);
    assert.equal(await bytesOf(abandoned), undefined, 'the bytes of an abandoned upload are deleted');
    assert.equal(await uploadRows(claimed), 0);
    assert.equal(await uploadRows(live), 1);
    assert.equal(await bytesOf(live), 'still');

    const late = await claim(abandoned);
    assertFieldError(late, 'attachments.0.upload_filename', 'UPLOADED_ATTACHMENT_NOT_FOUND');
    assert.equal((await claim(live)).status, 200);
  });
});

describe('OAuth2 codes and tokens', () => {
  let user: TestUser;
  let app: TestApplication;
  before(async () => {
    user = await registerUser(server);
    app = await createApplication(server, await registerUser(server), { redirect_uris: [REDIRECT] });
  });

  const exchange = (code: string) =>
    clientPost(server, '/v1/oauth2/token', app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
  const codeRows = (code: string) => count('oauth2_codes WHERE code_hash = $1', [digest(code)]);
  const oauthTokenRows = (...tokens: string[]) =>
    count('oauth2_tokens WHERE token_hash = ANY($1::text[])', [tokens.map(digest)]);

  it('codes and tokens go an hour after they expire, with the same token-endpoint answers', async () => {
    const unredeemed = await approve(server, user, app);
    const tokens = await issueTokens(server, user, app, 'identify');
    const rotated = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    assert.equal(rotated.status, 200, rotated.text);

    // The 10-minute code is past its grace; 7-day access and 30-day refresh tokens are not.
    await setClock(server, 10 * 60_000 + HOUR + 1000);
    const before = await exchange(unredeemed);
    assert.equal(before.body.error, 'invalid_grant');
    await sweep();
    assert.equal(await codeRows(unredeemed), 0);
    const afterSweep = await exchange(unredeemed);
    assert.equal(afterSweep.status, before.status);
    assert.equal(afterSweep.body.error, 'invalid_grant');
    assert.equal(await oauthTokenRows(tokens.access_token, tokens.refresh_token), 2, 'live and used tokens stay');
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${rotated.body.access_token}` });
    assert.equal(me.status, 200);

    // Past the refresh tokens' 30 days (+ grace) everything of that day is gone.
    await setClock(server, 30 * 24 * HOUR + HOUR + 1000);
    await sweep();
    assert.equal(
      await oauthTokenRows(
        tokens.access_token,
        tokens.refresh_token,
        rotated.body.access_token,
        rotated.body.refresh_token,
      ),
      0,
    );
    const late = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token,
    });
    assert.equal(late.status, 400);
    assert.equal(late.body.error, 'invalid_grant');
  });
});

describe('MFA attempts', () => {
  async function failOnce(user: TestUser, secret: string): Promise<void> {
    const login = await request(server, 'POST', '/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(login.body.mfa, true, login.text);
    const wrong = totpCode(secret) === '000000' ? '111111' : '000000';
    const res = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
      body: { code: wrong, ticket: login.body.ticket },
      headers: STRICT,
    });
    assert.equal(res.status, 400, res.text);
  }
  const attempts = (user: TestUser) => count('mfa_attempts WHERE user_id = $1', [user.id]);

  // An account that tries again drops its own stale attempts; these are the ones of accounts that never do.
  it('go once they are outside the 15-minute window (plus the grace period)', async () => {
    const gaveUp = await registerUser(server);
    const active = await registerUser(server);
    const gaveUpSecret = (await enableTotp(server, gaveUp.token)).secret;
    const activeSecret = (await enableTotp(server, active.token)).secret;
    await failOnce(gaveUp, gaveUpSecret);
    await sweep();
    assert.equal(await attempts(gaveUp), 1);

    await setClock(server, 15 * 60_000 + HOUR + 1000);
    await failOnce(active, activeSecret);
    await sweep();
    assert.equal(await attempts(gaveUp), 0);
    assert.equal(await attempts(active), 1, 'an attempt inside the window stays');
  });
});

describe('guild audit log entries', () => {
  it("go once older than Discord's 45 days", async () => {
    const { owner, guild } = await guildWithMembers(server, 0);
    const patch = await request(server, 'PATCH', `/v1/guilds/${guild.id}`, {
      auth: owner.token,
      body: { name: 'Kept for a while' },
    });
    assert.equal(patch.status, 200, patch.text);
    const entries = () => count('guild_audit_log WHERE guild_id = $1', [guild.id]);
    assert.equal(await entries(), 1);
    await setClock(server, 44 * 24 * HOUR);
    await sweep();
    assert.equal(await entries(), 1, 'an entry 44 days old is kept');
    await setClock(server, 46 * 24 * HOUR);
    const report = await sweep();
    assert.equal(await entries(), 0);
    assert.ok(report.guildAuditEntries >= 1);
  });
});

describe('the periodic sweep', () => {
  async function insertToken(purpose: string, expiresAt: number): Promise<string> {
    const hash = digest(`${purpose}:${Math.random()}`);
    await server.app.services.db.query(
      'INSERT INTO one_time_tokens (token_hash, purpose, expires_at, created_at) VALUES ($1, $2, $3, $3)',
      [hash, purpose, new Date(expiresAt)],
    );
    return hash;
  }
  const rowsOf = (purpose: string) => count('one_time_tokens WHERE purpose = $1', [purpose]);

  async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (await check()) return true;
      await sleep(100);
    }
    return check();
  }

  it('runs by itself (test mode: every second)', async () => {
    await insertToken('janitor_timer', Date.now() - 2 * HOUR);
    assert.ok(await waitFor(async () => (await rowsOf('janitor_timer')) === 0, 5000), 'the timer never swept');
  });

  it('leaves rows alone while the test clock runs ahead; an explicit sweep uses the shifted clock', async () => {
    await setClock(server, 3 * HOUR);
    await insertToken('janitor_ahead', Date.now() - 60_000);
    await sleep(2500);
    assert.equal(await rowsOf('janitor_ahead'), 1);
    await sweep();
    assert.equal(await rowsOf('janitor_ahead'), 0);
  });

  it('deletes in bounded batches', async () => {
    const { db, clock, objects, log } = server.app.services;
    const small = new Janitor({ db, clock, objects, log }, { batchSize: 2, maxBatches: 1 });
    // Due only by the shifted clock, so the automatic sweep (which waits for real time) leaves them.
    await setClock(server, 10 * HOUR);
    for (let i = 0; i < 5; i++) await insertToken('janitor_batch', Date.now() + HOUR);
    const first = await small.sweep();
    assert.equal(first.oneTimeTokens, 2);
    let rounds = 1;
    while ((await rowsOf('janitor_batch')) > 0 && rounds < 20) {
      const report = await small.sweep();
      assert.ok(report.oneTimeTokens <= 2);
      rounds += 1;
    }
    assert.equal(await rowsOf('janitor_batch'), 0);
    assert.ok(rounds >= 3, `5 rows in batches of 2 took ${rounds} sweeps`);
  });
});
