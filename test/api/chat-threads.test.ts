import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, bits, DispatchRecorder, guildWithMembers, join, ok, P } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { setClock } from '../support/lifecycle.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const MANAGE_THREADS = 1n << 34n;
const CREATE_PUBLIC_THREADS = 1n << 35n;
const CREATE_PRIVATE_THREADS = 1n << 36n;
const SEND_MESSAGES_IN_THREADS = 1n << 38n;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let guild: any;
let channelId: string;
let carolGw: GatewayClient;

before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  const setup = await guildWithMembers(server, 3);
  owner = setup.owner;
  [alice, bob, carol] = setup.members as [TestUser, TestUser, TestUser];
  guild = setup.guild;
  channelId = setup.channelId;
  ({ client: carolGw } = await readyClient(server, carol.token));
});
after(async () => {
  events?.close();
  await carolGw?.close();
  await server?.close();
});

const post = (user: TestUser, channel: string, content: string) =>
  as(server, user, 'POST', `/channels/${channel}/messages`, { content });
const newThread = (user: TestUser, body: Record<string, unknown>, parent = channelId) =>
  ok(as(server, user, 'POST', `/channels/${parent}/threads`, body));
const freshChannel = async () =>
  (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'threads-here' }))).id as string;
const denyFor = (channel: string, user: TestUser, deny: bigint) =>
  ok(as(server, owner, 'PUT', `/channels/${channel}/permissions/${user.id}`, { type: 1, deny: bits(deny) }), 204);

