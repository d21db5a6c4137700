import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { createApplication } from '../support/applications.ts';
import { as, bits, guildWithMembers, join, ok, P } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const NEVER = '1970-01-01T00:00:00.000Z';

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let outsider: TestUser;
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
  outsider = await registerUser(server);
});
after(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server?.close();
});

async function connect(user: TestUser): Promise<{ client: GatewayClient; ready: any }> {
  const { client, ready } = await readyClient(server, user.token);
  sockets.push(client);
  return { client, ready: ready.d };
}

/** The user's READY `read_state`, from a fresh session. */
async function readState(user: TestUser): Promise<any> {
  const { client, ready } = await readyClient(server, user.token);
  await client.close();
  return ready.d.read_state;
}

async function entry(user: TestUser, channelId: string): Promise<any> {
  return (await readState(user)).entries.find((e: any) => e.id === channelId);
}

const post = (user: TestUser, channelId: string, body: Record<string, unknown>) =>
  ok(as(server, user, 'POST', `/channels/${channelId}/messages`, body));

async function freshChannel(extra: Record<string, unknown> = {}): Promise<string> {
  return (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'scratch', ...extra }))).id;
}

describe('READY read_state', () => {
  it('is the versioned object of the established format, empty for a new account', async () => {
    const user = await registerUser(server);
    const { ready } = await connect(user);
    assert.deepEqual(ready.read_state, { version: 0, partial: false, entries: [] });
    assert.equal('read_states' in ready, false);
  });

  it('a bot gets an empty read state', async () => {
    const app = await createApplication(server, owner);
    const { client, ready } = await readyClient(server, `Bot ${app.botToken}`);
    await client.close();
    assert.deepEqual(ready.d.read_state, { version: 0, partial: false, entries: [] });
  });
});

describe('mention counts', () => {
  it('counts direct, @everyone and role mentions for the pinged viewers, and a sent message acks the channel for its author', async () => {
    const channel = await freshChannel();
    const role = await ok(
      as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'pingable', mentionable: true }),
    );
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${bob.id}/roles/${role.id}`), 204);

    const first = await post(alice, channel, { content: `hi <@${bob.id}>` });
    const aliceEntry = await entry(alice, channel);
    assert.deepEqual(aliceEntry, {
      id: channel,
      last_message_id: first.id,
      mention_count: 0,
      last_pin_timestamp: NEVER,
      flags: 1,
    });
    assert.deepEqual(await entry(bob, channel), {
      id: channel,
      last_message_id: '0',
      mention_count: 1,
      last_pin_timestamp: NEVER,
      flags: 1,
    });
    // Owner holds MENTION_EVERYONE: @everyone pings bob and alice.
    await post(owner, channel, { content: '@everyone look' });
    await post(alice, channel, { content: `<@&${role.id}> role ping` });
    // No ping: plain text, a suppressed mention, an @everyone without MENTION_EVERYONE, a self-mention.
    await post(alice, channel, { content: 'nothing here' });
    await post(alice, channel, { content: `<@${bob.id}>`, allowed_mentions: { parse: [] } });
    await post(alice, channel, { content: '@everyone from alice' });
    await post(bob, channel, { content: `note to <@${bob.id}>` });
    const bobEntry = await entry(bob, channel);
    // bob's own message acked the channel for him: his count restarted at 0.
    assert.equal(bobEntry.mention_count, 0);
    const last = await post(alice, channel, { content: `<@${bob.id}> again` });
    assert.equal((await entry(bob, channel)).mention_count, 1);
    const aliceAfter = await entry(alice, channel);
    assert.equal(aliceAfter.last_message_id, last.id);
    // Alice was pinged by the owner's @everyone, then acked by her own later messages.
    assert.equal(aliceAfter.mention_count, 0);
    const ownerEntry = await entry(owner, channel);
    assert.equal(ownerEntry.mention_count, 0);
  });

  it('counts role and @everyone pings before any ack of the pinged user', async () => {
    const channel = await freshChannel();
    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'r2', mentionable: true }));
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${bob.id}/roles/${role.id}`), 204);
    await post(owner, channel, { content: '@everyone folks' });
    await post(alice, channel, { content: `<@&${role.id}>` });
    await post(alice, channel, { content: `<@${bob.id}> <@&${role.id}>` });
    assert.equal((await entry(bob, channel)).mention_count, 3);
    assert.equal((await entry(alice, channel)).mention_count, 0);
  });

  it('@here counts for the viewers online when it is sent; @everyone for all', async () => {
    const channel = await freshChannel();
    const ownerGw = await connect(owner);
    const bobGw = await connect(bob);
    await ownerGw.client.next((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id && f.d.status === 'online');
    await post(owner, channel, { content: '@here online people' });
    assert.equal((await entry(bob, channel)).mention_count, 1);
    assert.equal(await entry(alice, channel), undefined);
    // Named people are pinged online or not; @everyone with @here pings everyone.
    await post(owner, channel, { content: `@here and <@${alice.id}>` });
    assert.equal((await entry(alice, channel)).mention_count, 1);
    await post(owner, channel, { content: '@here @everyone' });
    assert.equal((await entry(alice, channel)).mention_count, 2);
    assert.equal((await entry(bob, channel)).mention_count, 3);
    await bobGw.client.close();
    await ownerGw.client.close();
  });

  it('counts nothing for members who cannot view the channel', async () => {
    const hidden = await freshChannel({
      permission_overwrites: [{ id: bob.id, type: 1, deny: bits(P.VIEW_CHANNEL) }],
    });
    await post(owner, hidden, { content: `@everyone and <@${bob.id}>` });
    assert.equal(await entry(bob, hidden), undefined);
    assert.equal((await entry(alice, hidden)).mention_count, 1);
  });

  it('in a DM every message of the other person counts', async () => {
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    await post(alice, dm.id, { content: 'one' });
    await post(alice, dm.id, { content: 'two' });
    const bobDm = await entry(bob, dm.id);
    assert.equal(bobDm.mention_count, 2);
    assert.equal(bobDm.flags, 0);
    assert.equal((await entry(alice, dm.id)).mention_count, 0);
  });
});

