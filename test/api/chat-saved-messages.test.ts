import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { createApplication } from '../support/applications.ts';
import { as, bits, guildWithMembers, ok, P } from '../support/chat.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: any;
let general: string;
const sockets: GatewayClient[] = [];

before(async () => {
  server = await startTestServer();
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  [alice, bob] = setup.members as [TestUser, TestUser];
  guild = setup.guild;
  general = setup.channelId;
});
after(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server?.close();
});

const post = (user: TestUser, channelId: string, content: string) =>
  ok(as(server, user, 'POST', `/channels/${channelId}/messages`, { content }));
const save = (user: TestUser, channelId: string, messageId: string, body?: unknown) =>
  as(server, user, 'PUT', `/users/@me/saved-messages/${channelId}/${messageId}`, body);
const list = async (user: TestUser, query = '') =>
  (await ok(as(server, user, 'GET', `/users/@me/saved-messages${query}`))).results as any[];

describe('saved messages', () => {
  it('saves a message with notes and a due time, lists it newest first, and tells the saver’s sessions only', async () => {
    const { client: bobGw } = await readyClient(server, bob.token);
    const { client: aliceGw } = await readyClient(server, alice.token);
    sockets.push(bobGw, aliceGw);
    const first = await post(alice, general, 'remember this');
    const second = await post(alice, general, 'and this');
    const res = await save(bob, general, first.id, { notes: 'read later', due_at: '2030-01-02T03:04:05.000Z' });
    assert.equal(res.status, 200);
    assert.deepEqual(
      { ...res.body.save_data, saved_at: undefined },
      {
        channel_id: general,
        message_id: first.id,
        guild_id: guild.id,
        saved_at: undefined,
        notes: 'read later',
        due_at: '2030-01-02T03:04:05.000Z',
      },
    );
    assert.match(res.body.save_data.saved_at, ISO_MS);
    assert.equal(res.body.message.id, first.id);
    assert.equal(res.body.message.content, 'remember this');
    assert.equal(res.body.message.guild_id, guild.id);
    const created = await bobGw.dispatch('SAVED_MESSAGE_CREATE');
    assert.deepEqual(created.d, res.body);
    assert.ok(await aliceGw.nothing((f) => f.t === 'SAVED_MESSAGE_CREATE'));

    await ok(save(bob, general, second.id));
    const saved = await list(bob);
    assert.deepEqual(
      saved.map((s) => s.save_data.message_id),
      [second.id, first.id],
    );
    assert.equal(saved[0].save_data.notes, null);
    assert.equal(saved[0].save_data.due_at, null);
    assert.deepEqual(
      (await list(bob, '?limit=1')).map((s) => s.save_data.message_id),
      [second.id],
    );
    assert.deepEqual(
      (await list(bob, `?before=${encodeURIComponent(saved[0].save_data.saved_at)}`)).map(
        (s) => s.save_data.message_id,
      ),
      [first.id],
    );
    assert.deepEqual(await list(alice), []);

    // A re-save keeps its place and time, and replaces notes and due time.
    const again = await ok(save(bob, general, first.id, { notes: 'changed' }));
    assert.equal(again.save_data.saved_at, saved[1].save_data.saved_at);
    assert.equal(again.save_data.notes, 'changed');
    assert.equal(again.save_data.due_at, null);

    assert.equal((await as(server, bob, 'DELETE', `/users/@me/saved-messages/${general}/${second.id}`)).status, 204);
    const removed = await bobGw.dispatch('SAVED_MESSAGE_DELETE');
    assert.deepEqual(removed.d, { channel_id: general, message_id: second.id });
    assert.deepEqual(
      (await list(bob)).map((s) => s.save_data.message_id),
      [first.id],
    );
    // Unsaving again is idempotent and sends nothing.
    assert.equal((await as(server, bob, 'DELETE', `/users/@me/saved-messages/${general}/${second.id}`)).status, 204);
    assert.ok(await bobGw.nothing((f) => f.t === 'SAVED_MESSAGE_DELETE'));
  });

  it('works in DMs, drops a deleted message, and hides the message while the channel is out of reach', async () => {
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    const inDm = await post(alice, dm.id, 'dm note');
    const savedDm = await ok(save(bob, dm.id, inDm.id));
    assert.equal('guild_id' in savedDm.save_data, false);
    assert.equal(savedDm.message.content, 'dm note');

    const channel = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'later' }))).id;
    const gone = await post(alice, channel, 'to be deleted');
    const hidden = await post(alice, channel, 'to be hidden');
    await ok(save(bob, channel, gone.id));
    await ok(save(bob, channel, hidden.id));
    await ok(as(server, alice, 'DELETE', `/channels/${channel}/messages/${gone.id}`), 204);
    let ids = (await list(bob)).map((s) => s.save_data.message_id);
    assert.equal(ids.includes(gone.id), false);
    assert.equal(ids.includes(hidden.id), true);

    await ok(
      as(server, owner, 'PUT', `/channels/${channel}/permissions/${bob.id}`, { type: 1, deny: bits(P.VIEW_CHANNEL) }),
      204,
    );
    const entry = (await list(bob)).find((s) => s.save_data.message_id === hidden.id);
    assert.deepEqual(Object.keys(entry), ['save_data']);
    // Saving needs the channel; unsaving does not.
    const refused = await save(bob, channel, hidden.id);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'MISSING_ACCESS');
    assert.equal((await as(server, bob, 'DELETE', `/users/@me/saved-messages/${channel}/${hidden.id}`)).status, 204);
    ids = (await list(bob)).map((s) => s.save_data.message_id);
    assert.equal(ids.includes(hidden.id), false);
  });

  it('refuses what other channel routes refuse, bad bodies, bad queries and bots', async () => {
    const message = await post(alice, general, 'x');
    const noHistory = (
      await ok(
        as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
          name: 'no-history',
          permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.READ_MESSAGE_HISTORY) }],
        }),
      )
    ).id;
    const there = await post(owner, noHistory, 'y');
    const outsider = await registerUser(server);
    const cases: [TestUser, string, string, number, string][] = [
      [outsider, general, message.id, 403, 'MISSING_ACCESS'],
      [bob, noHistory, there.id, 403, 'MISSING_PERMISSIONS'],
      [bob, '123456789012345678', message.id, 404, 'UNKNOWN_CHANNEL'],
      [bob, 'abc', message.id, 404, 'UNKNOWN_CHANNEL'],
      [bob, general, '123456789012345678', 404, 'UNKNOWN_MESSAGE'],
      [bob, general, 'abc', 404, 'UNKNOWN_MESSAGE'],
      [bob, general, there.id, 404, 'UNKNOWN_MESSAGE'],
    ];
    for (const [user, channelId, messageId, status, code] of cases) {
      const res = await save(user, channelId, messageId);
      assert.equal(res.status, status, `${channelId}/${messageId}`);
      assert.equal(res.body.code, code, `${channelId}/${messageId}`);
    }
    for (const body of [{ notes: 'x'.repeat(1001) }, { due_at: 'tomorrow' }, { notes: 5 }]) {
      const res = await save(bob, general, message.id, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
    }
    for (const query of ['?limit=0', '?limit=101', '?before=yesterday']) {
      const res = await as(server, bob, 'GET', `/users/@me/saved-messages${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
    }
    const badDelete = await as(server, bob, 'DELETE', `/users/@me/saved-messages/abc/${message.id}`);
    assert.equal(badDelete.status, 404);
    assert.equal(badDelete.body.code, 'UNKNOWN_CHANNEL');
    const app = await createApplication(server, owner);
    const bot = { auth: `Bot ${app.botToken}` };
    for (const [method, path] of [
      ['GET', '/users/@me/saved-messages'],
      ['PUT', `/users/@me/saved-messages/${general}/${message.id}`],
      ['DELETE', `/users/@me/saved-messages/${general}/${message.id}`],
    ] as const) {
      const res = await as(server, bot, method, path);
      assert.equal(res.status, 403, path);
      assert.equal(res.body.code, 'ACCESS_DENIED', path);
    }
  });

  it('holds at most 1000 saves per account; a re-save at the cap still works', async () => {
    const carol = await registerUser(server);
    const invite = await ok(as(server, owner, 'POST', `/channels/${general}/invites`, { unique: true }));
    await ok(as(server, carol, 'POST', `/invites/${invite.code}`));
    const channel = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'bulk' }))).id;
    const seeded = await harness(server, 'POST', '/messages/seed', {
      channel_id: channel,
      author_id: alice.id,
      messages: Array.from({ length: 1000 }, (_, i) => ({ timestamp: Date.now() - 100_000 + i, content: `m${i}` })),
    });
    assert.equal(seeded.status, 200, seeded.text);
    const ids = (seeded.body.messages as { message_id: string }[]).map((m) => m.message_id);
    // 999 saves set up directly, the 1000th through the API.
    await server.app.services.db.query(
      `INSERT INTO saved_messages (user_id, message_id, channel_id, guild_id, saved_at)
       SELECT $1, id, channel_id, guild_id, now() FROM messages WHERE id = ANY($2::bigint[])`,
      [carol.id, ids.slice(0, 999)],
    );
    await ok(save(carol, channel, ids[999] as string));
    const extra = await post(alice, channel, 'one too many');
    const refused = await save(carol, channel, extra.id);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'MAX_SAVED_MESSAGES');
    assert.equal((await save(carol, channel, ids[0] as string, { notes: 'still editable' })).status, 200);
    assert.equal((await as(server, carol, 'DELETE', `/users/@me/saved-messages/${channel}/${ids[0]}`)).status, 204);
    assert.equal((await save(carol, channel, extra.id)).status, 200);
  });
});