describe('creating threads', () => {
  it('starts a public thread from a message: same id, thread_metadata, creator joined, THREAD_CREATE newly_created', async () => {
    const starter = await ok(post(alice, channelId, 'let us talk'));
    events.clear();
    const res = await as(server, alice, 'POST', `/channels/${channelId}/messages/${starter.id}/threads`, {
      name: 'Talk',
      auto_archive_duration: 60,
    });
    assert.equal(res.status, 200, res.text);
    const t = res.body;
    assert.equal(t.id, starter.id);
    assert.equal(t.type, 11);
    assert.equal(t.guild_id, guild.id);
    assert.equal(t.parent_id, channelId);
    assert.equal(t.owner_id, alice.id);
    assert.equal(t.name, 'Talk');
    assert.equal(t.rate_limit_per_user, 0);
    assert.equal(t.message_count, 0);
    assert.equal(t.member_count, 1);
    assert.equal(t.total_message_sent, 0);
    assert.equal(t.thread_metadata.archived, false);
    assert.equal(t.thread_metadata.auto_archive_duration, 60);
    assert.equal(t.thread_metadata.locked, false);
    assert.equal('invitable' in t.thread_metadata, false);
    assert.match(t.thread_metadata.archive_timestamp, ISO_MS);
    assert.match(t.thread_metadata.create_timestamp, ISO_MS);
    assert.equal(t.member.user_id, alice.id);
    assert.equal(t.member.id, t.id);

    const created = events.one('THREAD_CREATE');
    assert.deepEqual(created.audience, { kind: 'channel', guildId: guild.id, channelId });
    assert.equal(created.payload.newly_created, true);
    assert.equal(created.payload.id, t.id);
    const update = events.one('MESSAGE_UPDATE');
    assert.equal(update.payload.id, starter.id);
    assert.equal((update.payload.thread as any).id, t.id);

    const message = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/${starter.id}`));
    assert.equal(message.thread.id, t.id);
    assert.equal(message.flags & 32, 32);
    const fetched = await ok(as(server, bob, 'GET', `/channels/${t.id}`));
    assert.equal(fetched.type, 11);
    assert.equal(fetched.thread_metadata.auto_archive_duration, 60);

    const again = await as(server, bob, 'POST', `/channels/${channelId}/messages/${starter.id}/threads`, { name: 'x' });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'THREAD_ALREADY_CREATED_FOR_MESSAGE');
  });

  it('refuses an unknown message, a bad auto_archive_duration, a thread as parent and an unknown thread', async () => {
    const unknown = await as(server, alice, 'POST', `/channels/${channelId}/messages/123456789012345678/threads`, {
      name: 'x',
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_MESSAGE');
    const bad = await as(server, alice, 'POST', `/channels/${channelId}/threads`, {
      name: 'x',
      auto_archive_duration: 30,
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
    const thread = await newThread(alice, { name: 'parent?' });
    const nested = await as(server, alice, 'POST', `/channels/${thread.id}/threads`, { name: 'nested' });
    assert.equal(nested.status, 400);
    assert.equal(nested.body.code, 'CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
    const invite = await as(server, alice, 'POST', `/channels/${thread.id}/invites`, {});
    assert.equal(invite.status, 400);
    assert.equal(invite.body.code, 'CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
    const missing = await as(server, alice, 'GET', '/channels/123456789012345678');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_CHANNEL');
    const notThread = await as(server, alice, 'GET', `/channels/${channelId}/thread-members`);
    assert.equal(notThread.status, 404);
    assert.equal(notThread.body.code, 'UNKNOWN_CHANNEL');
    // Threads are not guild channels.
    const list = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/channels`));
    assert.equal(
      list.some((c: any) => c.id === thread.id),
      false,
    );
  });

  it('creates standalone public (default) and private threads; invitable only on private', async () => {
    events.clear();
    const pub = await newThread(alice, { name: 'Open' });
    assert.equal(pub.type, 11);
    assert.equal(pub.thread_metadata.auto_archive_duration, 1440);
    // Discord's notice in the parent: a type 18 message named after the thread, referencing it.
    const notice = events.one('MESSAGE_CREATE');
    assert.equal(notice.payload.channel_id, channelId);
    assert.equal(notice.payload.type, 18);
    assert.equal(notice.payload.content, 'Open');
    assert.equal((notice.payload.author as any).id, alice.id);
    assert.deepEqual(notice.payload.message_reference, { channel_id: pub.id, guild_id: guild.id });
    const [latest] = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages?limit=1`));
    assert.equal(latest.id, notice.payload.id);
    assert.equal(latest.type, 18);
    assert.deepEqual(latest.message_reference, { channel_id: pub.id, guild_id: guild.id });
    assert.equal('referenced_message' in latest, false);
    events.clear();
    const priv = await newThread(alice, { name: 'Secret', type: 12, invitable: false, rate_limit_per_user: 5 });
    assert.equal(events.of('MESSAGE_CREATE').length, 0);
    assert.equal(priv.type, 12);
    assert.equal(priv.thread_metadata.invitable, false);
    assert.equal(priv.rate_limit_per_user, 5);
    const patch = await as(server, alice, 'PATCH', `/channels/${pub.id}`, { invitable: false });
    assert.equal(patch.status, 400);
    assert.equal(patch.body.code, 'CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
  });

  it('needs CREATE_PUBLIC_THREADS / CREATE_PRIVATE_THREADS in the parent (403 MISSING_PERMISSIONS)', async () => {
    const channel = await freshChannel();
    await denyFor(channel, bob, CREATE_PUBLIC_THREADS | CREATE_PRIVATE_THREADS);
    const starter = await ok(post(bob, channel, 'hi'));
    for (const [path, body] of [
      [`/channels/${channel}/threads`, { name: 'no' }],
      [`/channels/${channel}/threads`, { name: 'no', type: 12 }],
      [`/channels/${channel}/messages/${starter.id}/threads`, { name: 'no' }],
    ] as const) {
      const res = await as(server, bob, 'POST', path, body);
      assert.equal(res.status, 403, path);
      assert.equal(res.body.code, 'MISSING_PERMISSIONS');
    }
  });
});

describe('messages in threads', () => {
  it('posting joins the author, counts messages, and pins/reactions/typing work in the thread', async () => {
    const thread = await newThread(alice, { name: 'Chatter' });
    events.clear();
    const sent = await post(bob, thread.id, 'first!');
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.channel_id, thread.id);
    const created = events.one('MESSAGE_CREATE');
    assert.deepEqual(created.audience, { kind: 'channel', guildId: guild.id, channelId });
    assert.equal(created.payload.channel_id, thread.id);
    const membersUpdate = events.one('THREAD_MEMBERS_UPDATE');
    assert.equal(membersUpdate.payload.id, thread.id);
    assert.equal(membersUpdate.payload.member_count, 2);
    assert.equal((membersUpdate.payload.added_members as any[])[0].user_id, bob.id);
    assert.equal((membersUpdate.payload.added_members as any[])[0].member.user.id, bob.id);
    const own = events.one('THREAD_MEMBER_UPDATE');
    assert.deepEqual(own.audience, { kind: 'users', userIds: [bob.id] });
    assert.equal(own.payload.guild_id, guild.id);

    const fetched = await ok(as(server, bob, 'GET', `/channels/${thread.id}`));
    assert.equal(fetched.message_count, 1);
    assert.equal(fetched.total_message_sent, 1);
    assert.equal(fetched.member_count, 2);
    assert.equal(fetched.last_message_id, sent.body.id);
    assert.equal(fetched.member.user_id, bob.id);

    const history = await ok(as(server, alice, 'GET', `/channels/${thread.id}/messages`));
    assert.deepEqual(
      history.map((m: any) => m.id),
      [sent.body.id],
    );
    await ok(
      as(server, alice, 'PUT', `/channels/${thread.id}/messages/${sent.body.id}/reactions/%F0%9F%91%8D/@me`),
      204,
    );
    await ok(as(server, owner, 'PUT', `/channels/${thread.id}/pins/${sent.body.id}`), 204);
    const pins = await ok(as(server, alice, 'GET', `/channels/${thread.id}/pins`));
    assert.equal(pins[0].id, sent.body.id);
    await ok(as(server, alice, 'POST', `/channels/${thread.id}/typing`), 204);
  });

  it('sending in a thread needs SEND_MESSAGES_IN_THREADS, not SEND_MESSAGES', async () => {
    const channel = await freshChannel();
    const thread = await newThread(alice, { name: 'Gate' }, channel);
    await denyFor(channel, bob, SEND_MESSAGES_IN_THREADS);
    const denied = await post(bob, thread.id, 'nope');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    await ok(post(bob, channel, 'the parent still works'));
    await denyFor(channel, bob, P.SEND_MESSAGES);
    await ok(post(bob, thread.id, 'threads without SEND_MESSAGES'));
  });
});

describe('slowmode in threads', () => {
  it('rate_limit_per_user applies per member; MANAGE_THREADS holders are exempt', async () => {
    const channel = await freshChannel();
    const thread = await newThread(alice, { name: 'Slow', rate_limit_per_user: 30 }, channel);
    await ok(post(bob, thread.id, 'one'));
    const second = await post(bob, thread.id, 'two');
    assert.equal(second.status, 400);
    assert.equal(second.body.code, 'SLOWMODE_RATE_LIMITED');
    assert.ok(second.body.retry_after > 0);
    const mod = await registerUser(server);
    await join(server, owner, mod, guild);
    await ok(
      as(server, owner, 'PUT', `/channels/${channel}/permissions/${mod.id}`, { type: 1, allow: bits(MANAGE_THREADS) }),
      204,
    );
    await ok(post(mod, thread.id, 'one'));
    await ok(post(mod, thread.id, 'two'));
  });
});

describe('private threads', () => {
  it('are seen only by members and MANAGE_THREADS holders; adding a member sends them THREAD_CREATE', async () => {
    events.clear();
    const thread = await newThread(alice, { name: 'Hush', type: 12 });
    const created = events.one('THREAD_CREATE');
    assert.equal(created.audience.kind, 'users');
    assert.deepEqual([...(created.audience as any).userIds].sort(), [alice.id, owner.id].sort());

    for (const [method, path, body] of [
      ['GET', `/channels/${thread.id}`, undefined],
      ['POST', `/channels/${thread.id}/messages`, { content: 'let me in' }],
      ['GET', `/channels/${thread.id}/messages`, undefined],
      ['PUT', `/channels/${thread.id}/thread-members/@me`, undefined],
    ] as const) {
      const res = await as(server, bob, method, path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.code, 'MISSING_ACCESS');
    }
    await ok(as(server, owner, 'GET', `/channels/${thread.id}`));

    events.clear();
    await ok(as(server, alice, 'PUT', `/channels/${thread.id}/thread-members/${bob.id}`), 204);
    const toBob = events.one('THREAD_CREATE');
    assert.deepEqual(toBob.audience, { kind: 'users', userIds: [bob.id] });
    assert.equal(toBob.payload.newly_created, undefined);
    await ok(as(server, bob, 'GET', `/channels/${thread.id}`));
    const message = await ok(post(bob, thread.id, 'thanks'));
    assert.equal(message.channel_id, thread.id);

    // A mention adds whoever can see the parent.
    await ok(post(alice, thread.id, `<@${carol.id}> join us`));
    await ok(as(server, carol, 'GET', `/channels/${thread.id}/thread-members/${carol.id}`));
  });

  it('a non-invitable private thread: members cannot add others, moderators and the owner can', async () => {
    const thread = await newThread(alice, { name: 'Closed', type: 12, invitable: false });
    await ok(as(server, alice, 'PUT', `/channels/${thread.id}/thread-members/${bob.id}`), 204);
    const denied = await as(server, bob, 'PUT', `/channels/${thread.id}/thread-members/${carol.id}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    await ok(post(bob, thread.id, `<@${carol.id}> a mention does not add either`));
    const carolSees = await as(server, carol, 'GET', `/channels/${thread.id}`);
    assert.equal(carolSees.status, 403);
    await ok(as(server, owner, 'PUT', `/channels/${thread.id}/thread-members/${carol.id}`), 204);
    await ok(as(server, carol, 'GET', `/channels/${thread.id}`));
  });

  it('the gateway delivers a private thread only to its members, and public threads to the parent viewers', async () => {
    const pub = await newThread(alice, { name: 'Everyone' });
    const seen = await carolGw.next((f) => f.t === 'THREAD_CREATE' && f.d.id === pub.id);
    assert.equal(seen.d.newly_created, true);
    assert.equal(seen.d.parent_id, channelId);
    const priv = await newThread(alice, { name: 'Not carol', type: 12 });
    await ok(post(alice, priv.id, 'secret words'));
    await ok(post(alice, pub.id, 'public words'));
    const next = await carolGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.channel_id === pub.id);
    assert.equal(next.d.content, 'public words');
    assert.equal(
      carolGw.raw.some((text) => text.includes('secret words') || text.includes('Not carol')),
      false,
    );
  });
});