describe('mention counts in threads', () => {
  it('a public thread counts for the parent viewers; a private one for its members and those the mention adds', async () => {
    const carol = await registerUser(server);
    await join(server, owner, carol, guild);
    const parent = await freshChannel();
    const pub = await ok(as(server, alice, 'POST', `/channels/${parent}/threads`, { name: 'pub', type: 11 }));
    await post(alice, pub.id, { content: `<@${bob.id}> in a thread` });
    assert.deepEqual(await entry(bob, pub.id), {
      id: pub.id,
      last_message_id: '0',
      mention_count: 1,
      last_pin_timestamp: NEVER,
      flags: 3,
    });

    const closed = await ok(
      as(server, alice, 'POST', `/channels/${parent}/threads`, { name: 'closed', type: 12, invitable: false }),
    );
    await ok(as(server, alice, 'PUT', `/channels/${closed.id}/thread-members/${bob.id}`), 204);
    // A plain member's mention does not add carol to a non-invitable private thread: nothing counts for her.
    await post(bob, closed.id, { content: `<@${carol.id}> hello` });
    assert.equal(await entry(carol, closed.id), undefined);
    // @everyone there pings the thread's members only.
    await post(owner, closed.id, { content: '@everyone inside' });
    assert.equal(await entry(carol, closed.id), undefined);
    assert.equal((await entry(alice, closed.id)).mention_count, 1);
    assert.equal((await entry(bob, closed.id)).mention_count, 1);
    // The thread's owner can add carol by a mention, and that mention counts.
    await post(alice, closed.id, { content: `<@${carol.id}> come in` });
    assert.equal((await entry(carol, closed.id)).mention_count, 1);
  });
});

