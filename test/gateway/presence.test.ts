import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CHAT_INVALIDATE_TOPIC } from '../../src/domains/chat/events.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient, readyClient } from './gateway-client.ts';

/**
 * Presence end to end (docs/gateway.md, "Presence"): who is online shows in READY, guild payloads, invites and
 * `with_counts`; changes reach guild members (with `guild_id`) and friends (without); the last session
 * ending shows offline at once.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let guild: { id: string; system_channel_id: string };
let inviteCode: string;
let aliceGw: GatewayClient;
const open: GatewayClient[] = [];

const presenceOf =
  (userId: string, status: string, scope: 'guild' | 'friend') =>
  (f: Frame): boolean =>
    f.t === 'PRESENCE_UPDATE' &&
    f.d.user.id === userId &&
    f.d.status === status &&
    (scope === 'guild' ? f.d.guild_id === guild.id : f.d.guild_id === undefined);

/** Drops Bob's presence frames already received, so a later "nothing arrives" looks only at new ones. */
async function discardBobPresences(): Promise<void> {
  const isBob = (f: Frame) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id;
  while (aliceGw.pending().some(isBob)) await aliceGw.next(isBob);
}

async function connect(user: TestUser, extra: Record<string, unknown> = {}) {
  const client = GatewayClient.connect(server);
  open.push(client);
  const ready = await client.ready(user.token, extra);
  return { client, ready };
}

async function counts() {
  const invite = await ok(as(server, alice, 'GET', `/invites/${inviteCode}?with_counts=true`));
  const withCounts = await ok(as(server, alice, 'GET', `/guilds/${guild.id}?with_counts=true`));
  assert.equal(invite.approximate_presence_count, withCounts.approximate_presence_count);
  assert.equal(withCounts.approximate_member_count, 3);
  return withCounts.approximate_presence_count as number;
}

before(async () => {
  server = await startTestServer();
  [alice, bob, carol] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  guild = await newGuild(server, alice);
  await join(server, alice, bob, guild);
  const invite = await join(server, alice, carol, guild);
  inviteCode = invite.code;
  // Alice and Bob are friends; Carol only shares the guild.
  await ok(as(server, alice, 'PUT', `/users/@me/relationships/${bob.id}`, {}));
  await ok(as(server, bob, 'PUT', `/users/@me/relationships/${alice.id}`, { type: 1 }));
  ({ client: aliceGw } = await readyClient(server, alice.token));
  open.push(aliceGw);
});

after(async () => {
  for (const client of open) await client.close(1000).catch(() => {});
  await server?.close();
});