describe('thread members', () => {
  it('join, list (with_member), get, leave, remove; denials and unknowns', async () => {
    const thread = await newThread(alice, { name: 'Members' });
    events.clear();
    await ok(as(server, carol, 'PUT', `/channels/${thread.id}/thread-members/@me`), 204);
    const own = events.one('THREAD_MEMBER_UPDATE');
    assert.deepEqual(own.audience, { kind: 'users', userIds: [carol.id] });
    assert.equal(own.payload.user_id, carol.id);
    assert.equal(own.payload.id, thread.id);
    assert.match(own.payload.join_timestamp as string, ISO_MS);
    assert.equal(own.payload.flags, 0);

    const list = await ok(as(server, bob, 'GET', `/channels/${thread.id}/thread-members`));
    assert.deepEqual(list.map((m: any) => m.user_id).sort(), [alice.id, carol.id].sort());
    assert.equal('member' in list[0], false);
    const withMember = await ok(as(server, bob, 'GET', `/channels/${thread.id}/thread-members?with_member=true`));
    assert.ok(withMember.every((m: any) => m.member.user.id === m.user_id));
    const one = await ok(as(server, bob, 'GET', `/channels/${thread.id}/thread-members/${carol.id}?with_member=true`));
    assert.equal(one.member.user.id, carol.id);
    const none = await as(server, bob, 'GET', `/channels/${thread.id}/thread-members/${bob.id}`);
    assert.equal(none.status, 404);
    assert.equal(none.body.code, 'UNKNOWN_MEMBER');

    const stranger = await registerUser(server);
    const notInGuild = await as(server, alice, 'PUT', `/channels/${thread.id}/thread-members/${stranger.id}`);
    assert.equal(notInGuild.status, 404);
    assert.equal(notInGuild.body.code, 'UNKNOWN_MEMBER');

    const removeOther = await as(server, bob, 'DELETE', `/channels/${thread.id}/thread-members/${carol.id}`);
    assert.equal(removeOther.status, 403);
    assert.equal(removeOther.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    await ok(as(server, carol, 'DELETE', `/channels/${thread.id}/thread-members/@me`), 204);
    const left = events.one('THREAD_MEMBERS_UPDATE');
    assert.deepEqual(left.payload.removed_member_ids, [carol.id]);
    assert.equal(left.payload.member_count, 1);
    await ok(as(server, owner, 'DELETE', `/channels/${thread.id}/thread-members/${alice.id}`), 204);
    const gone = await as(server, owner, 'DELETE', `/channels/${thread.id}/thread-members/${alice.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'UNKNOWN_MEMBER');
  });
});

describe('archive and lock', () => {
  it('owner archives; archived threads refuse edits and joins; a message unarchives an unlocked thread', async () => {
    const thread = await newThread(alice, { name: 'Arch' });
    events.clear();
    const archived = await ok(as(server, alice, 'PATCH', `/channels/${thread.id}`, { archived: true }));
    assert.equal(archived.thread_metadata.archived, true);
    const update = events.one('THREAD_UPDATE');
    assert.equal((update.payload.thread_metadata as any).archived, true);
    assert.deepEqual(update.audience, { kind: 'channel', guildId: guild.id, channelId });

    const rename = await as(server, alice, 'PATCH', `/channels/${thread.id}`, { name: 'renamed' });
    assert.equal(rename.status, 400);
    assert.equal(rename.body.code, 'THREAD_ARCHIVED');
    const join = await as(server, carol, 'PUT', `/channels/${thread.id}/thread-members/@me`);
    assert.equal(join.status, 400);
    assert.equal(join.body.code, 'THREAD_ARCHIVED');
    const notOwner = await as(server, bob, 'PATCH', `/channels/${thread.id}`, { name: 'mine now' });
    assert.equal(notOwner.status, 403);
    assert.equal(notOwner.body.code, 'MISSING_PERMISSIONS');

    events.clear();
    await ok(post(bob, thread.id, 'wake up'));
    assert.equal((events.one('THREAD_UPDATE').payload.thread_metadata as any).archived, false);
    const after = await ok(as(server, bob, 'GET', `/channels/${thread.id}`));
    assert.equal(after.thread_metadata.archived, false);

    const renamed = await ok(
      as(server, alice, 'PATCH', `/channels/${thread.id}`, { name: 'Renamed', auto_archive_duration: 4320 }),
    );
    assert.equal(renamed.name, 'Renamed');
    assert.equal(renamed.thread_metadata.auto_archive_duration, 4320);
    const bad = await as(server, alice, 'PATCH', `/channels/${thread.id}`, { auto_archive_duration: 100 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
  });

  it('locking needs MANAGE_THREADS; a locked archived thread stays shut for everyone else', async () => {
    const thread = await newThread(alice, { name: 'Lockable' });
    const lockSelf = await as(server, alice, 'PATCH', `/channels/${thread.id}`, { locked: true });
    assert.equal(lockSelf.status, 403);
    assert.equal(lockSelf.body.code, 'MISSING_PERMISSIONS');
    const slow = await as(server, alice, 'PATCH', `/channels/${thread.id}`, { rate_limit_per_user: 10 });
    assert.equal(slow.status, 403);
    const locked = await ok(as(server, owner, 'PATCH', `/channels/${thread.id}`, { archived: true, locked: true }));
    assert.equal(locked.thread_metadata.locked, true);
    assert.equal(locked.thread_metadata.archived, true);

    const send = await post(bob, thread.id, 'hello?');
    assert.equal(send.status, 403);
    assert.equal(send.body.code, 'THREAD_LOCKED');
    const reopen = await as(server, alice, 'PATCH', `/channels/${thread.id}`, { archived: false });
    assert.equal(reopen.status, 403);
    assert.equal(reopen.body.code, 'THREAD_LOCKED');
    await ok(post(owner, thread.id, 'moderator speaking'));
    const now = await ok(as(server, bob, 'GET', `/channels/${thread.id}`));
    assert.equal(now.thread_metadata.archived, false);
    assert.equal(now.thread_metadata.locked, true);
    const stillLocked = await post(bob, thread.id, 'and now?');
    assert.equal(stillLocked.status, 403);
    assert.equal(stillLocked.body.code, 'THREAD_LOCKED');
  });

  it('auto-archives after auto_archive_duration of inactivity on the clock', async () => {
    const thread = await newThread(alice, { name: 'Sleepy', auto_archive_duration: 60 });
    const awake = await newThread(alice, { name: 'Awake', auto_archive_duration: 1440 });
    events.clear();
    await setClock(server, 61 * 60_000);
    try {
      // The sweeper writes, then publishes; on Redis the dispatch arrives a moment after the write.
      const deadline = Date.now() + 8000;
      let archived = false;
      const announced = () => events.of('THREAD_UPDATE').some((d) => d.payload.id === thread.id);
      while (!(archived && announced()) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        archived = (await ok(as(server, alice, 'GET', `/channels/${thread.id}`))).thread_metadata.archived;
      }
      assert.equal(archived, true);
      const update = events.one('THREAD_UPDATE', (d) => d.payload.id === thread.id);
      assert.equal((update.payload.thread_metadata as any).archived, true);
      const other = await ok(as(server, alice, 'GET', `/channels/${awake.id}`));
      assert.equal(other.thread_metadata.archived, false);
    } finally {
      await setClock(server, 0);
    }
  });
});

describe('listing threads', () => {
  it('active threads of a guild: public ones and private ones the caller sees, with their memberships', async () => {
    const channel = await freshChannel();
    const pub = await newThread(alice, { name: 'A' }, channel);
    const joined = await newThread(bob, { name: 'B', type: 12 }, channel);
    const hidden = await newThread(alice, { name: 'C', type: 12 }, channel);
    const archived = await newThread(alice, { name: 'D' }, channel);
    await ok(as(server, alice, 'PATCH', `/channels/${archived.id}`, { archived: true }));
    const res = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/threads/active`));
    const ids = res.threads.map((t: any) => t.id);
    assert.ok(ids.includes(pub.id));
    assert.ok(ids.includes(joined.id));
    assert.equal(ids.includes(hidden.id), false);
    assert.equal(ids.includes(archived.id), false);
    assert.ok(res.members.every((m: any) => m.user_id === bob.id));
    assert.ok(res.members.some((m: any) => m.id === joined.id));
    assert.equal('has_more' in res, false);
    const ownerView = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/threads/active`));
    assert.ok(ownerView.threads.some((t: any) => t.id === hidden.id));
    const outsider = await registerUser(server);
    const refused = await as(server, outsider, 'GET', `/guilds/${guild.id}/threads/active`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'MISSING_ACCESS');
  });

  it('archived public, archived private (MANAGE_THREADS) and my archived private threads, with before/limit/has_more', async () => {
    const channel = await freshChannel();
    const first = await newThread(alice, { name: 'one' }, channel);
    const second = await newThread(alice, { name: 'two' }, channel);
    const secret = await newThread(bob, { name: 'three', type: 12 }, channel);
    for (const t of [first, second]) await ok(as(server, alice, 'PATCH', `/channels/${t.id}`, { archived: true }));
    await ok(as(server, bob, 'PATCH', `/channels/${secret.id}`, { archived: true }));

    const page = await ok(as(server, bob, 'GET', `/channels/${channel}/threads/archived/public?limit=1`));
    assert.deepEqual(
      page.threads.map((t: any) => t.id),
      [second.id],
    );
    assert.equal(page.has_more, true);
    const before = page.threads[0].thread_metadata.archive_timestamp;
    const rest = await ok(
      as(server, bob, 'GET', `/channels/${channel}/threads/archived/public?before=${encodeURIComponent(before)}`),
    );
    assert.deepEqual(
      rest.threads.map((t: any) => t.id),
      [first.id],
    );
    assert.equal(rest.has_more, false);

    const privDenied = await as(server, bob, 'GET', `/channels/${channel}/threads/archived/private`);
    assert.equal(privDenied.status, 403);
    assert.equal(privDenied.body.code, 'MISSING_PERMISSIONS');
    const priv = await ok(as(server, owner, 'GET', `/channels/${channel}/threads/archived/private`));
    assert.deepEqual(
      priv.threads.map((t: any) => t.id),
      [secret.id],
    );
    const mine = await ok(as(server, bob, 'GET', `/channels/${channel}/users/@me/threads/archived/private`));
    assert.deepEqual(
      mine.threads.map((t: any) => t.id),
      [secret.id],
    );
    assert.equal(mine.members[0].user_id, bob.id);
    const notMine = await ok(as(server, alice, 'GET', `/channels/${channel}/users/@me/threads/archived/private`));
    assert.deepEqual(notMine.threads, []);
    assert.equal(notMine.has_more, false);
  });

  it('GUILD_CREATE carries the active threads the user can see', async () => {
    const visible = await newThread(alice, { name: 'In guild create' });
    const hidden = await newThread(alice, { name: 'Hidden from bob', type: 12 });
    const { client, ready } = await readyClient(server, bob.token);
    try {
      const inline = (ready.d.guilds as any[]).find((g) => g.id === guild.id && !g.unavailable);
      const payload = inline ?? (await client.next((f) => f.t === 'GUILD_CREATE' && f.d.id === guild.id)).d;
      const ids = payload.threads.map((t: any) => t.id);
      assert.ok(ids.includes(visible.id));
      assert.equal(ids.includes(hidden.id), false);
      const shown = payload.threads.find((t: any) => t.id === visible.id);
      assert.equal(shown.type, 11);
      assert.equal(shown.parent_id, channelId);
    } finally {
      await client.close();
    }
  });
});

describe('deleting threads', () => {
  it('needs MANAGE_THREADS; THREAD_DELETE; the starter message loses its thread; a parent takes its threads along', async () => {
    const starter = await ok(post(alice, channelId, 'start'));
    const thread = await ok(
      as(server, alice, 'POST', `/channels/${channelId}/messages/${starter.id}/threads`, { name: 'Doomed' }),
    );
    const denied = await as(server, alice, 'DELETE', `/channels/${thread.id}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    await ok(as(server, owner, 'DELETE', `/channels/${thread.id}`), 204);
    const deleted = events.one('THREAD_DELETE');
    assert.deepEqual(deleted.payload, { id: thread.id, guild_id: guild.id, parent_id: channelId, type: 11 });
    const gone = await as(server, alice, 'GET', `/channels/${thread.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'UNKNOWN_CHANNEL');
    const message = await ok(as(server, alice, 'GET', `/channels/${channelId}/messages/${starter.id}`));
    assert.equal(message.thread, undefined);
    assert.equal(message.flags & 32, 0);

    const channel = await freshChannel();
    const child = await newThread(alice, { name: 'orphan?' }, channel);
    await ok(as(server, owner, 'DELETE', `/channels/${channel}`), 204);
    const orphan = await as(server, alice, 'GET', `/channels/${child.id}`);
    assert.equal(orphan.status, 404);
  });
});

describe('permission bits', () => {
  it('MANAGE_THREADS and the thread bits are part of the permission model', async () => {
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, {
        name: 'threads',
        permissions: bits(MANAGE_THREADS, CREATE_PUBLIC_THREADS, CREATE_PRIVATE_THREADS, SEND_MESSAGES_IN_THREADS),
      }),
    );
    assert.equal(
      role.permissions,
      bits(MANAGE_THREADS, CREATE_PUBLIC_THREADS, CREATE_PRIVATE_THREADS, SEND_MESSAGES_IN_THREADS),
    );
  });
});

describe('parent permissions', () => {
  it('a thread is hidden with its parent; regaining the parent sends THREAD_LIST_SYNC with its active threads', async () => {
    const channel = await freshChannel();
    const thread = await newThread(alice, { name: 'Behind the door' }, channel);
    const priv = await newThread(alice, { name: 'Private behind the door', type: 12 }, channel);
    await denyFor(channel, bob, P.VIEW_CHANNEL);
    const hidden = await as(server, bob, 'GET', `/channels/${thread.id}`);
    assert.equal(hidden.status, 403);
    assert.equal(hidden.body.code, 'MISSING_ACCESS');
    const send = await post(bob, thread.id, 'knock knock');
    assert.equal(send.status, 403);
    assert.equal(send.body.code, 'MISSING_ACCESS');
    const active = await ok(as(server, bob, 'GET', `/guilds/${guild.id}/threads/active`));
    assert.equal(
      active.threads.some((t: any) => t.id === thread.id),
      false,
    );

    events.clear();
    await ok(as(server, owner, 'DELETE', `/channels/${channel}/permissions/${bob.id}`), 204);
    const sync = events.one('THREAD_LIST_SYNC', (d) => d.audience.kind === 'users' && d.audience.userIds[0] === bob.id);
    assert.equal(sync.payload.guild_id, guild.id);
    assert.deepEqual(sync.payload.channel_ids, [channel]);
    assert.deepEqual(
      (sync.payload.threads as any[]).map((t) => t.id),
      [thread.id],
    );
    assert.deepEqual(sync.payload.members, []);
    const toAlice = events.one(
      'THREAD_LIST_SYNC',
      (d) => d.audience.kind === 'users' && d.audience.userIds[0] === alice.id,
    );
    assert.deepEqual((toAlice.payload.threads as any[]).map((t) => t.id).sort(), [thread.id, priv.id].sort());
    assert.equal((toAlice.payload.members as any[]).length, 2);
    await ok(as(server, bob, 'GET', `/channels/${thread.id}`));
  });
});

describe('webhooks into threads', () => {
  it('executes into a thread of its channel with ?thread_id=, and refuses a thread of another channel', async () => {
    const hook = await ok(as(server, owner, 'POST', `/channels/${channelId}/webhooks`, { name: 'Hook' }));
    const thread = await newThread(alice, { name: 'Hooked' });
    await ok(as(server, alice, 'PATCH', `/channels/${thread.id}`, { archived: true }));
    const sent = await request(
      server,
      'POST',
      `/v1/webhooks/${hook.id}/${hook.token}?wait=true&thread_id=${thread.id}`,
      {
        body: { content: 'from the hook' },
      },
    );
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.channel_id, thread.id);
    assert.equal(sent.body.webhook_id, hook.id);
    const after = await ok(as(server, alice, 'GET', `/channels/${thread.id}`));
    assert.equal(after.thread_metadata.archived, false);
    assert.equal(after.message_count, 1);

    const elsewhere = await newThread(alice, { name: 'Elsewhere' }, await freshChannel());
    for (const threadId of [elsewhere.id, channelId, 'nope']) {
      const res = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}?thread_id=${threadId}`, {
        body: { content: 'x' },
      });
      assert.equal(res.status, 404, threadId);
      assert.equal(res.body.code, 'UNKNOWN_CHANNEL');
    }
  });
});

