import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, assertOnlyFormError, bits, DispatchRecorder, guildWithMembers, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Forwarding (docs/chat.md "Forwarding"): `message_reference.type` 1 and a frozen `message_snapshots` entry. */
let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: any;
let channelId: string;
let elsewhere: { guild: any; channelId: string };
let dmId: string;

const HAS_SNAPSHOT = 1 << 14;

before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  [alice, bob] = setup.members as [TestUser, TestUser];
  guild = setup.guild;
  channelId = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'source' }))).id;
  const other = await newGuild(server, bob, 'Bob elsewhere');
  elsewhere = { guild: other, channelId: other.system_channel_id };
  // Alice and Bob share a guild: a DM between them is allowed.
  dmId = (await ok(as(server, bob, 'POST', '/users/@me/channels', { recipient_id: alice.id }))).id;
});
after(async () => {
  events?.close();
  await server?.close();
});

const forward = (user: TestUser, to: string, reference: Record<string, unknown>, extra: object = {}) =>
  as(server, user, 'POST', `/channels/${to}/messages`, { message_reference: { type: 1, ...reference }, ...extra });

describe('forwarding a message', () => {
  it('copies the source into another guild as a snapshot, on the answer, GET and MESSAGE_CREATE', async () => {
    const source = await ok(
      as(server, alice, 'POST', `/channels/${channelId}/messages`, {
        content: `look <@${bob.id}> @everyone`,
        embeds: [{ title: 'Card', description: 'text' }],
      }),
    );
    events.clear();
    const res = await forward(bob, elsewhere.channelId, {
      message_id: source.id,
      channel_id: channelId,
      guild_id: guild.id,
    });
    assert.equal(res.status, 200, res.text);
    const m = res.body;
    assert.equal(m.type, 0);
    assert.equal(m.content, '');
    assert.equal(m.flags, HAS_SNAPSHOT);
    assert.equal(m.channel_id, elsewhere.channelId);
    assert.equal(m.author.id, bob.id);
    assert.deepEqual(m.message_reference, {
      type: 1,
      message_id: source.id,
      channel_id: channelId,
      guild_id: guild.id,
    });
    assert.equal('referenced_message' in m, false);
    // The forward pings nobody: the snapshot's mentions are the source's, not the forward's.
    assert.deepEqual(m.mentions, []);
    assert.equal(m.mention_everyone, false);
    const expected = [
      {
        message: {
          type: 0,
          content: source.content,
          embeds: source.embeds,
          attachments: [],
          timestamp: source.timestamp,
          edited_timestamp: null,
          flags: 0,
          mentions: source.mentions,
          mention_roles: [],
        },
      },
    ];
    assert.deepEqual(m.message_snapshots, expected);
    assert.deepEqual(
      m.message_snapshots[0].message.mentions.map((u: any) => u.id),
      [bob.id],
    );
    const created = events.one('MESSAGE_CREATE', (d) => (d.payload as any).id === m.id);
    assert.deepEqual((created.payload as any).message_snapshots, expected);
    assert.deepEqual((created.payload as any).message_reference, m.message_reference);

    // Frozen: editing then deleting the source changes nothing in the forward.
    await ok(as(server, alice, 'PATCH', `/channels/${channelId}/messages/${source.id}`, { content: 'changed' }));
    await ok(as(server, alice, 'DELETE', `/channels/${channelId}/messages/${source.id}`), 204);
    const read = await ok(as(server, bob, 'GET', `/channels/${elsewhere.channelId}/messages/${m.id}`));
    assert.deepEqual(read.message_snapshots, expected);
    assert.deepEqual(read.message_reference, m.message_reference);
    assert.equal(read.flags, HAS_SNAPSHOT);
    const listed = await ok(as(server, bob, 'GET', `/channels/${elsewhere.channelId}/messages?limit=5`));
    assert.deepEqual(listed.find((x: any) => x.id === m.id).message_snapshots, expected);
  });

  it('forwards into a DM, and within the same channel without channel_id', async () => {
    const source = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'for the DM' }));
    const inDm = await forward(bob, dmId, { message_id: source.id, channel_id: channelId });
    assert.equal(inDm.status, 200, inDm.text);
    assert.deepEqual(inDm.body.message_reference, {
      type: 1,
      message_id: source.id,
      channel_id: channelId,
      guild_id: guild.id,
    });
    assert.equal(inDm.body.message_snapshots[0].message.content, 'for the DM');
    // Alice reads it in the DM.
    const seen = await ok(as(server, alice, 'GET', `/channels/${dmId}/messages/${inDm.body.id}`));
    assert.equal(seen.message_snapshots[0].message.content, 'for the DM');

    const here = await forward(bob, channelId, { message_id: source.id });
    assert.equal(here.status, 200, here.text);
    assert.equal(here.body.message_reference.channel_id, channelId);
    // A forward of a forward carries the original's snapshot.
    const again = await forward(alice, channelId, { message_id: here.body.id, channel_id: channelId });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.message_snapshots, here.body.message_snapshots);
    assert.equal(again.body.message_reference.message_id, here.body.id);
  });

  it('keeps replies (type 0) as they were', async () => {
    const source = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'reply to me' }));
    const reply = await ok(
      as(server, bob, 'POST', `/channels/${channelId}/messages`, {
        content: 'a reply',
        message_reference: { type: 0, message_id: source.id },
      }),
    );
    assert.equal(reply.type, 19);
    assert.equal(reply.referenced_message.id, source.id);
    assert.equal('message_snapshots' in reply, false);
    assert.equal(reply.flags, 0);
  });

  it('refuses sources the sender cannot read, unknown and system messages', async () => {
    const source = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'secret' }));
    const outsider = await registerUser(server);
    const outsiderGuild = await newGuild(server, outsider, 'Outsider');
    const noAccess = await forward(outsider, outsiderGuild.system_channel_id, {
      message_id: source.id,
      channel_id: channelId,
    });
    assert.equal(noAccess.status, 403);
    assert.equal(noAccess.body.code, 'MISSING_ACCESS');

    // A channel Bob sees but whose history he may not read.
    const hidden = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'no-history',
        permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: bits(P.READ_MESSAGE_HISTORY) }],
      }),
    );
    const there = await ok(as(server, owner, 'POST', `/channels/${hidden.id}/messages`, { content: 'x' }));
    const noHistory = await forward(bob, elsewhere.channelId, { message_id: there.id, channel_id: hidden.id });
    assert.equal(noHistory.status, 403);
    assert.equal(noHistory.body.code, 'MISSING_PERMISSIONS');

    const unseen = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/channels`, {
        name: 'staff',
        permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: bits(P.VIEW_CHANNEL) }],
      }),
    );
    const staff = await ok(as(server, owner, 'POST', `/channels/${unseen.id}/messages`, { content: 'x' }));
    const noView = await forward(bob, elsewhere.channelId, { message_id: staff.id, channel_id: unseen.id });
    assert.equal(noView.status, 403);
    assert.equal(noView.body.code, 'MISSING_ACCESS');

    // The source named with the wrong channel is unknown there.
    const wrongChannel = await forward(bob, elsewhere.channelId, {
      message_id: source.id,
      channel_id: guild.system_channel_id,
    });
    assert.equal(wrongChannel.status, 404);
    assert.equal(wrongChannel.body.code, 'UNKNOWN_MESSAGE');
    const unknown = await forward(bob, elsewhere.channelId, { message_id: '123456789', channel_id: channelId });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_MESSAGE');

    // The join notices in the system channel are system messages (type 7).
    const system = (await ok(as(server, bob, 'GET', `/channels/${guild.system_channel_id}/messages?limit=10`))).find(
      (x: any) => x.type === 7,
    );
    assert.ok(system, 'a join notice exists');
    const refused = await forward(bob, elsewhere.channelId, {
      message_id: system.id,
      channel_id: guild.system_channel_id,
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, {
      code: 'CANNOT_EXECUTE_ACTION_ON_SYSTEM_MESSAGE',
      message: 'Cannot execute action on a system message',
    });
  });

  it('refuses a forward with content of its own, and unknown reference types', async () => {
    const source = await ok(as(server, alice, 'POST', `/channels/${channelId}/messages`, { content: 'plain' }));
    const reference = { message_id: source.id, channel_id: channelId };
    const words = await forward(bob, elsewhere.channelId, reference, { content: 'my comment' });
    assertOnlyFormError(words, 'content', 'FORWARDED_MESSAGE_HAS_CONTENT');
    const both = await forward(bob, elsewhere.channelId, reference, {
      embeds: [{ title: 't' }],
      sticker_ids: ['1'],
    });
    assert.equal(both.status, 400);
    assert.deepEqual(
      both.body.errors.map((e: any) => [e.path, e.code]),
      [
        ['embeds', 'FORWARDED_MESSAGE_HAS_CONTENT'],
        ['sticker_ids', 'FORWARDED_MESSAGE_HAS_CONTENT'],
      ],
    );
    const badType = await forward(bob, elsewhere.channelId, { ...reference, type: 2 });
    assert.equal(badType.status, 400);
    assert.equal(badType.body.code, 'INVALID_FORM_BODY');
    assert.equal(badType.body.errors[0].path, 'message_reference.type');

    // Nothing was posted by the refusals.
    const recent = await ok(as(server, bob, 'GET', `/channels/${elsewhere.channelId}/messages?limit=1`));
    assert.notEqual(recent[0]?.message_reference?.message_id, source.id);

    // A forward is not edited into an ordinary message.
    const sent = await ok(forward(bob, elsewhere.channelId, reference));
    const edit = await as(server, bob, 'PATCH', `/channels/${elsewhere.channelId}/messages/${sent.id}`, {
      content: 'now with words',
    });
    assertOnlyFormError(edit, 'content', 'FORWARDED_MESSAGE_HAS_CONTENT');
    const suppressed = await ok(
      as(server, bob, 'PATCH', `/channels/${elsewhere.channelId}/messages/${sent.id}`, { flags: 4 }),
    );
    assert.equal(suppressed.flags, HAS_SNAPSHOT | 4);
    assert.equal(suppressed.message_snapshots[0].message.content, 'plain');
  });
});