describe('presence', () => {
  test('nobody else online: counts show only the viewer, and the guild payload lists their presence', async () => {
    assert.equal(await counts(), 1);
    const { ready } = await connect(carol);
    const payload = ready.d.guilds.find((g: { id: string }) => g.id === guild.id);
    const statuses = Object.fromEntries(payload.presences.map((p: any) => [p.user.id, p.status]));
    assert.equal(statuses[alice.id], 'online');
    assert.equal(statuses[bob.id], undefined);
    assert.equal(payload.online_count, payload.presences.length);
    assert.equal(payload.large, false);
    assert.deepEqual(ready.d.presences, [], 'Carol has no friends online');
  });

  test('a session going online reaches guild members with guild_id and friends without', async () => {
    const { client: bobGw, ready } = await connect(bob);
    const inGuild = await aliceGw.next(presenceOf(bob.id, 'online', 'guild'));
    assert.deepEqual(inGuild.d, {
      user: { id: bob.id },
      status: 'online',
      activities: [],
      client_status: { web: 'online' },
      afk: false,
      mobile: false,
      custom_status: null,
      guild_id: guild.id,
    });
    const asFriend = await aliceGw.next(presenceOf(bob.id, 'online', 'friend'));
    assert.equal(asFriend.d.guild_id, undefined);
    // Bob's READY: Alice, a friend, is online; the relationship is listed.
    assert.deepEqual(
      ready.d.presences.map((p: any) => [p.user.id, p.status, p.guild_id]),
      [[alice.id, 'online', undefined]],
    );
    assert.deepEqual(
      ready.d.relationships.map((r: any) => [r.id, r.type]),
      [[alice.id, 1]],
    );
    assert.equal(await counts(), 3);
    bobGw.close(1000);
    await aliceGw.next(presenceOf(bob.id, 'offline', 'guild'));
  });

  test('op 3 and the status setting change what others see; invisible shows offline', async () => {
    const { client: bobGw } = await connect(bob, {
      presence: { status: 'online', afk: false, activities: [{ name: 'chess', type: 0 }] },
    });
    const first = await aliceGw.next(presenceOf(bob.id, 'online', 'guild'));
    assert.deepEqual(first.d.activities, [{ name: 'chess', type: 0 }]);

    bobGw.send({ op: 3, d: { status: 'idle', afk: true, since: null, activities: [] } });
    const idle = await aliceGw.next(presenceOf(bob.id, 'idle', 'guild'));
    assert.equal(idle.d.afk, true);
    assert.deepEqual(idle.d.client_status, { web: 'idle' });

    // Another client (here, REST) chooses "do not disturb": every session of the account follows.
    await ok(as(server, bob, 'PATCH', '/users/@me/settings', { status: 'dnd' }));
    await aliceGw.next(presenceOf(bob.id, 'dnd', 'guild'));

    bobGw.send({
      op: 3,
      d: { status: 'invisible', afk: false, since: null, activities: [{ name: 'secret', type: 0 }] },
    });
    const hidden = await aliceGw.next(presenceOf(bob.id, 'offline', 'guild'));
    assert.deepEqual(hidden.d.activities, []);
    assert.equal(hidden.d.custom_status, null);
    assert.equal(await counts(), 2);
    await discardBobPresences();
    await bobGw.close(1000);
    assert.ok(await aliceGw.nothing((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id, 500));
    await ok(as(server, bob, 'PATCH', '/users/@me/settings', { status: 'online' }));
  });

  test('the status setting is the starting presence, and invisible sessions announce nothing', async () => {
    await ok(as(server, bob, 'PATCH', '/users/@me/settings', { status: 'invisible' }));
    await discardBobPresences();
    const { client: bobGw } = await connect(bob);
    assert.ok(await aliceGw.nothing((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id, 500));
    assert.equal(await counts(), 2);
    await bobGw.close(1000);
    // Only once the server has seen the close: a setting change reaching a live session would show it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ok(as(server, bob, 'PATCH', '/users/@me/settings', { status: 'online' }));
  });

  test('a user stays online while any session is open, and is offline the moment the last one closes', async () => {
    await discardBobPresences();
    const { client: desktop } = await connect(bob);
    await aliceGw.next(presenceOf(bob.id, 'online', 'guild'));
    const { client: phone } = await connect(bob, { presence: { status: 'online', mobile: true, afk: false } });
    const both = await aliceGw.next((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id && f.d.guild_id);
    assert.deepEqual(both.d.client_status, { mobile: 'online', web: 'online' });
    assert.equal(both.d.mobile, true);

    await desktop.close(1000);
    const phoneOnly = await aliceGw.next((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === bob.id && f.d.guild_id);
    assert.deepEqual(phoneOnly.d.client_status, { mobile: 'online' });
    assert.equal(phoneOnly.d.status, 'online');

    // A dropped connection (no close frame) counts as gone too.
    await phone.terminate();
    const gone = await aliceGw.next(presenceOf(bob.id, 'offline', 'guild'));
    assert.deepEqual(gone.d.client_status, {});
    assert.equal(await counts(), 2);
  });

  test('a resumed session is online again', async () => {
    const { client: bobGw, ready } = await connect(bob);
    await aliceGw.next(presenceOf(bob.id, 'online', 'guild'));
    await bobGw.terminate();
    await aliceGw.next(presenceOf(bob.id, 'offline', 'guild'));
    const again = GatewayClient.connect(server);
    open.push(again);
    await again.hello();
    again.send({ op: 6, d: { token: bob.token, session_id: ready.d.session_id, seq: ready.s } });
    await again.dispatch('RESUMED');
    await aliceGw.next(presenceOf(bob.id, 'online', 'guild'));
    assert.equal(await counts(), 3);
    await again.close(1000);
    await aliceGw.next(presenceOf(bob.id, 'offline', 'guild'));
  });

  test('op 8 with presences: true carries the presences of the online members it lists', async () => {
    const { client } = await connect(carol);
    client.send({ op: 8, d: { guild_id: guild.id, query: '', limit: 0, presences: true, nonce: 'p' } });
    const chunk = await client.next((f) => f.t === 'GUILD_MEMBERS_CHUNK' && f.d.nonce === 'p');
    assert.equal(chunk.d.members.length, 3);
    const statuses = Object.fromEntries(chunk.d.presences.map((p: any) => [p.user.id, p.status]));
    assert.deepEqual(statuses, { [alice.id]: 'online', [carol.id]: 'online' });
    client.send({ op: 8, d: { guild_id: guild.id, query: '', limit: 0, nonce: 'q' } });
    const plain = await client.next((f) => f.t === 'GUILD_MEMBERS_CHUNK' && f.d.nonce === 'q');
    assert.equal(plain.d.presences, undefined);
    client.send({ op: 8, d: { guild_id: guild.id, query: '', limit: 0, presences: 'yes' } });
    assert.equal((await client.closed).code, 4002);
  });

  test('a large guild (over 250 members) counts who is online but leaves presences out of its payload', async () => {
    const dave = await registerUser(server);
    const big = await newGuild(server, dave, 'Big');
    const { db, ids } = server.app.services;
    const extra = Array.from({ length: 250 }, () => ids.next());
    await db.query(
      `INSERT INTO users (id, username) SELECT id, 'bulk' || ord FROM unnest($1::bigint[]) WITH ORDINALITY AS t(id, ord)`,
      [extra],
    );
    await db.query('INSERT INTO members (guild_id, user_id) SELECT $1, unnest($2::bigint[])', [big.id, extra]);
    // Rows written behind the API's back: tell the read model, as the member routes do.
    for (const userId of extra)
      await server.app.services.bus.publish(CHAT_INVALIDATE_TOPIC, { guildId: big.id, userId });
    const { ready } = await connect(dave);
    const payload = ready.d.guilds.find((g: { id: string }) => g.id === big.id);
    assert.equal(payload.member_count, 251);
    assert.equal(payload.large, true);
    assert.deepEqual(payload.presences, []);
    assert.equal(payload.online_count, 1);
  });

  test('a presence with an unknown status closes the socket with 4002', async () => {
    const { client } = await connect(carol);
    client.send({ op: 3, d: { status: 'away', afk: false } });
    const closed = await client.closed;
    assert.equal(closed.code, 4002);
  });
});
