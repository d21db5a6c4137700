import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApplication } from '../support/applications.ts';
import { as, DispatchRecorder, join, befriend as makeFriends, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  alice = await registerUser(server);
  bob = await registerUser(server);
  carol = await registerUser(server);
  // A 1:1 DM needs a friendship or a shared guild, a group DM friends (issue 16).
  await befriend(alice, bob);
  await befriend(alice, carol);
});

after(async () => {
  events?.close();
  await server?.close();
});

/** `a` asks, `b` accepts: friends. */
const befriend = (a: TestUser, b: TestUser) => makeFriends(server, a, b);

describe('direct messages', () => {
  it('opens a 1:1 DM idempotently, announcing it to both sides once', async () => {
    events.clear();
    const res = await as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id });
    assert.equal(res.status, 200);
    const dm = res.body;
    assert.equal(dm.type, 1);
    assert.deepEqual(
      dm.recipients.map((u: any) => u.id),
      [bob.id],
    );
    assert.equal(dm.last_message_id, null);
    assert.equal(events.of('CHANNEL_CREATE').length, 2);
    const forBob = events.one('CHANNEL_CREATE', (d) => (d.audience as any).userIds[0] === bob.id);
    assert.ok('recipients' in forBob.payload);
    assert.deepEqual(
      forBob.payload.recipients.map((u) => u.id),
      [alice.id],
    );
    events.clear();
    const again = await ok(as(server, bob, 'POST', '/users/@me/channels', { recipient_id: alice.id }));
    assert.equal(again.id, dm.id);
    assert.equal(events.of('CHANNEL_CREATE').length, 0);
    const list = await ok(as(server, alice, 'GET', '/users/@me/channels'));
    assert.ok(list.some((c: any) => c.id === dm.id));
  });

  it('refuses DMing yourself and unknown users', async () => {
    const self = await as(server, alice, 'POST', '/users/@me/channels', { recipient_id: alice.id });
    assert.equal(self.status, 400);
    assert.equal(self.body.code, 'INVALID_FORM_BODY');
    assert.equal(self.body.errors[0].code, 'CANNOT_DM_YOURSELF');
    const unknown = await as(server, alice, 'POST', '/users/@me/channels', { recipient_id: '123456789012' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_USER');
    const missing = await as(server, alice, 'POST', '/users/@me/channels', {});
    assert.equal(missing.status, 400);
  });

  it('delivers DM messages to the recipients only, without guild_id or member', async () => {
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    events.clear();
    const m = await ok(as(server, alice, 'POST', `/channels/${dm.id}/messages`, { content: 'psst' }));
    const created = events.one('MESSAGE_CREATE');
    assert.deepEqual(new Set((created.audience as any).userIds), new Set([alice.id, bob.id]));
    assert.equal(created.payload.guild_id, undefined);
    assert.equal(created.payload.member, undefined);
    assert.equal(created.payload.channel_id, dm.id);
    const read = await ok(as(server, bob, 'GET', `/channels/${dm.id}/messages`));
    assert.equal(read[0].id, m.id);
    const outsider = await as(server, carol, 'GET', `/channels/${dm.id}/messages`);
    assert.equal(outsider.status, 403);
    assert.equal(outsider.body.code, 'MISSING_ACCESS');
    const del = await as(server, bob, 'DELETE', `/channels/${dm.id}/messages/${m.id}`);
    assert.equal(del.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await as(server, bob, 'PUT', `/channels/${dm.id}/pins/${m.id}`)).status, 204);
    events.clear();
    assert.equal((await as(server, bob, 'POST', `/channels/${dm.id}/typing`)).status, 204);
    assert.equal(events.one('TYPING_START').payload.member, undefined);
  });

  it('creates group DMs (user-only, at most 10 people) and manages recipients', async () => {
    const group = await ok(
      as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id], name: 'trio' }),
    );
    assert.equal(group.type, 3);
    assert.equal(group.owner_id, alice.id);
    assert.equal(group.name, 'trio');
    assert.deepEqual(new Set(group.recipients.map((u: any) => u.id)), new Set([bob.id, carol.id]));
    const renamed = await ok(as(server, bob, 'PATCH', `/channels/${group.id}`, { name: 'quartet' }));
    assert.equal(renamed.name, 'quartet');
    const dave = await registerUser(server);
    await befriend(bob, dave);
    events.clear();
    assert.equal((await as(server, bob, 'PUT', `/channels/${group.id}/recipients/${dave.id}`)).status, 204);
    assert.equal((events.one('CHANNEL_RECIPIENT_ADD').payload.user as any).id, dave.id);
    assert.deepEqual(events.one('CHANNEL_CREATE').audience, { kind: 'users', userIds: [dave.id] });
    const kick = await as(server, bob, 'DELETE', `/channels/${group.id}/recipients/${dave.id}`);
    assert.equal(kick.status, 403);
    assert.equal(kick.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await as(server, alice, 'DELETE', `/channels/${group.id}/recipients/${dave.id}`)).status, 204);
    assert.equal((await as(server, dave, 'GET', `/channels/${group.id}`)).body.code, 'MISSING_ACCESS');
    events.clear();
    assert.equal((await as(server, alice, 'DELETE', `/channels/${group.id}`)).status, 204);
    assert.equal((events.one('CHANNEL_RECIPIENT_REMOVE').payload.user as any).id, alice.id);
    const after = await ok(as(server, bob, 'GET', `/channels/${group.id}`));
    assert.notEqual(after.owner_id, alice.id, 'ownership passed on');

    const crowd: string[] = [];
    for (let i = 0; i < 10; i++) crowd.push(String(BigInt(bob.id) + BigInt(i + 1000)));
    const tooMany = await as(server, alice, 'POST', '/users/@me/channels', { recipients: crowd });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.code, 'MAX_GROUP_DM_RECIPIENTS');
  });

  it('lets bots open a DM only with users they share a guild with, and never a group DM', async () => {
    const app = await createApplication(server, alice);
    const bot = { auth: `Bot ${app.botToken}` };
    const stranger = await as(server, bot, 'POST', '/users/@me/channels', { recipient_id: carol.id });
    assert.equal(stranger.status, 403);
    assert.equal(stranger.body.code, 'MISSING_ACCESS');
    const guild = await ok(as(server, alice, 'POST', '/guilds', { name: 'with bot' }));
    await ok(
      as(server, alice, 'POST', '/oauth2/authorize/consent', {
        client_id: app.id,
        scope: 'bot',
        guild_id: guild.id,
        permissions: '0',
      }),
    );
    const dm = await ok(as(server, bot, 'POST', '/users/@me/channels', { recipient_id: alice.id }));
    assert.equal(dm.type, 1);
    await ok(as(server, bot, 'POST', `/channels/${dm.id}/messages`, { content: 'beep' }));
    const group = await as(server, bot, 'POST', '/users/@me/channels', { recipients: [alice.id, carol.id] });
    assert.equal(group.body.code, 'ACCESS_DENIED');
    const list = await as(server, bot, 'GET', '/users/@me/channels');
    assert.equal(list.body.code, 'ACCESS_DENIED');
  });
});

