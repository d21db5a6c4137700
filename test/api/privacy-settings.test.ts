import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, befriend, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The privacy settings (docs/accounts.md#privacy): `default_guilds_restricted` fills `restricted_guilds`
 * with the guilds joined after it is set, which refuses DMs from their members; `friend_source_flags` says
 * who may send a friend request.
 */
let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

const REFUSED_DM = { code: 'CANNOT_SEND_MESSAGES_TO_THIS_USER', message: 'Cannot send messages to this user' };
const REFUSED_REQUEST = { code: 'FRIEND_REQUEST_BLOCKED', message: 'Friend request blocked' };

const settings = (user: TestUser, body: Record<string, unknown>) =>
  ok(as(server, user, 'PATCH', '/users/@me/settings', body));

describe('privacy settings are stored and delivered', () => {
  it('PATCH answers them, USER_SETTINGS_UPDATE carries them, GET and READY read them back', async () => {
    const user = await registerUser(server);
    const fresh = await ok(as(server, user, 'GET', '/users/@me/settings'));
    assert.equal(fresh.default_guilds_restricted, false);
    assert.deepEqual(fresh.restricted_guilds, []);
    assert.deepEqual(fresh.friend_source_flags, { all: true });

    const { client } = await readyClient(server, user.token);
    const body = await settings(user, {
      default_guilds_restricted: true,
      friend_source_flags: { mutual_friends: true, mutual_guilds: true, something_else: true },
    });
    assert.equal(body.default_guilds_restricted, true);
    assert.deepEqual(body.friend_source_flags, { mutual_friends: true, mutual_guilds: true });
    assert.deepEqual((await client.dispatch('USER_SETTINGS_UPDATE')).d, {
      default_guilds_restricted: true,
      friend_source_flags: { mutual_friends: true, mutual_guilds: true },
    });
    await client.close();

    const read = await ok(as(server, user, 'GET', '/users/@me/settings'));
    assert.equal(read.default_guilds_restricted, true);
    assert.deepEqual(read.friend_source_flags, { mutual_friends: true, mutual_guilds: true });
    const again = GatewayClient.connect(server);
    const ready = await again.ready(user.token);
    assert.equal(ready.d.user_settings.default_guilds_restricted, true);
    assert.deepEqual(ready.d.user_settings.friend_source_flags, { mutual_friends: true, mutual_guilds: true });
    assert.deepEqual(ready.d.user_settings.restricted_guilds, []);
    await again.close();

    // The whole object is replaced: back to everyone.
    const all = await settings(user, { friend_source_flags: { all: true } });
    assert.deepEqual(all.friend_source_flags, { all: true });
  });

  it('refuses ill-typed values, naming the member', async () => {
    const user = await registerUser(server);
    for (const [body, path] of [
      [{ default_guilds_restricted: 'yes' }, 'default_guilds_restricted'],
      [{ friend_source_flags: { all: 1 } }, 'friend_source_flags.all'],
      [{ friend_source_flags: [true] }, 'friend_source_flags'],
      [{ restricted_guilds: 'all' }, 'restricted_guilds'],
    ] as const) {
      const res = await as(server, user, 'PATCH', '/users/@me/settings', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path === path),
        `${path}: ${JSON.stringify(res.body.errors)}`,
      );
    }
    const unchanged = await ok(as(server, user, 'GET', '/users/@me/settings'));
    assert.equal(unchanged.default_guilds_restricted, false);
    assert.deepEqual(unchanged.friend_source_flags, { all: true });
  });
});