describe('leaving the guild', () => {
  it('a member who leaves the guild leaves its threads', async () => {
    const { owner: host, guild: place, members } = await guildWithMembers(server, 1);
    const [guest] = members as [TestUser];
    const thread = await newThread(host, { name: 'Goodbye' }, place.system_channel_id);
    await ok(as(server, guest, 'PUT', `/channels/${thread.id}/thread-members/@me`), 204);
    assert.equal((await ok(as(server, host, 'GET', `/channels/${thread.id}`))).member_count, 2);
    await ok(as(server, guest, 'DELETE', `/users/@me/guilds/${place.id}`), 204);
    const after = await ok(as(server, host, 'GET', `/channels/${thread.id}`));
    assert.equal(after.member_count, 1);
    const list = await ok(as(server, host, 'GET', `/channels/${thread.id}/thread-members`));
    assert.deepEqual(
      list.map((m: any) => m.user_id),
      [host.id],
    );
  });
});

describe('bad input', () => {
  it('answers 4xx with a clear code, never 500', async () => {
    const thread = await newThread(alice, { name: 'Probe' });
    const cases: [string, string, unknown, number, string][] = [
      ['GET', `/channels/${channelId}/threads/archived/public?before=yesterday`, undefined, 400, 'INVALID_FORM_BODY'],
      ['GET', `/channels/${channelId}/threads/archived/public?limit=0`, undefined, 400, 'INVALID_FORM_BODY'],
      ['GET', `/channels/${channelId}/threads/archived/private?limit=101`, undefined, 400, 'INVALID_FORM_BODY'],
      [
        'GET',
        `/channels/${channelId}/users/@me/threads/archived/private?before=abc`,
        undefined,
        400,
        'INVALID_FORM_BODY',
      ],
      ['GET', `/channels/${thread.id}/thread-members?with_member=maybe`, undefined, 400, 'INVALID_FORM_BODY'],
      ['GET', `/channels/${thread.id}/thread-members?after=x`, undefined, 400, 'INVALID_FORM_BODY'],
      ['GET', `/channels/${thread.id}/thread-members/not-an-id`, undefined, 404, 'UNKNOWN_MEMBER'],
      ['PUT', `/channels/${thread.id}/thread-members/not-an-id`, undefined, 404, 'UNKNOWN_USER'],
      ['PUT', '/channels/not-an-id/thread-members/@me', undefined, 404, 'UNKNOWN_CHANNEL'],
      ['GET', '/guilds/not-an-id/threads/active', undefined, 404, 'UNKNOWN_GUILD'],
      ['POST', `/channels/${channelId}/threads`, { name: '' }, 400, 'INVALID_FORM_BODY'],
      ['POST', `/channels/${channelId}/threads`, { name: 42 }, 400, 'INVALID_FORM_BODY'],
      ['POST', `/channels/${channelId}/threads`, { name: 'x', type: 0 }, 400, 'INVALID_FORM_BODY'],
      ['POST', `/channels/${channelId}/threads`, { name: 'x', invitable: 'yes' }, 400, 'INVALID_FORM_BODY'],
      ['POST', `/channels/${channelId}/threads`, [1, 2], 400, 'INVALID_FORM_BODY'],
      ['POST', `/channels/${channelId}/messages/not-an-id/threads`, { name: 'x' }, 404, 'UNKNOWN_MESSAGE'],
      ['PATCH', `/channels/${thread.id}`, { archived: 'yes' }, 400, 'INVALID_FORM_BODY'],
      ['PATCH', `/channels/${thread.id}`, { locked: 1 }, 400, 'INVALID_FORM_BODY'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await as(server, alice, method, path, body);
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.code, code, `${method} ${path}`);
    }
  });
});