describe('relationships', () => {
  it('sends, accepts and removes friend requests with RELATIONSHIP events', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    events.clear();
    const sent = await as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, {});
    // The established format: 200 with the caller's relationship object.
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual([sent.body.id, sent.body.type, sent.body.user.id], [b.id, 4, b.id]);
    const outgoing = await ok(as(server, a, 'GET', '/users/@me/relationships'));
    assert.deepEqual(
      outgoing.map((r: any) => [r.id, r.type]),
      [[b.id, 4]],
    );
    assert.equal(outgoing[0].user.id, b.id);
    assert.match(outgoing[0].since, /Z$/);
    assert.equal(outgoing[0].nickname, null);
    const incoming = await ok(as(server, b, 'GET', '/users/@me/relationships'));
    assert.deepEqual(
      incoming.map((r: any) => [r.id, r.type]),
      [[a.id, 3]],
    );
    assert.equal(events.of('RELATIONSHIP_ADD').length, 2);
    events.clear();
    const accepted = await as(server, b, 'PUT', `/users/@me/relationships/${a.id}`, { type: 1 });
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.type, 1);
    // Accepting changes the type of both rows: RELATIONSHIP_UPDATE, not a second ADD.
    assert.equal(events.of('RELATIONSHIP_UPDATE').length, 2);
    assert.equal(events.of('RELATIONSHIP_ADD').length, 0);
    assert.deepEqual(
      (await ok(as(server, a, 'GET', '/users/@me/relationships'))).map((r: any) => r.type),
      [1],
    );
    assert.deepEqual(
      (await ok(as(server, b, 'GET', '/users/@me/relationships'))).map((r: any) => r.type),
      [1],
    );
    events.clear();
    assert.equal((await as(server, a, 'DELETE', `/users/@me/relationships/${b.id}`)).status, 204);
    assert.deepEqual(await ok(as(server, b, 'GET', '/users/@me/relationships')), []);
    assert.equal(events.of('RELATIONSHIP_REMOVE').length, 2);
    assert.deepEqual(events.of('RELATIONSHIP_REMOVE')[0]?.payload, { id: b.id });
  });

  it('requests by username with POST and accepts a crossing request', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    const byName = await as(server, a, 'POST', '/users/@me/relationships', { username: b.username });
    assert.equal(byName.status, 200);
    assert.equal(byName.body.type, 4);
    const crossing = await as(server, b, 'POST', `/users/@me/relationships/${a.id}`, {});
    assert.equal(crossing.status, 200);
    assert.equal(crossing.body.type, 1);
    assert.deepEqual(
      (await ok(as(server, a, 'GET', '/users/@me/relationships'))).map((r: any) => r.type),
      [1],
    );
    const unknown = await as(server, a, 'POST', '/users/@me/relationships', { username: 'nobody_by_that_name' });
    assert.equal(unknown.body.code, 'UNKNOWN_USER');
  });

  it('blocks: the blocked user cannot send a request, and unblocking clears the block', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    await befriend(a, b);
    const dm = await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }));
    events.clear();
    const blocked = await as(server, b, 'PUT', `/users/@me/relationships/${a.id}`, { type: 2 });
    assert.equal(blocked.status, 200);
    assert.equal(blocked.body.type, 2);
    // A friendship turning into a block: the blocker's row changes type (UPDATE), the other's goes (REMOVE).
    const update = events.one('RELATIONSHIP_UPDATE');
    assert.deepEqual(update.audience, { kind: 'users', userIds: [b.id] });
    assert.deepEqual([update.payload.id, update.payload.type], [a.id, 2]);
    const remove = events.one('RELATIONSHIP_REMOVE');
    assert.deepEqual(remove.audience, { kind: 'users', userIds: [a.id] });
    assert.deepEqual(remove.payload, { id: b.id });
    assert.deepEqual(
      (await ok(as(server, b, 'GET', '/users/@me/relationships'))).map((r: any) => [r.id, r.type]),
      [[a.id, 2]],
    );
    assert.deepEqual(await ok(as(server, a, 'GET', '/users/@me/relationships')), []);
    const retry = await as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, {});
    assert.equal(retry.status, 400);
    assert.equal(retry.body.code, 'FRIEND_REQUEST_BLOCKED');
    const toBlocked = await as(server, b, 'PUT', `/users/@me/relationships/${a.id}`, {});
    assert.equal(toBlocked.status, 400);
    assert.equal(toBlocked.body.code, 'CANNOT_SEND_FRIEND_REQUEST_TO_BLOCKED_USER');
    for (const [from, to, label] of [
      [a, b, 'blocked'],
      [b, a, 'blocker'],
    ] as const) {
      const res = await as(server, from, 'POST', `/channels/${dm.id}/messages`, { content: 'hello?' });
      assert.equal(res.status, 403, label);
      assert.equal(res.body.code, 'CANNOT_SEND_MESSAGES_TO_THIS_USER');
      const open = await as(server, from, 'POST', '/users/@me/channels', { recipient_id: to.id });
      assert.equal(open.status, 403, label);
      assert.equal(open.body.code, 'CANNOT_SEND_MESSAGES_TO_THIS_USER');
    }
    assert.equal((await as(server, b, 'DELETE', `/users/@me/relationships/${a.id}`)).status, 204);
    assert.equal((await as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, {})).status, 200);
    assert.equal((await as(server, a, 'POST', `/channels/${dm.id}/messages`, { content: 'hi again' })).status, 200);
  });

  it('GET /users/{id}/profile names the guilds and the friends the caller shares with that user, no others', async () => {
    const [viewer, target, friend, outsider] = await Promise.all([
      registerUser(server),
      registerUser(server),
      registerUser(server),
      registerUser(server),
    ]);
    const shared = await newGuild(server, viewer, 'Shared place');
    const theirs = await newGuild(server, target, 'Their own place');
    await join(server, viewer, target, shared);
    await ok(as(server, viewer, 'PATCH', `/guilds/${shared.id}/members/${target.id}`, { nick: 'Tee' }));
    await join(server, target, outsider, theirs);
    await befriend(viewer, friend);
    await befriend(target, friend);
    await befriend(target, outsider);
    await ok(as(server, target, 'PATCH', '/users/@me', { bio: 'Knits on Sundays', pronouns: 'they/them' }));
    const profile = await as(server, viewer, 'GET', `/users/${target.id}/profile`);
    assert.equal(profile.status, 200, profile.text);
    assert.deepEqual(profile.body.user_profile, {
      bio: 'Knits on Sundays',
      pronouns: 'they/them',
      accent_color: null,
      banner: null,
    });
    assert.equal(profile.body.user.id, target.id);
    assert.equal(profile.body.user.username, target.username);
    assert.deepEqual(profile.body.mutual_guilds, [{ id: shared.id, nick: 'Tee' }]);
    assert.deepEqual(
      profile.body.mutual_friends.map((u: { id: string }) => u.id),
      [friend.id],
    );
    const own = await as(server, viewer, 'GET', '/users/@me/profile');
    assert.equal(own.status, 200);
    assert.deepEqual([own.body.user.id, own.body.mutual_guilds, own.body.mutual_friends], [viewer.id, [], []]);
    const unknown = await as(server, viewer, 'GET', '/users/1/profile');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_USER');
    const app = await createApplication(server, viewer);
    const bot = await as(server, { auth: `Bot ${app.botToken}` }, 'GET', `/users/${target.id}/profile`);
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'ACCESS_DENIED');
  });

  it('is user-only, and refuses yourself', async () => {
    const a = await registerUser(server);
    const app = await createApplication(server, a);
    const bot = await as(server, { auth: `Bot ${app.botToken}` }, 'GET', '/users/@me/relationships');
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'ACCESS_DENIED');
    const self = await as(server, a, 'PUT', `/users/@me/relationships/${a.id}`, {});
    assert.equal(self.status, 400);
    const badType = await as(server, a, 'PUT', `/users/@me/relationships/${bob.id}`, { type: 3 });
    assert.equal(badType.status, 400);
  });
});

