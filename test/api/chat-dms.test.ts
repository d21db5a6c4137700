import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApplication } from '../support/applications.ts';
import { as, DispatchRecorder, ok } from '../support/chat.ts';
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
});
after(async () => {
  events?.close();
  await server?.close();
});

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
    assert.deepEqual(
      (forBob.payload.recipients as any[]).map((u) => u.id),
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
    await ok(as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, {}), 200);
    const blocked = await as(server, b, 'PUT', `/users/@me/relationships/${a.id}`, { type: 2 });
    assert.equal(blocked.status, 200);
    assert.equal(blocked.body.type, 2);
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
    const dm = await ok(as(server, a, 'POST', '/users/@me/channels', { recipient_id: b.id }));
    for (const [from, label] of [
      [a, 'blocked'],
      [b, 'blocker'],
    ] as const) {
      const res = await as(server, from, 'POST', `/channels/${dm.id}/messages`, { content: 'hello?' });
      assert.equal(res.status, 403, label);
      assert.equal(res.body.code, 'MISSING_PERMISSIONS');
    }
    assert.equal((await as(server, b, 'DELETE', `/users/@me/relationships/${a.id}`)).status, 204);
    assert.equal((await as(server, a, 'PUT', `/users/@me/relationships/${b.id}`, {})).status, 200);
    assert.equal((await as(server, a, 'POST', `/channels/${dm.id}/messages`, { content: 'hi again' })).status, 200);
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
