import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { as, guildWithMembers, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { createBot, lastEmail, setClock } from '../support/lifecycle.ts';
import { enableTotp } from '../support/mfa.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Data export (`/users/@me/harvest`, docs/accounts.md#your-data-data-export): requested over the API, built in the
 * background, announced by email with a signed one-time link, downloaded once.
 */
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await setClock(server, 0).catch(() => {});
  await server?.close();
});

/** A registered user whose address is verified through the emailed link, as a person would. */
async function verifiedUser(): Promise<TestUser> {
  const user = await registerUser(server);
  const token = (await lastEmail(server, user.email, 'email_verification')).metadata.token;
  const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
  assert.equal(res.status, 204, res.text);
  return user;
}

/** Polls what the account settings page shows until the export leaves the queue. */
async function waitForStatus(user: TestUser, wanted: string): Promise<Record<string, any>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await as(server, user, 'GET', '/users/@me/harvest');
    assert.equal(res.status, 200, res.text);
    if (res.body?.status === wanted) return res.body;
    assert.notEqual(res.body?.status, wanted === 'failed' ? 'completed' : 'failed', res.text);
    if (Date.now() > deadline) throw new Error(`harvest still ${res.body?.status}, wanted ${wanted}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The download URL in the harvest email's plain text (what a person clicks). */
async function emailedLink(user: TestUser): Promise<string> {
  const email = await lastEmail(server, user.email, 'harvest_ready');
  assert.equal(email.subject, 'Your data is ready to download');
  const match = /Download your data: (\S+)/.exec(email.text);
  assert.ok(match, email.text);
  return match[1] as string;
}

function tampered(link: string, name: string, value: string): string {
  const url = new URL(link);
  url.searchParams.set(name, value);
  return url.toString();
}

async function download(link: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(link);
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

function lines(archive: Buffer): { text: string; records: Record<string, any>[] } {
  const text = gunzipSync(archive).toString('utf8');
  assert.ok(text.endsWith('\n'));
  return {
    text,
    records: text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line)),
  };
}

describe('data export: refusals', () => {
  it('answers 401 without a credential, on every route', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await request(server, method, '/v1/users/@me/harvest');
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
  });

  it('refuses bots (403 ACCESS_DENIED): a bot has no data export', async () => {
    const bot = await createBot(server);
    for (const method of ['GET', 'POST']) {
      const res = await request(server, method, '/v1/users/@me/harvest', { auth: bot.token });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.code, 'ACCESS_DENIED');
    }
  });

  it('refuses an account whose email is not verified (the link goes there)', async () => {
    const user = await registerUser(server);
    const res = await as(server, user, 'POST', '/users/@me/harvest');
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.code, 'HARVEST_REQUIRES_VERIFIED_EMAIL');
    assert.equal((await as(server, user, 'GET', '/users/@me/harvest')).text, 'null');
  });

  it('answers 404 UNKNOWN_HARVEST to a download link that is malformed or names nothing', async () => {
    for (const path of [
      '/v1/harvests/1/download',
      '/v1/harvests/abc/download?expires=1&token=x&signature=y',
      `/v1/harvests/1/download?expires=${Math.floor(Date.now() / 1000) + 60}&token=x&signature=${'A'.repeat(43)}`,
    ]) {
      const res = await request(server, 'GET', path);
      assert.equal(res.status, 404, `${path}: ${res.text}`);
      assert.equal(res.body.code, 'UNKNOWN_HARVEST');
    }
  });
});

describe('data export: request, build, email, download once', () => {
  let alice: TestUser;
  let bob: TestUser;
  let totpSecret: string;
  let backupCodes: string[];
  let attachmentUrl: string;
  let channelId: string;
  let dmId: string;

  before(async () => {
    alice = await verifiedUser();
    const setup = await guildWithMembers(server, 0);
    bob = setup.owner;
    channelId = setup.channelId;
    const invite = await ok(as(server, bob, 'POST', `/channels/${channelId}/invites`, { unique: true }));
    await ok(as(server, alice, 'POST', `/invites/${invite.code}`));
    for (const content of ['first words', 'second words']) {
      await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content }));
    }
    await ok(as(server, bob, 'POST', `/channels/${channelId}/messages`, { content: 'bob says something' }));
    const body = new FormData();
    body.append(
      'payload_json',
      JSON.stringify({ content: 'with a file', attachments: [{ id: 0, filename: 'notes.txt' }] }),
    );
    body.append('files[0]', new Blob([new TextEncoder().encode('hello file')], { type: 'text/plain' }), 'notes.txt');
    const posted = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      body,
      headers: { authorization: alice.token },
    });
    assert.equal(posted.status, 200);
    attachmentUrl = ((await posted.json()) as { attachments: { url: string }[] }).attachments[0]?.url as string;
    assert.ok(attachmentUrl);
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    dmId = dm.id;
    await ok(as(server, alice, 'POST', `/channels/${dmId}/messages`, { content: 'a private word' }));
    ({ secret: totpSecret, backupCodes } = await enableTotp(server, alice.token));
  });

  let link: string;

  it('answers null before any request', async () => {
    const res = await as(server, alice, 'GET', '/users/@me/harvest');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'null');
  });

  it('queues a request (pending), builds it, and mails a download link', async () => {
    const res = await as(server, alice, 'POST', '/users/@me/harvest');
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.harvest_id, /^\d+$/);
    assert.equal(res.body.user_id, alice.id);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.completed_at, null);
    assert.equal(res.body.downloaded, false);
    assert.equal(
      Date.parse(res.body.next_request_at) - Date.parse(res.body.created_at),
      24 * 3600_000,
      'one request per 24 hours',
    );
    const done = await waitForStatus(alice, 'completed');
    assert.equal(done.harvest_id, res.body.harvest_id);
    assert.ok(done.size_bytes > 0);
    assert.ok(Date.parse(done.link_expires_at) - Date.parse(done.completed_at) === 7 * 24 * 3600_000);
    link = await emailedLink(alice);
    assert.ok(link.startsWith(`${server.url}/v1/harvests/${res.body.harvest_id}/download?`), link);
  });

  it('refuses an edited link (404 UNKNOWN_HARVEST) without spending it', async () => {
    const later = String(Math.floor(Date.now() / 1000) + 30 * 24 * 3600);
    for (const edited of [
      tampered(link, 'expires', later),
      tampered(link, 'token', 'A'.repeat(64)),
      tampered(link, 'signature', 'A'.repeat(43)),
    ]) {
      const res = await download(edited);
      assert.equal(res.status, 404);
      assert.equal(JSON.parse(res.bytes.toString()).code, 'UNKNOWN_HARVEST');
    }
  });

  it('downloads the archive once: the account, its messages per channel, attachment URLs and no secrets', async () => {
    const res = await download(link);
    assert.equal(res.status, 200, res.bytes.toString());
    assert.equal(res.headers.get('content-type'), 'application/gzip');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="hearth-data-\d+\.jsonl\.gz"$/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { text, records } = lines(res.bytes);

    assert.equal(records[0]?.type, 'harvest');
    assert.equal(records[0]?.user_id, alice.id);
    const account = records.find((r) => r.type === 'account')?.data;
    assert.equal(account.id, alice.id);
    assert.equal(account.username, alice.username);
    assert.equal(account.email, alice.email);
    assert.equal(account.verified, true);
    assert.ok(Array.isArray(account.sessions) && account.sessions.length >= 1);
    assert.ok(typeof account.settings === 'object');
    assert.deepEqual(account.connections, []);

    const guilds = records.find((r) => r.type === 'guilds')?.data;
    assert.deepEqual(
      guilds.map((g: any) => g.id),
      [(await ok(as(server, bob, 'GET', `/channels/${channelId}`))).guild_id],
    );

    const messages = records.filter((r) => r.type === 'message').map((r) => r.data);
    // Joining the guild posted a join message (type 7) in the account's name: it is the account's too.
    assert.deepEqual(
      messages.map((m) => [m.type, m.content]),
      [
        [7, ''],
        [0, 'first words'],
        [0, 'second words'],
        [0, 'with a file'],
        [0, 'a private word'],
      ],
    );
    assert.ok(!text.includes('bob says something'), 'only the account’s own messages');
    assert.deepEqual(
      messages.map((m) => m.channel_id),
      [channelId, channelId, channelId, channelId, dmId],
    );
    const attachments = records.filter((r) => r.type === 'attachment').map((r) => r.data);
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0].url, attachmentUrl);
    assert.equal(attachments[0].filename, 'notes.txt');
    const channels = records.find((r) => r.type === 'channels')?.data;
    assert.deepEqual(
      channels.map((c: any) => [c.id, c.message_count]).sort(),
      [
        [channelId, 4],
        [dmId, 1],
      ].sort(),
    );
    assert.deepEqual(channels.find((c: any) => c.id === dmId).recipients.sort(), [alice.id, bob.id].sort());
    assert.deepEqual(records.at(-1), { type: 'end', message_count: 5, attachment_count: 1, truncated: false });

    // No secret of the account, in any form: password (plain and hashed), session tokens and their digests,
    // the TOTP secret (plain and sealed), backup codes.
    const { db } = server.app.services;
    const [user] = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [
      alice.id,
    ]);
    const sessions = await db.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE user_id = $1', [
      alice.id,
    ]);
    const totp = await db.query<{ secret: string }>('SELECT secret FROM mfa_totp WHERE user_id = $1', [alice.id]);
    const backup = await db.query<{ code_hash: string; code_sealed: string | null }>(
      'SELECT code_hash, code_sealed FROM mfa_backup_codes WHERE user_id = $1',
      [alice.id],
    );
    const secrets = [
      alice.password,
      user?.password_hash as string,
      alice.token,
      ...sessions.map((s) => s.token_hash),
      totpSecret,
      ...totp.map((row) => row.secret),
      ...backupCodes,
      ...backup.flatMap((row) => [row.code_hash, ...(row.code_sealed ? [row.code_sealed] : [])]),
    ] as string[];
    assert.ok(backup.length > 0 && backupCodes.length > 0);
    assert.ok(sessions.length >= 1 && totp.length === 1 && (user?.password_hash ?? '').length > 20);
    for (const secret of secrets)
      assert.ok(!text.includes(secret), `the archive holds a secret: ${secret.slice(0, 6)}…`);
    for (const name of ['password', 'token', 'secret', 'hash', 'totp', 'backup']) {
      assert.ok(!new RegExp(`"[a-z_]*${name}[a-z_]*":`).test(text), `the archive has a member named like ${name}`);
    }
  });

  it('refuses the link the second time (410 HARVEST_LINK_USED) and shows the export downloaded', async () => {
    const res = await download(link);
    assert.equal(res.status, 410);
    assert.equal(JSON.parse(res.bytes.toString()).code, 'HARVEST_LINK_USED');
    const state = await as(server, alice, 'GET', '/users/@me/harvest');
    assert.equal(state.body.status, 'completed');
    assert.equal(state.body.downloaded, true);
  });

  it('refuses a second request within 24 hours (429 HARVEST_COOLDOWN), accepts one after', async () => {
    const res = await as(server, alice, 'POST', '/users/@me/harvest');
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.code, 'HARVEST_COOLDOWN');
    const current = (await as(server, alice, 'GET', '/users/@me/harvest')).body;
    assert.equal(res.body.next_request_at, current.next_request_at);
    assert.ok(res.body.retry_after > 23 * 3600 && res.body.retry_after <= 24 * 3600, String(res.body.retry_after));
    assert.equal(res.headers.get('retry-after'), String(res.body.retry_after));
    try {
      await setClock(server, 24 * 3600_000 + 1000);
      const again = await as(server, alice, 'POST', '/users/@me/harvest');
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.status, 'pending');
      assert.notEqual(again.body.harvest_id, current.harvest_id);
      await waitForStatus(alice, 'completed');
    } finally {
      await setClock(server, 0);
    }
  });
});

describe('data export: expiry and recovery', () => {
  it('refuses a link past its 7 days (410 HARVEST_LINK_EXPIRED)', async () => {
    const user = await verifiedUser();
    await ok(as(server, user, 'POST', '/users/@me/harvest'));
    await waitForStatus(user, 'completed');
    const link = await emailedLink(user);
    try {
      await setClock(server, 7 * 24 * 3600_000 + 1000);
      const res = await download(link);
      assert.equal(res.status, 410);
      assert.equal(JSON.parse(res.bytes.toString()).code, 'HARVEST_LINK_EXPIRED');
    } finally {
      await setClock(server, 0);
    }
  });

  it('gives the archive to one of two simultaneous uses of the link; the other gets 410 HARVEST_LINK_USED', async () => {
    const user = await verifiedUser();
    await ok(as(server, user, 'POST', '/users/@me/harvest'));
    await waitForStatus(user, 'completed');
    const link = await emailedLink(user);
    const results = await Promise.all([download(link), download(link)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 410]);
    const refused = results.find((r) => r.status === 410);
    assert.equal(JSON.parse(refused?.bytes.toString() ?? '{}').code, 'HARVEST_LINK_USED');
    const served = results.find((r) => r.status === 200);
    assert.equal(lines(served?.bytes as Buffer).records[0]?.user_id, user.id);
  });

  it('builds again a job whose process died mid-build (its lease ran out), and fails one out of attempts', async () => {
    const { harvests, db } = server.app.services;
    const user = await verifiedUser();
    const other = await verifiedUser();
    // No automatic build while the rows are set up as a process that died would have left them.
    await harvests.stop();
    try {
      const first = await ok(as(server, user, 'POST', '/users/@me/harvest'));
      const second = await ok(as(server, other, 'POST', '/users/@me/harvest'));
      const past = new Date(Date.now() - 60_000);
      await db.query(`UPDATE harvests SET status = 'running', attempts = 1, lease_until = $2 WHERE id = $1`, [
        first.harvest_id,
        past,
      ]);
      await db.query(`UPDATE harvests SET status = 'running', attempts = 3, lease_until = $2 WHERE id = $1`, [
        second.harvest_id,
        past,
      ]);
      assert.equal((await as(server, user, 'GET', '/users/@me/harvest')).body.status, 'running');
    } finally {
      harvests.start();
      harvests.wake();
    }
    await waitForStatus(user, 'completed');
    await emailedLink(user);
    const failed = await waitForStatus(other, 'failed');
    assert.equal(failed.next_request_at, null);
    // A failed export does not count for the cooldown.
    const again = await as(server, other, 'POST', '/users/@me/harvest');
    assert.equal(again.status, 200, again.text);
    await waitForStatus(other, 'completed');
  });
});
