import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createApplication } from '../support/applications.ts';
import { as, bits, DispatchRecorder, guildWithMembers, ok, P } from '../support/chat.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: any;
let channelId: string;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  [alice, bob] = setup.members as [TestUser, TestUser];
  guild = setup.guild;
  channelId = setup.channelId;
});
after(async () => {
  events?.close();
  await server?.close();
});

const post = (user: TestUser, body: unknown, channel = channelId) =>
  as(server, user, 'POST', `/channels/${channel}/messages`, body);
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function freshChannel(extra: Record<string, unknown> = {}): Promise<string> {
  return (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'scratch', ...extra }))).id;
}

describe('sending messages', () => {
  it('creates a message, echoes the nonce and dispatches MESSAGE_CREATE with guild_id and member', async () => {
    events.clear();
    const res = await post(alice, { content: 'hello world', nonce: 'n-1', tts: false });
    assert.equal(res.status, 200);
    const m = res.body;
    assert.match(m.id, /^\d+$/);
    assert.equal(m.channel_id, channelId);
    assert.equal(m.author.id, alice.id);
    assert.equal(m.author.username, alice.username);
    assert.equal(m.type, 0);
    assert.equal(m.flags, 0);
    assert.equal(m.content, 'hello world');
    assert.match(m.timestamp, ISO_MS);
    assert.equal(m.edited_timestamp, null);
    assert.equal(m.pinned, false);
    assert.equal(m.mention_everyone, false);
    assert.equal(m.tts, false);
    for (const field of ['mentions', 'mention_roles', 'embeds', 'attachments', 'stickers'])
      assert.deepEqual(m[field], [], field);
    assert.equal(m.nonce, 'n-1');
    const created = events.one('MESSAGE_CREATE');
    assert.deepEqual(created.audience, { kind: 'channel', guildId: guild.id, channelId });
    assert.equal(created.payload.guild_id, guild.id);
    assert.equal(created.payload.id, m.id);
    assert.equal(created.payload.nonce, 'n-1');
    const member = created.payload.member as any;
    assert.ok(member && Array.isArray(member.roles));
    assert.match(member.joined_at, ISO_MS);
    const channel = await ok(as(server, alice, 'GET', `/channels/${channelId}`));
    assert.equal(channel.last_message_id, m.id);
    const numeric = await ok(post(alice, { content: 'int nonce', nonce: 12345 }));
    assert.equal(numeric.nonce, 12345);
  });

  it('refuses empty messages, oversized content and non-text channels', async () => {
    for (const body of [{}, { content: '' }, { content: '   ' }, { embeds: [] }]) {
      const res = await post(alice, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'CANNOT_SEND_EMPTY_MESSAGE');
    }
    const long = await post(alice, { content: 'x'.repeat(2001) });
    assert.equal(long.status, 400);
    assert.equal(long.body.code, 'INVALID_FORM_BODY');
    assert.equal(long.body.errors[0].path, 'content');
    assert.equal(long.body.errors[0].code, 'CONTENT_EXCEEDS_MAX_LENGTH');
    const voice = await freshChannel({ type: 2 });
    const category = await freshChannel({ type: 4 });
    for (const id of [voice, category]) {
      const res = await post(owner, { content: 'hi' }, id);
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL');
    }
    const unknown = await post(alice, { content: 'hi' }, '1234567890123');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_CHANNEL');
    const outsider = await registerUser(server);
    const denied = await post(outsider, { content: 'hi' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_ACCESS');
  });

  it('stores embeds (type rich) and refuses them without EMBED_LINKS', async () => {
    const m = await ok(
      post(alice, { embeds: [{ title: 'T', description: 'D', color: 255, fields: [{ name: 'a', value: 'b' }] }] }),
    );
    assert.deepEqual(m.embeds, [
      { type: 'rich', title: 'T', description: 'D', color: 255, fields: [{ name: 'a', value: 'b' }] },
    ]);
    const ch = await freshChannel({ permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.EMBED_LINKS) }] });
    const res = await post(alice, { content: 'x', embeds: [{ title: 'T' }] }, ch);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_PERMISSIONS');
    const tooMany = await post(alice, { embeds: Array.from({ length: 11 }, () => ({ title: 't' })) });
    assert.equal(tooMany.status, 400);
  });

  it('answers JSON attachment claims with UPLOADED_ATTACHMENT_NOT_FOUND until uploads exist', async () => {
    const res = await post(alice, {
      content: 'file',
      attachments: [{ id: '0', filename: 'a.png', upload_filename: 'nope' }],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].code, 'UPLOADED_ATTACHMENT_NOT_FOUND');
  });
});

