import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, adminUser, createKey, insertApplicationWithBot } from '../support/admin.ts';
import { as, guildWithMembers, newGuild, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Safety reports (docs/safety.md) and the admins' review queue (docs/admin.md "Reports"). */

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
let erin: TestUser;
let frank: TestUser;
let outsider: TestUser;
let admin: TestUser;
let guild: any;
let general: string;

before(async () => {
  server = await startTestServer();
  const setup = await guildWithMembers(server, 6);
  owner = setup.owner;
  // Each test files as its own members: filing has a small rate limit (10 a minute per account).
  [alice, bob, carol, dave, erin, frank] = setup.members as TestUser[] as [
    TestUser,
    TestUser,
    TestUser,
    TestUser,
    TestUser,
    TestUser,
  ];
  guild = setup.guild;
  general = setup.channelId;
  outsider = await registerUser(server);
  admin = await adminUser(server, ['*']);
});
after(async () => {
  await server?.close();
});

const post = (user: TestUser, content: string) =>
  ok(as(server, user, 'POST', `/channels/${general}/messages`, { content }));
const report = (user: TestUser | { auth: string }, kind: string, body: unknown) =>
  as(server, user, 'POST', `/reports/${kind}`, body);

function invalid(res: { status: number; body: any }, path: string, code: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  assert.deepEqual(
    res.body.errors.map((e: any) => [e.path, e.code]),
    [[path, code]],
  );
}

function refused(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.code, code);
}

describe('filing reports', () => {
  it('reports a message with a snapshot that outlives the message, and shows the reporter only their own report', async () => {
    const message = await post(alice, 'buy cheap watches at example.test');
    const res = await report(bob, 'message', {
      channel_id: general,
      message_id: message.id,
      category: 'spam',
      description: 'Posted in every channel',
    });
    assert.equal(res.status, 200, res.text);
    const { id, created_at, ...rest } = res.body;
    assert.match(id, /^\d+$/);
    assert.match(created_at, ISO_MS);
    assert.deepEqual(rest, {
      target_type: 'message',
      target_id: message.id,
      channel_id: general,
      guild_id: guild.id,
      category: 'spam',
      description: 'Posted in every channel',
      status: 'open',
    });

    // The author deletes the message: the report keeps what it said.
    assert.equal((await as(server, alice, 'DELETE', `/channels/${general}/messages/${message.id}`)).status, 204);
    const seen = await adminCall(server, 'GET', `/reports/${id}`, admin.token);
    assert.equal(seen.status, 200, seen.text);
    assert.equal(seen.body.snapshot.id, message.id);
    assert.equal(seen.body.snapshot.content, 'buy cheap watches at example.test');
    assert.equal(seen.body.snapshot.author.id, alice.id);
    assert.equal(seen.body.snapshot.channel_id, general);
    assert.equal(seen.body.snapshot.guild_id, guild.id);
    assert.equal(seen.body.snapshot.reactions, undefined);
    assert.equal(seen.body.reporter_id, bob.id);
    assert.equal(seen.body.reporter.id, bob.id);
    assert.equal(seen.body.status, 'open');
    assert.equal(seen.body.closed_at, null);
    assert.equal(seen.body.closed_by, null);
    assert.equal(seen.body.resolution_note, null);
  });

  it('answers a second report on the same open target with the first one; another reporter files their own', async () => {
    const message = await post(alice, 'report me twice');
    const body = { channel_id: general, message_id: message.id, category: 'harassment' };
    const first = await ok(report(bob, 'message', body));
    const again = await ok(report(bob, 'message', { ...body, category: 'other', description: 'again' }));
    assert.deepEqual(again, first);
    assert.equal(again.description, null);
    const byCarol = await ok(report(carol, 'message', body));
    assert.notEqual(byCarol.id, first.id);
  });

  it('accepts a description of 1000 characters and refuses 1001, a category outside the set, and bad ids', async () => {
    const message = await post(alice, 'bounded');
    const base = { channel_id: general, message_id: message.id, category: 'other' };
    invalid(
      await report(dave, 'message', { ...base, description: 'x'.repeat(1001) }),
      'description',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
    invalid(await report(dave, 'message', { ...base, category: 'rudeness' }), 'category', 'INVALID_FORMAT');
    invalid(
      await report(dave, 'message', { channel_id: general, message_id: message.id }),
      'category',
      'BASE_TYPE_REQUIRED',
    );
    invalid(await report(dave, 'message', { ...base, message_id: 'abc' }), 'message_id', 'INVALID_SNOWFLAKE_FORMAT');
    const okRes = await ok(report(dave, 'message', { ...base, description: 'x'.repeat(1000) }));
    assert.equal(okRes.description.length, 1000);
  });

  it('refuses a message the reporter cannot see, an unknown channel and an unknown message', async () => {
    const message = await post(alice, 'members only');
    const body = { channel_id: general, message_id: message.id, category: 'spam' };
    refused(await report(outsider, 'message', body), 403, 'MISSING_ACCESS');
    refused(await report(erin, 'message', { ...body, channel_id: '1' }), 404, 'UNKNOWN_CHANNEL');
    refused(await report(erin, 'message', { ...body, message_id: '1' }), 404, 'UNKNOWN_MESSAGE');
    // Another channel's message id does not name a message of this channel.
    const other = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'other' }));
    const elsewhere = await ok(as(server, alice, 'POST', `/channels/${other.id}/messages`, { content: 'hi' }));
    refused(await report(erin, 'message', { ...body, message_id: elsewhere.id }), 404, 'UNKNOWN_MESSAGE');
    const listed = await adminCall(server, 'POST', '/reports/list', admin.token, { target_id: message.id });
    assert.equal(listed.body.total, 0);
  });

  it('reports a message in a DM between its recipients', async () => {
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    const message = await ok(as(server, alice, 'POST', `/channels/${dm.id}/messages`, { content: 'a DM' }));
    const filed = await ok(
      report(bob, 'message', { channel_id: dm.id, message_id: message.id, category: 'harassment' }),
    );
    assert.equal(filed.channel_id, dm.id);
    assert.equal(filed.guild_id, null);
    refused(
      await report(carol, 'message', { channel_id: dm.id, message_id: message.id, category: 'harassment' }),
      403,
      'MISSING_ACCESS',
    );
  });

  it('reports a user, not oneself and not an unknown account', async () => {
    const filed = await ok(report(frank, 'user', { user_id: alice.id, category: 'harassment', description: '' }));
    assert.equal(filed.target_type, 'user');
    assert.equal(filed.target_id, alice.id);
    assert.equal(filed.channel_id, null);
    assert.equal(filed.guild_id, null);
    assert.equal(filed.description, null);
    refused(await report(frank, 'user', { user_id: frank.id, category: 'spam' }), 400, 'CANNOT_REPORT_YOURSELF');
    refused(await report(frank, 'user', { user_id: '1', category: 'spam' }), 404, 'UNKNOWN_USER');
    const seen = await ok(adminCall(server, 'GET', `/reports/${filed.id}`, admin.token));
    assert.equal(seen.snapshot.id, alice.id);
    assert.equal(seen.snapshot.username, alice.username);
  });

  it('reports a guild its reporter belongs to; a non-member or an unknown guild is refused', async () => {
    const filed = await ok(report(carol, 'guild', { guild_id: guild.id, category: 'illegal_content' }));
    assert.equal(filed.target_type, 'guild');
    assert.equal(filed.guild_id, guild.id);
    refused(await report(outsider, 'guild', { guild_id: guild.id, category: 'spam' }), 403, 'MISSING_ACCESS');
    refused(await report(outsider, 'guild', { guild_id: '1', category: 'spam' }), 404, 'UNKNOWN_GUILD');
    const seen = await ok(adminCall(server, 'GET', `/reports/${filed.id}`, admin.token));
    assert.deepEqual(seen.snapshot, { id: guild.id, name: guild.name, icon: null, owner_id: owner.id });
  });

  it('refuses unauthenticated callers and bots', async () => {
    const res = await request(server, 'POST', '/v1/reports/user', { body: { user_id: alice.id, category: 'spam' } });
    refused(res, 401, 'UNAUTHORIZED');
    const { botToken } = await insertApplicationWithBot(server, owner.id);
    refused(
      await report({ auth: `Bot ${botToken}` }, 'user', { user_id: alice.id, category: 'spam' }),
      403,
      'ACCESS_DENIED',
    );
  });
});