describe('private thread audience', () => {
  it('members, the guild owner, and MANAGE_THREADS holders by role or overwrite who see the parent', async () => {
    const { owner: host, guild: place, members } = await guildWithMembers(server, 4);
    const [byRole, byOverwrite, plain, member] = members as [TestUser, TestUser, TestUser, TestUser];
    const parent = place.system_channel_id as string;
    const role = await ok(
      as(server, host, 'POST', `/guilds/${place.id}/roles`, { name: 'mods', permissions: bits(MANAGE_THREADS) }),
    );
    await ok(as(server, host, 'PUT', `/guilds/${place.id}/members/${byRole.id}/roles/${role.id}`), 204);
    const helpers = await ok(as(server, host, 'POST', `/guilds/${place.id}/roles`, { name: 'helpers' }));
    await ok(as(server, host, 'PUT', `/guilds/${place.id}/members/${byOverwrite.id}/roles/${helpers.id}`), 204);
    await ok(
      as(server, host, 'PUT', `/channels/${parent}/permissions/${helpers.id}`, {
        type: 0,
        allow: bits(MANAGE_THREADS),
      }),
      204,
    );
    events.clear();
    const thread = await newThread(member, { name: 'Audience', type: 12 }, parent);
    const created = events.one('THREAD_CREATE', (d) => d.payload.id === thread.id);
    assert.deepEqual(
      [...(created.audience as any).userIds].sort(),
      [host.id, byRole.id, byOverwrite.id, member.id].sort(),
    );
    assert.equal((created.audience as any).userIds.includes(plain.id), false);

    await ok(
      as(server, host, 'PUT', `/channels/${parent}/permissions/${byRole.id}`, { type: 1, deny: bits(P.VIEW_CHANNEL) }),
      204,
    );
    events.clear();
    await ok(post(member, thread.id, 'who hears this?'));
    const message = events.one('MESSAGE_CREATE', (d) => d.payload.channel_id === thread.id);
    assert.deepEqual([...(message.audience as any).userIds].sort(), [host.id, byOverwrite.id, member.id].sort());
  });
});