describe('default_guilds_restricted', () => {
  it('restricts the guilds joined after it is set (not those before), which refuses DMs from their members', async () => {
    const recipient = await registerUser(server);
    const neighbour = await registerUser(server);
    const newcomer = await registerUser(server);
    // A guild shared before the setting: its members keep DMing.
    const before = await newGuild(server, neighbour, 'joined before');
    await join(server, neighbour, recipient, before);

    await settings(recipient, { default_guilds_restricted: true });
    const { client } = await readyClient(server, recipient.token);
    const after = await newGuild(server, newcomer, 'joined after');
    await join(server, newcomer, recipient, after);
    assert.deepEqual((await client.dispatch('USER_SETTINGS_UPDATE')).d, { restricted_guilds: [after.id] });
    await client.close();
    const read = await ok(as(server, recipient, 'GET', '/users/@me/settings'));
    assert.deepEqual(read.restricted_guilds, [after.id]);
    assert.equal(read.default_guilds_restricted, true);

    const refused = await as(server, newcomer, 'POST', '/users/@me/channels', { recipient_id: recipient.id });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, REFUSED_DM);
    const allowed = await ok(as(server, neighbour, 'POST', '/users/@me/channels', { recipient_id: recipient.id }));
    assert.equal(allowed.type, 1);
    // The restriction is the recipient's own: they may still open a DM with the newcomer.
    assert.equal(
      (await ok(as(server, recipient, 'POST', '/users/@me/channels', { recipient_id: newcomer.id }))).type,
      1,
    );
    // Sharing the old, unrestricted guild too lets the newcomer in.
    await join(server, neighbour, newcomer, before);
    assert.equal(
      (await ok(as(server, newcomer, 'POST', '/users/@me/channels', { recipient_id: recipient.id }))).type,
      1,
    );
  });

  it('covers a guild one creates, is idempotent on a re-join, and stops when turned off', async () => {
    const user = await registerUser(server);
    const other = await registerUser(server);
    await settings(user, { default_guilds_restricted: true });
    const own = await newGuild(server, user, 'own');
    assert.deepEqual((await ok(as(server, user, 'GET', '/users/@me/settings'))).restricted_guilds, [own.id]);
    // Taking it off the list by hand is the user's choice: a later join elsewhere does not put it back.
    await settings(user, { restricted_guilds: [] });
    const theirs = await newGuild(server, other, 'theirs');
    await join(server, other, user, theirs);
    assert.deepEqual((await ok(as(server, user, 'GET', '/users/@me/settings'))).restricted_guilds, [theirs.id]);
    // Joining again (already a member) adds nothing twice.
    await join(server, other, user, theirs);
    assert.deepEqual((await ok(as(server, user, 'GET', '/users/@me/settings'))).restricted_guilds, [theirs.id]);

    await settings(user, { default_guilds_restricted: false });
    const third = await newGuild(server, other, 'third');
    await join(server, other, user, third);
    assert.deepEqual((await ok(as(server, user, 'GET', '/users/@me/settings'))).restricted_guilds, [theirs.id]);
    // `third` is allowed, so `other` may open a DM again through it.
    assert.equal((await ok(as(server, other, 'POST', '/users/@me/channels', { recipient_id: user.id }))).type, 1);
  });
});

describe('friend_source_flags', () => {
  it('{} takes no friend request, by id or by name, and leaves no relationship behind', async () => {
    const target = await registerUser(server);
    const sender = await registerUser(server);
    await settings(target, { friend_source_flags: {} });
    for (const [method, path, body] of [
      ['PUT', `/users/@me/relationships/${target.id}`, {}],
      ['POST', `/users/@me/relationships/${target.id}`, undefined],
      ['POST', '/users/@me/relationships', { username: target.username }],
    ] as const) {
      const res = await as(server, sender, method, path, body);
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.deepEqual(res.body, REFUSED_REQUEST);
    }
    assert.deepEqual(await ok(as(server, sender, 'GET', '/users/@me/relationships')), []);
    assert.deepEqual(await ok(as(server, target, 'GET', '/users/@me/relationships')), []);
    // The target may still ask, and the other side accept: the flags filter requests to the target only.
    const asked = await ok(as(server, target, 'PUT', `/users/@me/relationships/${sender.id}`, {}));
    assert.equal(asked.type, 4);
    const accepted = await ok(as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, { type: 1 }));
    assert.equal(accepted.type, 1);
  });

  it('{mutual_guilds} takes a request from someone in a shared guild only', async () => {
    const target = await registerUser(server);
    const sender = await registerUser(server);
    await settings(target, { friend_source_flags: { mutual_guilds: true } });
    const refused = await as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {});
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, REFUSED_REQUEST);
    const guild = await newGuild(server, target, 'common ground');
    await join(server, target, sender, guild);
    const asked = await ok(as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {}));
    assert.equal(asked.type, 4);
    assert.equal(asked.id, target.id);
  });

  it('{mutual_friends} takes a request from someone with a friend in common only', async () => {
    const target = await registerUser(server);
    const sender = await registerUser(server);
    const common = await registerUser(server);
    await settings(target, { friend_source_flags: { mutual_friends: true } });
    // A shared guild is not enough under this setting.
    const guild = await newGuild(server, target, 'not enough');
    await join(server, target, sender, guild);
    const refused = await as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {});
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, REFUSED_REQUEST);
    // The common friend's own request to the target is refused too (no friend in common yet); the target's
    // request to them, still pending, is not a friendship.
    const theirs = await as(server, common, 'PUT', `/users/@me/relationships/${target.id}`, {});
    assert.deepEqual(theirs.body, REFUSED_REQUEST);
    await ok(as(server, target, 'PUT', `/users/@me/relationships/${common.id}`, {}));
    await befriend(server, sender, common);
    const pending = await as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {});
    assert.equal(pending.status, 400);
    assert.deepEqual(pending.body, REFUSED_REQUEST);
    // Accepting the target's request needs no permission from the flags.
    assert.equal((await ok(as(server, common, 'PUT', `/users/@me/relationships/${target.id}`, { type: 1 }))).type, 1);
    const asked = await ok(as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {}));
    assert.equal(asked.type, 4);
  });

  it('{all} (the default) takes anyone', async () => {
    const target = await registerUser(server);
    const sender = await registerUser(server);
    await settings(target, { friend_source_flags: { all: true, mutual_friends: false } });
    const asked = await ok(as(server, sender, 'PUT', `/users/@me/relationships/${target.id}`, {}));
    assert.equal(asked.type, 4);
  });
});