describe('mentions and replies', () => {
  it('resolves user and role mentions, honouring allowed_mentions', async () => {
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'pingable', mentionable: true }),
    );
    const quiet = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'quiet' }));
    const m = await ok(
      post(alice, { content: `hi <@${bob.id}> <@!${owner.id}> <@&${role.id}> <@&${quiet.id}> <@999999999>` }),
    );
    assert.deepEqual(new Set(m.mentions.map((u: any) => u.id)), new Set([bob.id, owner.id]));
    assert.deepEqual(m.mention_roles, [role.id], 'an unmentionable role needs MENTION_EVERYONE');
    const byOwner = await ok(post(owner, { content: `<@&${quiet.id}>` }));
    assert.deepEqual(byOwner.mention_roles, [quiet.id]);
    const none = await ok(post(alice, { content: `<@${bob.id}> <@&${role.id}>`, allowed_mentions: { parse: [] } }));
    assert.deepEqual(none.mentions, []);
    assert.deepEqual(none.mention_roles, []);
    const listed = await ok(
      post(alice, { content: `<@${bob.id}> <@${owner.id}>`, allowed_mentions: { users: [bob.id] } }),
    );
    assert.deepEqual(
      listed.mentions.map((u: any) => u.id),
      [bob.id],
    );
  });

  it('pings @everyone only with MENTION_EVERYONE', async () => {
    assert.equal((await ok(post(alice, { content: 'hey @everyone' }))).mention_everyone, false);
    assert.equal((await ok(post(owner, { content: 'hey @everyone' }))).mention_everyone, true);
    assert.equal((await ok(post(owner, { content: 'hey @here' }))).mention_everyone, true);
    const muted = await ok(post(owner, { content: 'hey @everyone', allowed_mentions: { parse: ['users'] } }));
    assert.equal(muted.mention_everyone, false);
  });

  it('replies with type 19, message_reference and referenced_message, mentioning the replied author', async () => {
    const original = await ok(post(bob, { content: 'question?' }));
    const reply = await ok(post(alice, { content: 'answer', message_reference: { message_id: original.id } }));
    assert.equal(reply.type, 19);
    assert.deepEqual(reply.message_reference, { message_id: original.id, channel_id: channelId, guild_id: guild.id });
    assert.equal(reply.referenced_message.id, original.id);
    assert.equal(reply.referenced_message.content, 'question?');
    assert.deepEqual(
      reply.mentions.map((u: any) => u.id),
      [bob.id],
    );
    const silent = await ok(
      post(alice, { content: 'shh', message_reference: { message_id: original.id }, allowed_mentions: { parse: [] } }),
    );
    assert.deepEqual(silent.mentions, []);
    const missing = await post(alice, { content: 'x', message_reference: { message_id: '123456789' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_MESSAGE');
    const lenient = await ok(
      post(alice, { content: 'x', message_reference: { message_id: '123456789', fail_if_not_exists: false } }),
    );
    assert.equal(lenient.type, 0);
    const badId = await post(alice, { content: 'x', message_reference: { message_id: 'abc' } });
    assert.equal(badId.status, 400);
    assert.equal(badId.body.errors[0].code, 'INVALID_SNOWFLAKE_FORMAT');
  });
});

describe('reading messages', () => {
  let seeded: string[];
  let readChannel: string;
  before(async () => {
    readChannel = await freshChannel();
    const base = Date.parse('2024-01-01T00:00:00.000Z');
    const res = await harness(server, 'POST', '/messages/seed', {
      channel_id: readChannel,
      author_id: alice.id,
      messages: Array.from({ length: 10 }, (_, i) => ({
        timestamp: new Date(base + i * 60_000).toISOString(),
        content: `m${i}`,
      })),
    });
    assert.equal(res.status, 200);
    seeded = res.body.messages.map((m: any) => m.message_id);
    assert.equal(res.body.messages[3].timestamp, new Date(base + 3 * 60_000).toISOString());
  });

  it('seeds back-dated messages whose ids carry their timestamps', async () => {
    const one = await ok(as(server, alice, 'GET', `/channels/${readChannel}/messages/${seeded[3]}`));
    assert.equal(one.timestamp, '2024-01-01T00:03:00.000Z');
    assert.equal(one.content, 'm3');
  });

  it('lists newest first with the default limit of 50', async () => {
    const all = await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages`));
    assert.deepEqual(
      all.map((m: any) => m.id),
      [...seeded].reverse(),
    );
  });

  it('pages with before, after, around and limit', async () => {
    const ids = (list: any[]) => list.map((m: any) => m.content);
    assert.deepEqual(ids(await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages?limit=3`))), [
      'm9',
      'm8',
      'm7',
    ]);
    assert.deepEqual(
      ids(await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages?before=${seeded[5]}&limit=2`))),
      ['m4', 'm3'],
    );
    assert.deepEqual(
      ids(await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages?after=${seeded[5]}&limit=2`))),
      ['m7', 'm6'],
    );
    assert.deepEqual(
      ids(await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages?around=${seeded[5]}&limit=4`))),
      ['m7', 'm6', 'm5', 'm4'],
    );
    assert.deepEqual(
      ids(await ok(as(server, bob, 'GET', `/channels/${readChannel}/messages?around=${seeded[0]}&limit=1`))),
      ['m0'],
    );
  });

  it('refuses two cursors and out-of-range limits', async () => {
    const both = await as(
      server,
      bob,
      'GET',
      `/channels/${readChannel}/messages?before=${seeded[5]}&after=${seeded[1]}`,
    );
    assert.equal(both.status, 400);
    assert.equal(both.body.code, 'INVALID_FORM_BODY');
    assert.equal(both.body.errors[0].code, 'CANNOT_SPECIFY_BOTH_BEFORE_AND_AFTER');
    const around = await as(
      server,
      bob,
      'GET',
      `/channels/${readChannel}/messages?around=${seeded[5]}&after=${seeded[1]}`,
    );
    assert.equal(around.body.errors[0].code, 'CANNOT_SPECIFY_BOTH_BEFORE_AND_AFTER');
    for (const limit of ['0', '101', 'abc']) {
      const res = await as(server, bob, 'GET', `/channels/${readChannel}/messages?limit=${limit}`);
      assert.equal(res.status, 400, limit);
    }
    const badCursor = await as(server, bob, 'GET', `/channels/${readChannel}/messages?before=xyz`);
    assert.equal(badCursor.body.errors[0].code, 'INVALID_SNOWFLAKE_FORMAT');
  });

  it('needs READ_MESSAGE_HISTORY, and answers unknown messages with UNKNOWN_MESSAGE', async () => {
    const hidden = await freshChannel({
      permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.READ_MESSAGE_HISTORY) }],
    });
    const res = await as(server, bob, 'GET', `/channels/${hidden}/messages`);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'MISSING_PERMISSIONS');
    const unknown = await as(server, bob, 'GET', `/channels/${readChannel}/messages/1234567890`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_MESSAGE');
  });
});

describe('editing and deleting', () => {
  it('lets only the author edit, dispatching MESSAGE_UPDATE', async () => {
    const m = await ok(post(alice, { content: 'draft' }));
    const other = await as(server, owner, 'PATCH', `/channels/${channelId}/messages/${m.id}`, { content: 'hijack' });
    assert.equal(other.status, 403);
    assert.equal(other.body.code, 'CANNOT_EDIT_OTHER_USER_MESSAGE');
    events.clear();
    const edited = await ok(
      as(server, alice, 'PATCH', `/channels/${channelId}/messages/${m.id}`, { content: `final <@${bob.id}>` }),
    );
    assert.equal(edited.content, `final <@${bob.id}>`);
    assert.match(edited.edited_timestamp, ISO_MS);
    assert.deepEqual(
      edited.mentions.map((u: any) => u.id),
      [bob.id],
    );
    const update = events.one('MESSAGE_UPDATE');
    assert.equal(update.payload.guild_id, guild.id);
    assert.ok(update.payload.member);
    assert.deepEqual(update.audience, { kind: 'channel', guildId: guild.id, channelId });
    const empty = await as(server, alice, 'PATCH', `/channels/${channelId}/messages/${m.id}`, { content: '' });
    assert.equal(empty.body.code, 'CANNOT_SEND_EMPTY_MESSAGE');
    // An edit that changes nothing is refused and sends nothing; a flags-only edit (suppress embeds) goes through.
    events.clear();
    for (const body of [{}, { content: `final <@${bob.id}>` }]) {
      const same = await as(server, alice, 'PATCH', `/channels/${channelId}/messages/${m.id}`, body);
      assert.equal(same.status, 400, JSON.stringify(body));
      assert.deepEqual(same.body, { code: 'MESSAGE_EDIT_CHANGES_NOTHING', message: 'The edit changes nothing' });
    }
    assert.equal(events.seen.length, 0);
    const suppressed = await ok(as(server, alice, 'PATCH', `/channels/${channelId}/messages/${m.id}`, { flags: 4 }));
    assert.equal(suppressed.flags & 4, 4);
  });

  it('lets the author or MANAGE_MESSAGES delete, dispatching MESSAGE_DELETE', async () => {
    const m = await ok(post(alice, { content: 'oops' }));
    const byBob = await as(server, bob, 'DELETE', `/channels/${channelId}/messages/${m.id}`);
    assert.equal(byBob.status, 403);
    assert.equal(byBob.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal((await as(server, owner, 'DELETE', `/channels/${channelId}/messages/${m.id}`)).status, 204);
    assert.deepEqual(events.one('MESSAGE_DELETE').payload, { id: m.id, channel_id: channelId, guild_id: guild.id });
    const mine = await ok(post(bob, { content: 'mine' }));
    assert.equal((await as(server, bob, 'DELETE', `/channels/${channelId}/messages/${mine.id}`)).status, 204);
    assert.equal(
      (await as(server, bob, 'GET', `/channels/${channelId}/messages/${mine.id}`)).body.code,
      'UNKNOWN_MESSAGE',
    );
  });

  it('bulk deletes 2 to 100 messages with MANAGE_MESSAGES', async () => {
    const a = await ok(post(alice, { content: 'a' }));
    const b = await ok(post(alice, { content: 'b' }));
    const denied = await as(server, alice, 'POST', `/channels/${channelId}/messages/bulk-delete`, {
      message_ids: [a.id, b.id],
    });
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    const one = await as(server, owner, 'POST', `/channels/${channelId}/messages/bulk-delete`, { message_ids: [a.id] });
    assert.equal(one.status, 400);
    assert.equal(one.body.errors[0].path, 'message_ids');
    events.clear();
    const res = await as(server, owner, 'POST', `/channels/${channelId}/messages/bulk-delete`, {
      messages: [a.id, b.id],
    });
    assert.equal(res.status, 204);
    const bulk = events.one('MESSAGE_DELETE_BULK');
    assert.deepEqual(new Set(bulk.payload.ids as string[]), new Set([a.id, b.id]));
    assert.equal(bulk.payload.channel_id, channelId);
  });
});

describe('reactions', () => {
  it('adds, lists and removes reactions with the right events', async () => {
    const m = await ok(post(alice, { content: 'react to me' }));
    const thumbs = encodeURIComponent('👍');
    events.clear();
    assert.equal(
      (await as(server, bob, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}/@me`)).status,
      204,
    );
    const add = events.one('MESSAGE_REACTION_ADD');
    assert.equal(add.payload.user_id, bob.id);
    assert.equal(add.payload.message_id, m.id);
    assert.equal(add.payload.guild_id, guild.id);
    assert.deepEqual(add.payload.emoji, { id: null, name: '👍' });
    assert.equal((add.payload.member as any).user.id, bob.id);
    await ok(as(server, alice, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}/@me`), 204);
    // A custom emoji reaction names one of the guild's emojis (`name:id`).
    const png = await sharp({ create: { width: 8, height: 8, channels: 4, background: '#ff8800' } })
      .png()
      .toBuffer();
    const party = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, {
        name: 'party',
        image: `data:image/png;base64,${png.toString('base64')}`,
      }),
    );
    await ok(as(server, alice, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/party:${party.id}/@me`), 204);
    const read = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/${m.id}`));
    assert.deepEqual(read.reactions, [
      { emoji: { id: null, name: '👍' }, count: 2, me: true },
      { emoji: { id: party.id, name: 'party', animated: false }, count: 1, me: false },
    ]);
    const users = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}`));
    assert.deepEqual(new Set(users.map((u: any) => u.id)), new Set([alice.id, bob.id]));
    const limited = await ok(
      as(server, bob, 'GET', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}?limit=1`),
    );
    assert.equal(limited.length, 1);

    const others = await as(
      server,
      bob,
      'DELETE',
      `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}/${alice.id}`,
    );
    assert.equal(others.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal(
      (await as(server, bob, 'DELETE', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}/@me`)).status,
      204,
    );
    assert.equal(events.one('MESSAGE_REACTION_REMOVE').payload.user_id, bob.id);
    assert.equal(
      (await as(server, owner, 'DELETE', `/channels/${channelId}/messages/${m.id}/reactions/${thumbs}`)).status,
      204,
    );
    assert.deepEqual(events.one('MESSAGE_REACTION_REMOVE_EMOJI').payload.emoji, { id: null, name: '👍' });
    assert.equal((await as(server, owner, 'DELETE', `/channels/${channelId}/messages/${m.id}/reactions`)).status, 204);
    assert.equal(events.one('MESSAGE_REACTION_REMOVE_ALL').payload.message_id, m.id);
    const after = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/${m.id}`));
    assert.equal(after.reactions, undefined);
  });

  it('rejects text that is not an emoji, and caps distinct emojis at 20', async () => {
    const m = await ok(post(alice, { content: 'many' }));
    const bad = await as(server, bob, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/hello/@me`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'UNKNOWN_EMOJI');
    const emoji = (i: number) => encodeURIComponent(String.fromCodePoint(0x1f600 + i));
    for (let i = 0; i < 20; i++)
      await ok(as(server, bob, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/${emoji(i)}/@me`), 204);
    const over = await as(server, bob, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/${emoji(20)}/@me`);
    assert.equal(over.status, 400);
    assert.equal(over.body.code, 'MAX_REACTIONS');
    assert.equal(
      (await as(server, alice, 'PUT', `/channels/${channelId}/messages/${m.id}/reactions/${emoji(1)}/@me`)).status,
      204,
    );
  });

  it('needs ADD_REACTIONS for a new emoji but not to join an existing one', async () => {
    const ch = await freshChannel({ permission_overwrites: [{ id: guild.id, type: 0, deny: bits(P.ADD_REACTIONS) }] });
    const m = await ok(post(owner, { content: 'x' }, ch));
    const fresh = await as(
      server,
      bob,
      'PUT',
      `/channels/${ch}/messages/${m.id}/reactions/${encodeURIComponent('🔥')}/@me`,
    );
    assert.equal(fresh.body.code, 'MISSING_PERMISSIONS');
    await ok(
      as(server, owner, 'PUT', `/channels/${ch}/messages/${m.id}/reactions/${encodeURIComponent('🔥')}/@me`),
      204,
    );
    assert.equal(
      (await as(server, bob, 'PUT', `/channels/${ch}/messages/${m.id}/reactions/${encodeURIComponent('🔥')}/@me`))
        .status,
      204,
    );
  });
});