describe('role changes', () => {
  it('a member whose roles change gets a guild-wide THREAD_LIST_SYNC of the threads they now see', async () => {
    const { owner: host, guild: place, members } = await guildWithMembers(server, 1);
    const [member] = members as [TestUser];
    const secret = (
      await ok(
        as(server, host, 'POST', `/guilds/${place.id}/channels`, {
          name: 'insiders',
          permission_overwrites: [{ id: place.id, type: 0, deny: bits(P.VIEW_CHANNEL) }],
        }),
      )
    ).id as string;
    const role = await ok(as(server, host, 'POST', `/guilds/${place.id}/roles`, { name: 'insider' }));
    await ok(
      as(server, host, 'PUT', `/channels/${secret}/permissions/${role.id}`, { type: 0, allow: bits(P.VIEW_CHANNEL) }),
      204,
    );
    const open = await newThread(host, { name: 'Open to all' }, place.system_channel_id);
    const inner = await newThread(host, { name: 'Inner circle' }, secret);
    const hidden = await as(server, member, 'GET', `/channels/${inner.id}`);
    assert.equal(hidden.status, 403);

    events.clear();
    await ok(as(server, host, 'PUT', `/guilds/${place.id}/members/${member.id}/roles/${role.id}`), 204);
    const sync = events.one('THREAD_LIST_SYNC');
    assert.deepEqual(sync.audience, { kind: 'users', userIds: [member.id] });
    assert.equal(sync.payload.guild_id, place.id);
    assert.equal('channel_ids' in sync.payload, false);
    assert.deepEqual((sync.payload.threads as any[]).map((t) => t.id).sort(), [open.id, inner.id].sort());
    await ok(as(server, member, 'GET', `/channels/${inner.id}`));

    events.clear();
    await ok(as(server, host, 'PATCH', `/guilds/${place.id}/members/${member.id}`, { roles: [] }));
    const after = events.one('THREAD_LIST_SYNC');
    assert.deepEqual(
      (after.payload.threads as any[]).map((t) => t.id),
      [open.id],
    );
    events.clear();
    await ok(as(server, host, 'PATCH', `/guilds/${place.id}/members/${member.id}`, { nick: 'renamed' }));
    assert.equal(events.of('THREAD_LIST_SYNC').length, 0);
  });
});