describe('acks', () => {
  let channel: string;
  let ids: string[];
  before(async () => {
    channel = await freshChannel();
    ids = [];
    ids.push((await post(alice, channel, { content: 'plain' })).id);
    ids.push((await post(alice, channel, { content: `<@${bob.id}> one` })).id);
    ids.push((await post(alice, channel, { content: 'plain again' })).id);
    ids.push((await post(alice, channel, { content: `<@${bob.id}> two` })).id);
  });

  it("READY's guild channels carry their newest message id, also for a message sent since the last READY", async () => {
    // The first READY loads the guild into the gateway's cache; a message after it must still be the channel's
    // last_message_id in the next READY, or a client compares its read marker with an old id and shows no unread.
    const first = await connect(alice);
    const channelOf = (ready: any) =>
      ready.guilds.find((g: any) => g.id === guild.id)?.channels.find((c: any) => c.id === general);
    assert.ok(channelOf(first.ready), 'the channel is in READY');
    const sent = await ok(
      as(server, bob, 'POST', `/channels/${general}/messages`, { content: 'after the first READY' }),
    );
    const again = await connect(alice);
    assert.equal(channelOf(again.ready).last_message_id, sent.id);
    await first.client.close();
    await again.client.close();
  });

  it('acks the channel: {token: null}, MESSAGE_ACK to every session of the acker and nobody else, READY shows the entry', async () => {
    const bob1 = await connect(bob);
    const bob2 = await connect(bob);
    const aliceGw = await connect(alice);
    assert.equal((await entry(bob, channel)).mention_count, 2);
    const res = await as(server, bob, 'POST', `/channels/${channel}/messages/${ids[3]}/ack`, { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { token: null });
    const expected = { channel_id: channel, message_id: ids[3], mention_count: 0 };
    for (const { client } of [bob1, bob2]) {
      const ack = await client.dispatch('MESSAGE_ACK');
      assert.deepEqual({ ...ack.d, version: undefined }, { ...expected, version: undefined });
      assert.equal(typeof ack.d.version, 'number');
      assert.ok(ack.d.version >= 1);
    }
    assert.ok(await aliceGw.client.nothing((f) => f.t === 'MESSAGE_ACK'));
    const state = await readState(bob);
    const bobEntry = state.entries.find((e: any) => e.id === channel);
    assert.deepEqual(bobEntry, {
      id: channel,
      last_message_id: ids[3],
      mention_count: 0,
      last_pin_timestamp: NEVER,
      flags: 1,
    });
    assert.ok(state.version >= 1);
  });

  it('an empty body is an ack too; a plain ack of an older message never moves the marker back', async () => {
    const res = await as(server, bob, 'POST', `/channels/${channel}/messages/${ids[0]}/ack`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { token: null });
    const bobEntry = await entry(bob, channel);
    assert.equal(bobEntry.last_message_id, ids[3]);
    assert.equal(bobEntry.mention_count, 0);
  });

  it('a manual ack (mark unread) moves the marker back and recounts the mentions after it, or keeps the count given', async () => {
    const bobGw = await connect(bob);
    const res = await ok(
      as(server, bob, 'POST', `/channels/${channel}/messages/${ids[0]}/ack`, { manual: true, token: null }),
    );
    assert.deepEqual(res, { token: null });
    const ack = await bobGw.client.dispatch('MESSAGE_ACK');
    assert.equal(ack.d.message_id, ids[0]);
    assert.equal(ack.d.mention_count, 2);
    assert.equal(ack.d.manual, true);
    let bobEntry = await entry(bob, channel);
    assert.equal(bobEntry.last_message_id, ids[0]);
    assert.equal(bobEntry.mention_count, 2);
    await ok(
      as(server, bob, 'POST', `/channels/${channel}/messages/${ids[2]}/ack`, { manual: true, mention_count: 5 }),
    );
    bobEntry = await entry(bob, channel);
    assert.equal(bobEntry.last_message_id, ids[2]);
    assert.equal(bobEntry.mention_count, 5);
    // A plain ack recounts: one mention after ids[2].
    await ok(as(server, bob, 'POST', `/channels/${channel}/messages/${ids[2]}/ack`, {}));
    assert.equal((await entry(bob, channel)).mention_count, 1);
    // mention_count without manual is ignored.
    await ok(as(server, bob, 'POST', `/channels/${channel}/messages/${ids[3]}/ack`, { mention_count: 7 }));
    assert.equal((await entry(bob, channel)).mention_count, 0);
  });

  it('a message deleted after it was seen can still be acked', async () => {
    const gone = await post(alice, channel, { content: 'soon gone' });
    await ok(as(server, alice, 'DELETE', `/channels/${channel}/messages/${gone.id}`), 204);
    const res = await ok(as(server, bob, 'POST', `/channels/${channel}/messages/${gone.id}/ack`, {}));
    assert.deepEqual(res, { token: null });
    const bobEntry = await entry(bob, channel);
    assert.equal(bobEntry.last_message_id, gone.id);
    assert.equal(bobEntry.mention_count, 0);
  });

  it('refuses what other channel routes refuse, with their codes', async () => {
    const hidden = await freshChannel({ permission_overwrites: [{ id: bob.id, type: 1, deny: bits(P.VIEW_CHANNEL) }] });
    const secret = await post(owner, hidden, { content: 'secret' });
    const cases: [TestUser, string, number, string][] = [
      [bob, `/channels/${hidden}/messages/${secret.id}/ack`, 403, 'MISSING_ACCESS'],
      [outsider, `/channels/${channel}/messages/${ids[0]}/ack`, 403, 'MISSING_ACCESS'],
      [bob, `/channels/123456789012345678/messages/${ids[0]}/ack`, 404, 'UNKNOWN_CHANNEL'],
      [bob, `/channels/not-an-id/messages/${ids[0]}/ack`, 404, 'UNKNOWN_CHANNEL'],
      [bob, `/channels/${channel}/messages/9223372036854775807/ack`, 404, 'UNKNOWN_MESSAGE'],
      [bob, `/channels/${channel}/messages/${secret.id}/ack`, 404, 'UNKNOWN_MESSAGE'],
      [bob, `/channels/${hidden}/messages/${secret.id}/ack`, 403, 'MISSING_ACCESS'],
      [bob, `/channels/${channel}/messages/xyz/ack`, 404, 'UNKNOWN_MESSAGE'],
    ];
    for (const [user, path, status, code] of cases) {
      const res = await as(server, user, 'POST', path, {});
      assert.equal(res.status, status, path);
      assert.equal(res.body.code, code, path);
    }
    for (const body of [{ manual: 'yes' }, { manual: true, mention_count: -1 }, { token: 5 }]) {
      const res = await as(server, bob, 'POST', `/channels/${channel}/messages/${ids[0]}/ack`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
    }
    for (const [user, path, status, code] of [
      [bob, `/channels/${hidden}/messages/ack`, 403, 'MISSING_ACCESS'],
      [bob, '/channels/not-an-id/messages/ack', 404, 'UNKNOWN_CHANNEL'],
      [bob, `/channels/${hidden}/pins/ack`, 403, 'MISSING_ACCESS'],
      [bob, '/channels/123456789012345678/pins/ack', 404, 'UNKNOWN_CHANNEL'],
    ] as [TestUser, string, number, string][]) {
      const res = await as(server, user, path.endsWith('messages/ack') ? 'DELETE' : 'POST', path);
      assert.equal(res.status, status, path);
      assert.equal(res.body.code, code, path);
    }
  });

  it('is for people: a bot token gets 403 ACCESS_DENIED', async () => {
    const app = await createApplication(server, owner);
    const bot = { auth: `Bot ${app.botToken}` };
    for (const [method, path] of [
      ['POST', `/channels/${channel}/messages/${ids[0]}/ack`],
      ['DELETE', `/channels/${channel}/messages/ack`],
      ['POST', `/channels/${channel}/pins/ack`],
      ['GET', '/users/@me/mentions'],
    ] as const) {
      const res = await as(server, bot, method, path);
      assert.equal(res.status, 403, path);
      assert.equal(res.body.code, 'ACCESS_DENIED', path);
    }
  });

  it('DELETE /channels/{id}/messages/ack forgets the read state (204, idempotent)', async () => {
    assert.ok(await entry(bob, channel));
    assert.equal((await as(server, bob, 'DELETE', `/channels/${channel}/messages/ack`)).status, 204);
    assert.equal(await entry(bob, channel), undefined);
    assert.equal((await as(server, bob, 'DELETE', `/channels/${channel}/messages/ack`)).status, 204);
  });

  it('pins ack records the channel’s last pin time and sends CHANNEL_PINS_ACK to the acker', async () => {
    const bobGw = await connect(bob);
    const aliceGw = await connect(alice);
    await ok(as(server, owner, 'PUT', `/channels/${channel}/pins/${ids[1]}`), 204);
    const pinned = await ok(as(server, bob, 'GET', `/channels/${channel}`));
    assert.ok(pinned.last_pin_timestamp);
    const res = await as(server, bob, 'POST', `/channels/${channel}/pins/ack`);
    assert.equal(res.status, 204);
    const ack = await bobGw.client.dispatch('CHANNEL_PINS_ACK');
    assert.equal(ack.d.channel_id, channel);
    assert.equal(ack.d.timestamp, pinned.last_pin_timestamp);
    assert.equal(typeof ack.d.version, 'number');
    assert.ok(await aliceGw.client.nothing((f) => f.t === 'CHANNEL_PINS_ACK'));
    const bobEntry = await entry(bob, channel);
    assert.equal(bobEntry.last_pin_timestamp, pinned.last_pin_timestamp);
    assert.equal(bobEntry.last_message_id, '0');
  });

  it('READY leaves out channels of a guild the user has left', async () => {
    const leaver = await registerUser(server);
    const invite = await ok(as(server, owner, 'POST', `/channels/${general}/invites`, { unique: true }));
    await ok(as(server, leaver, 'POST', `/invites/${invite.code}`));
    await post(alice, general, { content: `<@${leaver.id}>` });
    assert.equal((await entry(leaver, general)).mention_count, 1);
    await ok(as(server, leaver, 'DELETE', `/users/@me/guilds/${guild.id}`), 204);
    assert.deepEqual((await readState(leaver)).entries, []);
  });
});

describe('mentions inbox', () => {
  let inboxUser: TestUser;
  let channel: string;
  let role: any;
  const sent: Record<string, string> = {};
  before(async () => {
    inboxUser = await registerUser(server);
    const invite = await ok(as(server, owner, 'POST', `/channels/${general}/invites`, { unique: true }));
    await ok(as(server, inboxUser, 'POST', `/invites/${invite.code}`));
    channel = await freshChannel();
    role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'inbox', mentionable: true }));
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${inboxUser.id}/roles/${role.id}`), 204);
    sent.direct = (await post(alice, channel, { content: `hey <@${inboxUser.id}>` })).id;
    sent.plain = (await post(alice, channel, { content: 'not for you' })).id;
    sent.everyone = (await post(owner, channel, { content: '@everyone news' })).id;
    sent.role = (await post(alice, channel, { content: `<@&${role.id}> team` })).id;
    sent.own = (await post(inboxUser, channel, { content: `me <@${inboxUser.id}>` })).id;
  });

  const inbox = async (query = '') => ok(as(server, inboxUser, 'GET', `/users/@me/mentions${query}`));
  const idsOf = (list: any[]) => list.map((m) => m.id);

  it('lists the messages that pinged the user, newest first, as message objects with guild_id', async () => {
    const list = await inbox();
    assert.deepEqual(idsOf(list), [sent.role, sent.everyone, sent.direct]);
    const direct = list[2];
    assert.equal(direct.channel_id, channel);
    assert.equal(direct.guild_id, guild.id);
    assert.equal(direct.author.id, alice.id);
    assert.equal(direct.content, `hey <@${inboxUser.id}>`);
    assert.deepEqual(
      direct.mentions.map((u: any) => u.id),
      [inboxUser.id],
    );
    assert.deepEqual(list[0].mention_roles, [role.id]);
    assert.equal(list[1].mention_everyone, true);
  });

  it('filters by roles, everyone, guild, before and limit', async () => {
    assert.deepEqual(idsOf(await inbox('?roles=false')), [sent.everyone, sent.direct]);
    assert.deepEqual(idsOf(await inbox('?everyone=false&roles=false')), [sent.direct]);
    assert.deepEqual(idsOf(await inbox('?everyone=0')), [sent.role, sent.direct]);
    assert.deepEqual(idsOf(await inbox(`?guild_id=${guild.id}&limit=2`)), [sent.role, sent.everyone]);
    assert.deepEqual(idsOf(await inbox(`?before=${sent.everyone}`)), [sent.direct]);
    assert.deepEqual(await inbox('?guild_id=123456789012345678'), []);
  });

  it('includes DMs that name the user', async () => {
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: inboxUser.id }));
    const named = await post(alice, dm.id, { content: `<@${inboxUser.id}> psst` });
    await post(alice, dm.id, { content: 'unnamed' });
    const list = await inbox();
    assert.equal(list[0].id, named.id);
    assert.equal('guild_id' in list[0], false);
    assert.deepEqual(idsOf(list).slice(1), [sent.role, sent.everyone, sent.direct]);
  });

  it('leaves out channels the user can no longer view or read, and guilds they left', async () => {
    const other = await freshChannel();
    const hiddenLater = (await post(alice, other, { content: `<@${inboxUser.id}> soon hidden` })).id;
    assert.equal((await inbox())[0].id, hiddenLater);
    await ok(
      as(server, owner, 'PUT', `/channels/${other}/permissions/${inboxUser.id}`, {
        type: 1,
        deny: bits(P.VIEW_CHANNEL),
      }),
      204,
    );
    assert.equal(idsOf(await inbox()).includes(hiddenLater), false);
    await ok(
      as(server, owner, 'PUT', `/channels/${other}/permissions/${inboxUser.id}`, {
        type: 1,
        deny: bits(P.READ_MESSAGE_HISTORY),
      }),
      204,
    );
    assert.equal(idsOf(await inbox()).includes(hiddenLater), false);
    await ok(as(server, owner, 'DELETE', `/channels/${other}/permissions/${inboxUser.id}`), 204);
    assert.equal((await inbox())[0].id, hiddenLater);
  });

  it('fills the page past hidden candidates', async () => {
    const hidden = await freshChannel({
      permission_overwrites: [{ id: inboxUser.id, type: 1, deny: bits(P.VIEW_CHANNEL) }],
    });
    const visible = (await post(alice, channel, { content: `<@${inboxUser.id}> visible` })).id;
    // Pings in a channel the user cannot see (direct mentions are stored whoever can see them).
    for (let i = 0; i < 4; i++) await post(alice, hidden, { content: `<@${inboxUser.id}> hidden ${i}` });
    const full = idsOf(await inbox());
    assert.equal(full[0], visible);
    assert.deepEqual(idsOf(await inbox('?limit=2')), full.slice(0, 2));
    assert.deepEqual(idsOf(await inbox('?limit=1')), [visible]);
  });

  it('refuses bad query values with 400 and the checked-id codes', async () => {
    const cases: [string, string][] = [
      ['?before=abc', 'INVALID_SNOWFLAKE_FORMAT'],
      ['?guild_id=12x', 'INVALID_SNOWFLAKE_FORMAT'],
      ['?before=99999999999999999999', 'SNOWFLAKE_OUT_OF_RANGE'],
      // Out of range however many digits (it used to be a format error past 20).
      ['?before=99999999999999999999999', 'SNOWFLAKE_OUT_OF_RANGE'],
    ];
    for (const [query, code] of cases) {
      const res = await as(server, inboxUser, 'GET', `/users/@me/mentions${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 'INVALID_FORM_BODY', query);
      assert.equal(res.body.errors[0].code, code, query);
    }
    for (const query of ['?limit=0', '?limit=101', '?roles=maybe']) {
      const res = await as(server, inboxUser, 'GET', `/users/@me/mentions${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 'INVALID_FORM_BODY', query);
    }
  });
});