describe('pins, typing and acks', () => {
  it('pins with PIN_MESSAGES and lists pins newest first', async () => {
    const a = await ok(post(alice, { content: 'pin a' }));
    const b = await ok(post(alice, { content: 'pin b' }));
    const denied = await as(server, alice, 'PUT', `/channels/${channelId}/pins/${a.id}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal((await as(server, owner, 'PUT', `/channels/${channelId}/pins/${a.id}`)).status, 204);
    const update = events.one('CHANNEL_PINS_UPDATE');
    assert.equal(update.payload.channel_id, channelId);
    assert.equal(update.payload.guild_id, guild.id);
    assert.match(update.payload.last_pin_timestamp as string, ISO_MS);
    await new Promise((r) => setTimeout(r, 5));
    await ok(as(server, owner, 'PUT', `/channels/${channelId}/pins/${b.id}`), 204);
    await ok(as(server, owner, 'PUT', `/channels/${channelId}/pins/${b.id}`), 204);
    const pins = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/pins`));
    assert.equal(pins.has_more, false);
    assert.deepEqual(
      pins.items.map((i: any) => i.message.id),
      [b.id, a.id],
    );
    assert.equal(pins.items[0].message.pinned, true);
    assert.match(pins.items[0].pinned_at, ISO_MS);
    const page = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/pins?limit=1`));
    assert.equal(page.has_more, true);
    const older = await ok(
      as(
        server,
        bob,
        'GET',
        `/channels/${channelId}/messages/pins?before=${encodeURIComponent(page.items[0].pinned_at)}`,
      ),
    );
    assert.deepEqual(
      older.items.map((i: any) => i.message.id),
      [a.id],
    );
    const legacy = await ok(as(server, bob, 'GET', `/channels/${channelId}/pins`));
    assert.deepEqual(
      legacy.map((m: any) => m.id),
      [b.id, a.id],
    );
    assert.equal((await as(server, owner, 'DELETE', `/channels/${channelId}/pins/${a.id}`)).status, 204);
    const left = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/pins`));
    assert.deepEqual(
      left.items.map((i: any) => i.message.id),
      [b.id],
    );
    // Without READ_MESSAGE_HISTORY the pins are not refused but empty, on both routes.
    await ok(
      as(server, owner, 'PUT', `/channels/${channelId}/permissions/${bob.id}`, {
        type: 1,
        allow: '0',
        deny: bits(P.READ_MESSAGE_HISTORY),
      }),
      204,
    );
    assert.deepEqual(await ok(as(server, bob, 'GET', `/channels/${channelId}/messages/pins`)), {
      items: [],
      has_more: false,
    });
    assert.deepEqual(await ok(as(server, bob, 'GET', `/channels/${channelId}/pins`)), []);
    await ok(as(server, owner, 'DELETE', `/channels/${channelId}/permissions/${bob.id}`), 204);
  });

  it('dispatches TYPING_START with Unix seconds', async () => {
    events.clear();
    const before = Math.floor(Date.now() / 1000);
    assert.equal((await as(server, bob, 'POST', `/channels/${channelId}/typing`)).status, 204);
    const typing = events.one('TYPING_START');
    assert.deepEqual(typing.audience, { kind: 'channel', guildId: guild.id, channelId });
    assert.equal(typing.payload.user_id, bob.id);
    assert.equal(typing.payload.channel_id, channelId);
    assert.equal(typing.payload.guild_id, guild.id);
    const ts = typing.payload.timestamp as number;
    assert.ok(Number.isInteger(ts) && ts >= before && ts <= before + 5);
    assert.equal((typing.payload.member as any).user.id, bob.id);
  });

  it('acks a message for users only', async () => {
    const m = await ok(post(alice, { content: 'read me' }));
    events.clear();
    const acked = await as(server, bob, 'POST', `/channels/${channelId}/messages/${m.id}/ack`, {});
    assert.equal(acked.status, 200);
    assert.deepEqual(acked.body, { token: null });
    const ack = events.one('MESSAGE_ACK');
    assert.deepEqual(ack.audience, { kind: 'users', userIds: [bob.id] });
    const { version, ...rest } = ack.payload;
    assert.deepEqual(rest, { channel_id: channelId, message_id: m.id, mention_count: 0 });
    assert.equal(typeof version, 'number');
    const app = await createApplication(server, owner);
    const bot = await as(
      server,
      { auth: `Bot ${app.botToken}` },
      'POST',
      `/channels/${channelId}/messages/${m.id}/ack`,
      {},
    );
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'ACCESS_DENIED');
  });
});