describe('DM and group DM rules (issue 16)', () => {
  it('a stranger cannot open a DM; a shared guild lets them, unless the recipient restricts that guild', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    const stranger = await as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id });
    assert.equal(stranger.status, 403);
    assert.deepEqual(stranger.body, {
      code: 'CANNOT_SEND_MESSAGES_TO_THIS_USER',
      message: 'Cannot send messages to this user',
    });
    const guild = await ok(as(server, b, 'POST', '/guilds', { name: 'meeting place' }));
    const invite = await ok(as(server, b, 'POST', `/channels/${guild.system_channel_id}/invites`, {}));
    await ok(as(server, a, 'POST', `/invites/${invite.code}`));
    const dm = await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }));
    assert.equal(dm.type, 1);
    // The recipient's privacy settings: no DMs from members of that guild.
    await ok(as(server, b, 'PATCH', '/users/@me/settings', { restricted_guilds: [guild.id] }));
    const restricted = await as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id });
    assert.equal(restricted.status, 403);
    assert.equal(restricted.body.code, 'CANNOT_SEND_MESSAGES_TO_THIS_USER');
    // The restriction is the recipient's: b may still open it towards a, whose settings allow it.
    assert.equal((await ok(as(server, b, 'POST', '/users/@me/channels', { recipient_id: a.id }))).id, dm.id);
    // Friends always may.
    await befriend(b, a);
    assert.equal((await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }))).id, dm.id);
  });

  it('a blocked pair cannot pin in their DM', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    await befriend(a, b);
    const dm = await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }));
    const message = await ok(as(server, a, 'POST', `/channels/${dm.id}/messages`, { content: 'pin me' }));
    await ok(as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, { type: 2 }));
    for (const who of [a, b]) {
      const pin = await as(server, who, 'PUT', `/channels/${dm.id}/pins/${message.id}`);
      assert.equal(pin.status, 403);
      assert.equal(pin.body.code, 'CANNOT_SEND_MESSAGES_TO_THIS_USER');
    }
    assert.equal((await ok(as(server, a, 'GET', `/channels/${dm.id}/messages/${message.id}`))).pinned, false);
    await ok(as(server, a, 'DELETE', `/users/@me/relationships/${b.id}`), 204);
    assert.equal((await as(server, b, 'PUT', `/channels/${dm.id}/pins/${message.id}`)).status, 204);
  });

  it('group DMs take only friends, at creation and when adding; a block ends that', async () => {
    const owner = await registerUser(server);
    const friend = await registerUser(server);
    const other = await registerUser(server);
    await befriend(owner, friend);
    const notFriends = await as(server, owner, 'POST', '/users/@me/channels', { recipients: [friend.id, other.id] });
    assert.equal(notFriends.status, 400);
    assert.deepEqual(notFriends.body, { code: 'INVALID_RECIPIENTS', message: 'Invalid recipients' });
    const third = await registerUser(server);
    await befriend(owner, third);
    const group = await ok(as(server, owner, 'POST', '/users/@me/channels', { recipients: [friend.id, third.id] }));
    const add = await as(server, owner, 'PUT', `/channels/${group.id}/recipients/${other.id}`);
    assert.equal(add.status, 400);
    assert.equal(add.body.code, 'INVALID_RECIPIENTS');
    // Friends of the owner but not of the one adding: refused too.
    const fourth = await registerUser(server);
    await befriend(owner, fourth);
    const byMember = await as(server, friend, 'PUT', `/channels/${group.id}/recipients/${fourth.id}`);
    assert.equal(byMember.body.code, 'INVALID_RECIPIENTS');
    // A block (from either side) ends the friendship, so the blocked pair cannot add each other.
    await ok(as(server, fourth, 'PUT', `/users/@me/relationships/${owner.id}`, { type: 2 }));
    const blocked = await as(server, owner, 'PUT', `/channels/${group.id}/recipients/${fourth.id}`);
    assert.equal(blocked.status, 400);
    assert.equal(blocked.body.code, 'INVALID_RECIPIENTS');
    const blockedCreate = await as(server, owner, 'POST', '/users/@me/channels', {
      recipients: [friend.id, fourth.id],
    });
    assert.equal(blockedCreate.body.code, 'INVALID_RECIPIENTS');
    const listed = await ok(as(server, owner, 'GET', `/channels/${group.id}`));
    assert.equal(listed.recipients.length, 2);
  });

  it('adding, removing and leaving post RECIPIENT_ADD / RECIPIENT_REMOVE, a silent leave included', async () => {
    const owner = await registerUser(server);
    const [x, y, z] = [await registerUser(server), await registerUser(server), await registerUser(server)];
    for (const friend of [x, y, z]) await befriend(owner, friend);
    const group = await ok(as(server, owner, 'POST', '/users/@me/channels', { recipients: [x.id, y.id] }));
    assert.equal((await as(server, owner, 'PUT', `/channels/${group.id}/recipients/${z.id}`)).status, 204);
    const latest = async (viewer: TestUser) =>
      (await ok(as(server, viewer, 'GET', `/channels/${group.id}/messages?limit=1`)))[0];
    const added = await latest(x);
    assert.deepEqual(
      [added.type, added.author.id, added.content, added.mentions.map((u: any) => u.id)],
      [1, owner.id, '', [z.id]],
    );
    assert.equal((await latest(z)).id, added.id, 'the added user sees it too');
    // The owner removes someone.
    assert.equal((await as(server, owner, 'DELETE', `/channels/${group.id}/recipients/${z.id}`)).status, 204);
    const removed = await latest(x);
    assert.deepEqual([removed.type, removed.author.id, removed.mentions.map((u: any) => u.id)], [2, owner.id, [z.id]]);
    // A silent leave (the established clients' `?silent=true`) still posts the message.
    events.clear();
    assert.equal((await as(server, y, 'DELETE', `/channels/${group.id}?silent=true`)).status, 204);
    const left = await latest(x);
    assert.deepEqual([left.type, left.author.id, left.mentions.map((u: any) => u.id)], [2, y.id, [y.id]]);
    const created = events.one('MESSAGE_CREATE');
    assert.deepEqual(new Set((created.audience as any).userIds), new Set([owner.id, x.id]));
    assert.equal((created.payload as any).type, 2);
    assert.equal((await as(server, y, 'GET', `/channels/${group.id}/messages`)).body.code, 'MISSING_ACCESS');
  });

  it('POST by username takes the discriminator the platform shows (#0001, or 0); another one is unknown', async () => {
    const a = await registerUser(server);
    const b = await registerUser(server);
    const c = await registerUser(server);
    const wrong = await as(server, a, 'POST', '/users/@me/relationships', {
      username: b.username,
      discriminator: '1234',
    });
    assert.equal(wrong.status, 404);
    assert.equal(wrong.body.code, 'UNKNOWN_USER');
    const tagged = await as(server, a, 'POST', '/users/@me/relationships', {
      username: b.username,
      discriminator: '0001',
    });
    assert.equal(tagged.status, 200);
    assert.deepEqual([tagged.body.id, tagged.body.type, tagged.body.user.id], [b.id, 4, b.id]);
    const zero = await as(server, a, 'POST', '/users/@me/relationships', { username: c.username, discriminator: 0 });
    assert.equal(zero.status, 200);
    assert.equal(zero.body.type, 4);
    // Asking again is idempotent: 200 with the same relationship.
    const again = await as(server, a, 'POST', `/users/@me/relationships/${c.id}`, {});
    assert.equal(again.status, 200);
    assert.deepEqual([again.body.id, again.body.type], [c.id, 4]);
  });
});