describe('the admin review queue', () => {
  it('lists open reports by target type, newest first, in pages, with the filtered total', async () => {
    const reporter = await registerUser(server);
    const mine = await newGuild(server, reporter, 'Queue guild');
    const a = await ok(report(reporter, 'user', { user_id: alice.id, category: 'spam' }));
    const b = await ok(report(reporter, 'user', { user_id: bob.id, category: 'spam' }));
    const g = await ok(report(reporter, 'guild', { guild_id: mine.id, category: 'other' }));
    const page = await ok(
      adminCall(server, 'POST', '/reports/list', admin.token, {
        reporter_id: reporter.id,
        target_type: 'user',
        limit: 1,
      }),
    );
    assert.equal(page.total, 2);
    assert.deepEqual(
      page.reports.map((r: any) => r.id),
      [b.id],
    );
    const next = await ok(
      adminCall(server, 'POST', '/reports/list', admin.token, {
        reporter_id: reporter.id,
        target_type: 'user',
        before: b.id,
      }),
    );
    assert.deepEqual(
      next.reports.map((r: any) => r.id),
      [a.id],
    );
    const all = await ok(
      adminCall(server, 'POST', '/reports/list', admin.token, { reporter_id: reporter.id, status: 'open' }),
    );
    assert.deepEqual(
      all.reports.map((r: any) => r.id),
      [g.id, b.id, a.id],
    );
    invalid(
      await adminCall(server, 'POST', '/reports/list', admin.token, { status: 'closed' }),
      'status',
      'INVALID_FORMAT',
    );
    invalid(
      await adminCall(server, 'POST', '/reports/list', admin.token, { limit: 101 }),
      'limit',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
  });

  it('resolves and dismisses with a note, once, each written to the audit log; the reporter may then report again', async () => {
    const reporter = await registerUser(server);
    const target = await registerUser(server);
    const filed = await ok(report(reporter, 'user', { user_id: target.id, category: 'harassment' }));
    const { key_id, key } = await createKey(server, admin, ['report:view', 'report:resolve', 'audit_log:view']);

    const resolved = await adminCall(
      server,
      'POST',
      '/reports/resolve',
      `Admin ${key}`,
      { report_id: filed.id, note: 'Warned the user' },
      { 'X-Audit-Log-Reason': 'ticket%2042' },
    );
    assert.equal(resolved.status, 200, resolved.text);
    assert.equal(resolved.body.id, filed.id);
    assert.equal(resolved.body.status, 'resolved');
    assert.equal(resolved.body.resolution_note, 'Warned the user');
    assert.equal(resolved.body.closed_by, admin.id);
    assert.match(resolved.body.closed_at, ISO_MS);

    refused(
      await adminCall(server, 'POST', '/reports/dismiss', admin.token, { report_id: filed.id }),
      400,
      'REPORT_ALREADY_CLOSED',
    );
    refused(
      await adminCall(server, 'POST', '/reports/resolve', admin.token, { report_id: '1' }),
      404,
      'UNKNOWN_REPORT',
    );
    refused(await adminCall(server, 'GET', '/reports/1', admin.token), 404, 'UNKNOWN_REPORT');
    refused(await adminCall(server, 'GET', '/reports/nope', admin.token), 404, 'UNKNOWN_REPORT');
    invalid(
      await adminCall(server, 'POST', '/reports/resolve', admin.token, { report_id: filed.id, note: 'n'.repeat(1001) }),
      'note',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );

    const logs = await ok(
      adminCall(server, 'POST', '/audit-logs', admin.token, { target_type: 'report', target_id: filed.id }),
    );
    assert.equal(logs.total, 1);
    const [entry] = logs.logs;
    assert.deepEqual(
      { ...entry, log_id: undefined, created_at: undefined },
      {
        log_id: undefined,
        admin_user_id: admin.id,
        credential_kind: 'admin_api_key',
        api_key_id: key_id,
        action: 'report.resolve',
        target_type: 'report',
        target_id: filed.id,
        audit_log_reason: 'ticket 42',
        metadata: { target_type: 'user', target_id: target.id, category: 'harassment' },
        before: { status: 'open' },
        after: { status: 'resolved', resolution_note: 'Warned the user' },
        created_at: undefined,
      },
    );

    // Closed: the next report on the same target is a new one, which can be dismissed.
    const second = await ok(report(reporter, 'user', { user_id: target.id, category: 'harassment' }));
    assert.notEqual(second.id, filed.id);
    const dismissed = await ok(adminCall(server, 'POST', '/reports/dismiss', admin.token, { report_id: second.id }));
    assert.equal(dismissed.status, 'dismissed');
    assert.equal(dismissed.resolution_note, null);
    const actions = await ok(adminCall(server, 'POST', '/audit-logs', admin.token, { target_id: second.id }));
    assert.deepEqual(
      actions.logs.map((l: any) => [l.action, l.credential_kind]),
      [['report.dismiss', 'session']],
    );
    const byStatus = await ok(
      adminCall(server, 'POST', '/reports/list', admin.token, { reporter_id: reporter.id, status: 'dismissed' }),
    );
    assert.deepEqual(
      byStatus.reports.map((r: any) => r.id),
      [second.id],
    );
  });

  it('is closed to reporters, to admins without the report ACLs, and to callers without a credential', async () => {
    const filed = await ok(report(alice, 'user', { user_id: carol.id, category: 'other' }));
    refused(await adminCall(server, 'POST', '/reports/list', alice.token, {}), 403, 'MISSING_PERMISSIONS');
    refused(await adminCall(server, 'GET', `/reports/${filed.id}`, alice.token), 403, 'MISSING_PERMISSIONS');
    refused(await adminCall(server, 'POST', '/reports/list', undefined, {}), 401, 'UNAUTHORIZED');
    const viewer = await adminUser(server, ['admin:authenticate', 'report:view']);
    assert.equal((await adminCall(server, 'GET', `/reports/${filed.id}`, viewer.token)).status, 200);
    const res = await adminCall(server, 'POST', '/reports/resolve', viewer.token, { report_id: filed.id });
    refused(res, 403, 'MISSING_ACL');
    assert.equal(res.body.required_acl, 'report:resolve');
    const other = await adminUser(server, ['admin:authenticate', 'user:lookup']);
    const list = await adminCall(server, 'POST', '/reports/list', other.token, {});
    refused(list, 403, 'MISSING_ACL');
    assert.equal(list.body.required_acl, 'report:view');
    // Refusals change nothing.
    const still = await ok(adminCall(server, 'GET', `/reports/${filed.id}`, admin.token));
    assert.equal(still.status, 'open');
  });
});