describe('slowmode', () => {
  it('limits members to one message per interval; moderators are exempt', async () => {
    const ch = await freshChannel({ rate_limit_per_user: 30 });
    await ok(post(alice, { content: 'one' }, ch));
    const second = await post(alice, { content: 'two' }, ch);
    assert.equal(second.status, 400);
    assert.equal(second.body.code, 'SLOWMODE_RATE_LIMITED');
    assert.ok(second.body.retry_after > 0 && second.body.retry_after <= 30);
    await ok(post(owner, { content: 'one' }, ch));
    await ok(post(owner, { content: 'two' }, ch));
  });
});

describe('bad input', () => {
  it('answers malformed bodies, queries and path segments with a 4xx code, never a 500', async () => {
    const m = await ok(post(alice, { content: 'target' }));
    const cases: [string, string, unknown][] = [
      ['POST', `/channels/${channelId}/messages`, null],
      ['POST', `/channels/${channelId}/messages`, []],
      ['POST', `/channels/${channelId}/messages`, 'text'],
      ['POST', `/channels/${channelId}/messages`, { content: 5 }],
      ['POST', `/channels/${channelId}/messages`, { content: 'x', nonce: { a: 1 } }],
      ['POST', `/channels/${channelId}/messages`, { content: 'x', allowed_mentions: { parse: ['nobody'] } }],
      [
        'POST',
        `/channels/${channelId}/messages`,
        { content: 'x', message_reference: { message_id: '99999999999999999999999' } },
      ],
      ['POST', `/channels/${channelId}/messages`, { embeds: [{ title: 'x'.repeat(300) }] }],
      ['PATCH', `/channels/${channelId}/messages/${m.id}`, { content: ['a'] }],
      ['GET', `/channels/${channelId}/messages?limit=1.5`, undefined],
      ['GET', `/channels/${channelId}/messages?around=-1`, undefined],
      ['GET', `/channels/${channelId}/messages/${'9'.repeat(30)}`, undefined],
      ['PUT', `/channels/${channelId}/messages/${m.id}/reactions/%E0%A4%A/@me`, undefined],
      ['PUT', `/channels/${channelId}/messages/${m.id}/reactions/${'x'.repeat(200)}/@me`, undefined],
      ['PUT', `/channels/${channelId}/permissions/${guild.id}`, { type: 0, allow: '1'.repeat(25) }],
      ['PUT', `/channels/${channelId}/permissions/${guild.id}`, { type: 0, allow: -1 }],
      ['POST', `/guilds/${guild.id}/roles`, { permissions: 'lots' }],
      ['PATCH', `/guilds/${guild.id}/members/@me`, { communication_disabled_until: 'tomorrow' }],
      ['PATCH', `/guilds/${guild.id}/channels`, { id: channelId }],
      ['PUT', `/guilds/${guild.id}/bans/${bob.id}`, { delete_message_seconds: 'x' }],
      ['POST', '/users/@me/channels', { recipients: 'everyone' }],
      ['GET', `/channels/${channelId}/messages/pins?before=yesterday`, undefined],
    ];
    for (const [method, path, body] of cases) {
      const res = await as(server, owner, method, path, body);
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path} -> ${res.status} ${res.text}`);
      assert.equal(typeof res.body.code, 'string');
    }
  });
});
