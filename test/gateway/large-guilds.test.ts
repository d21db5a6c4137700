import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join, newGuild } from '../support/chat.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient } from './gateway-client.ts';

/**
 * Large guilds (docs/gateway.md#large-guilds): over a session's `large_threshold`, a session that sent no
 * `intents` gets a member's PRESENCE_UPDATE only when it subscribed with op 14 (the whole guild, or that
 * member); GUILD_PRESENCES sessions get them all; small guilds reach everyone; subscriptions survive a resume;
 * bad op 14 payloads close 4002; at most 100 guilds are followed.
 */
const GUILD_PRESENCES = 1 << 8;
const GUILDS = 1;
let server: TestServer;
let owner: TestUser;
/** The members whose presence changes. */
let bob: TestUser;
let dave: TestUser;
/** Every watching session is Carol's: not a friend of anyone, so only guild presences reach her. */
let carol: TestUser;
let large: { id: string; system_channel_id: string };
let small: { id: string; system_channel_id: string };
let bobGw: GatewayClient | undefined;
const open: GatewayClient[] = [];

async function connect(user: TestUser, extra: Record<string, unknown> = {}) {
  const client = GatewayClient.connect(server);
  open.push(client);
  const ready = await client.ready(user.token, extra);
  return { client, ready };
}

/** Op 14, then a heartbeat: its ACK means the subscription was applied (frames are handled in order). */
async function subscribe(client: GatewayClient, d: Record<string, unknown>): Promise<void> {
  client.send({ op: 14, d });
  client.send({ op: 1, d: null });
  await client.next((f) => f.op === 11);
}

const presenceOf =
  (user: TestUser, guildId: string, status?: string) =>
  (f: Frame): boolean =>
    f.t === 'PRESENCE_UPDATE' &&
    f.d.user.id === user.id &&
    f.d.guild_id === guildId &&
    (status === undefined || f.d.status === status);

/** Bob comes online (his one session); resolves once a GUILD_PRESENCES witness saw it in `guildId`. */
async function bobOnline(witness: GatewayClient, guildId: string): Promise<void> {
  ({ client: bobGw } = await connect(bob));
  await witness.next(presenceOf(bob, guildId, 'online'));
}

async function bobOffline(witness: GatewayClient, guildId: string): Promise<void> {
  await bobGw?.close(1000);
  bobGw = undefined;
  await witness.next(presenceOf(bob, guildId, 'offline'));
}

const readyGuild = (ready: Frame, guildId: string) => ready.d.guilds.find((g: { id: string }) => g.id === guildId);

before(async () => {
  server = await startTestServer();
  [owner, bob, carol, dave] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  large = await newGuild(server, owner, 'Large');
  small = await newGuild(server, owner, 'Small');
  for (const user of [bob, carol, dave]) {
    await join(server, owner, user, large);
    await join(server, owner, user, small);
  }
  // 4 real members + 60 seeded: 64, over the default threshold (50), under the highest (250).
  await harness(server, 'POST', `/guilds/${large.id}/members/seed`, { count: 60 });
});

after(async () => {
  for (const client of open) await client.close(1000).catch(() => {});
  await server?.close();
});

describe('large guilds', () => {
  test('`large` follows the session’s large_threshold (default 50, clamped to 50–250)', async () => {
    const cases: [Record<string, unknown>, boolean][] = [
      [{}, true],
      [{ large_threshold: 10 }, true],
      [{ large_threshold: 63 }, true],
      [{ large_threshold: 64 }, false],
      [{ large_threshold: 1000 }, false],
      [{ large_threshold: 'many' }, true],
    ];
    for (const [extra, expected] of cases) {
      const { client, ready } = await connect(carol, extra);
      const guild = readyGuild(ready, large.id);
      assert.equal(guild.member_count, 64);
      assert.equal(guild.large, expected, JSON.stringify(extra));
      // A large guild's payload lists no presences (the owner... nobody else is online: only Carol herself).
      assert.deepEqual(
        guild.presences.map((p: any) => p.user.id),
        expected ? [] : [carol.id],
      );
      assert.equal(readyGuild(ready, small.id).large, false);
      await client.close(1000);
    }
  });

  test('a member’s presence reaches subscribed and GUILD_PRESENCES sessions only; small guilds reach all', async () => {
    const { client: witness } = await connect(carol, { intents: GUILDS | GUILD_PRESENCES });
    const { client: unsubscribed } = await connect(carol);
    const { client: noPresenceIntent } = await connect(carol, { intents: GUILDS });
    const { client: highThreshold } = await connect(carol, { large_threshold: 250 });
    const { client: whole } = await connect(carol);
    await subscribe(whole, { guild_id: large.id, typing: true, threads: true, activities: true, channels: {} });
    const { client: bare } = await connect(carol);
    await subscribe(bare, { guild_id: large.id });
    const { client: bobOnly } = await connect(carol);
    await subscribe(bobOnly, { guild_id: large.id, members: [bob.id] });
    const { client: daveOnly } = await connect(carol);
    await subscribe(daveOnly, { guild_id: large.id, activities: false, members: [dave.id] });

    await bobOnline(witness, large.id);
    for (const client of [whole, bare, bobOnly, highThreshold]) {
      const frame = await client.next(presenceOf(bob, large.id, 'online'));
      assert.equal(frame.d.guild_id, large.id);
    }
    // Everyone gets it in the small guild, whatever their subscriptions.
    for (const client of [witness, unsubscribed, whole, bare, bobOnly, daveOnly, highThreshold])
      await client.next(presenceOf(bob, small.id, 'online'));
    for (const client of [unsubscribed, daveOnly])
      assert.ok(await client.nothing(presenceOf(bob, large.id)), 'an unsubscribed session got the presence');
    assert.ok(await noPresenceIntent.nothing((f) => f.t === 'PRESENCE_UPDATE'));

    // Dave's change reaches the sessions following Dave or the whole guild, not the one following Bob only.
    const { client: daveGw } = await connect(dave);
    await witness.next(presenceOf(dave, large.id, 'online'));
    for (const client of [whole, bare, daveOnly, highThreshold])
      await client.next(presenceOf(dave, large.id, 'online'));
    for (const client of [unsubscribed, bobOnly]) assert.ok(await client.nothing(presenceOf(dave, large.id)));
    await daveGw.close(1000);
    await witness.next(presenceOf(dave, large.id, 'offline'));

    // Unsubscribing (`activities: false`, no one followed) stops them.
    await subscribe(whole, { guild_id: large.id, activities: false, members: [] });
    await bobOffline(witness, large.id);
    await bobOnly.next(presenceOf(bob, large.id, 'offline'));
    assert.ok(await whole.nothing(presenceOf(bob, large.id)));
    for (const client of [witness, unsubscribed, noPresenceIntent, highThreshold, whole, bare, bobOnly, daveOnly])
      await client.close(1000);
  });

  test('the member’s own sessions still get their own presence in a large guild', async () => {
    const { client: witness } = await connect(carol, { intents: GUILDS | GUILD_PRESENCES });
    const { client: first } = await connect(bob);
    await witness.next(presenceOf(bob, large.id, 'online'));
    first.send({ op: 3, d: { status: 'dnd', afk: false, since: null, activities: [] } });
    await witness.next(presenceOf(bob, large.id, 'dnd'));
    await first.next(presenceOf(bob, large.id, 'dnd'));
    await first.close(1000);
    await witness.next(presenceOf(bob, large.id, 'offline'));
    await witness.close(1000);
  });

  test('GUILD_CREATE on a join is large for the sessions whose threshold the guild exceeds', async () => {
    const erin = await registerUser(server);
    const { client: byDefault } = await connect(erin);
    const { client: high } = await connect(erin, { large_threshold: 250 });
    await join(server, owner, erin, large);
    const asLarge = await byDefault.next((f) => f.t === 'GUILD_CREATE' && f.d.id === large.id);
    const asSmall = await high.next((f) => f.t === 'GUILD_CREATE' && f.d.id === large.id);
    assert.equal(asLarge.d.member_count, 65);
    assert.deepEqual([asLarge.d.large, asLarge.d.presences], [true, []]);
    assert.equal(asSmall.d.large, false);
    assert.ok(asSmall.d.presences.some((p: any) => p.user.id === erin.id));
    await byDefault.close(1000);
    await high.close(1000);
  });

  test('a subscription survives a resume', async () => {
    const { client: witness } = await connect(carol, { intents: GUILDS | GUILD_PRESENCES });
    const { client: first, ready } = await connect(carol);
    await subscribe(first, { guild_id: large.id, members: [bob.id] });
    const seq = ready.s as number;
    await first.terminate();
    const again = GatewayClient.connect(server);
    open.push(again);
    await again.hello();
    again.send({ op: 6, d: { token: carol.token, session_id: ready.d.session_id, seq } });
    await again.dispatch('RESUMED');
    await bobOnline(witness, large.id);
    await again.next(presenceOf(bob, large.id, 'online'));
    await bobOffline(witness, large.id);
    await again.next(presenceOf(bob, large.id, 'offline'));
    await again.close(1000);
    await witness.close(1000);
  });

  test('at most 100 guilds are followed: the oldest subscription is dropped', async () => {
    const { client: witness } = await connect(carol, { intents: GUILDS | GUILD_PRESENCES });
    const { client: kept } = await connect(carol);
    const { client: dropped } = await connect(carol);
    await subscribe(kept, { guild_id: large.id, activities: true });
    await subscribe(dropped, { guild_id: large.id, activities: true });
    // 100 more guilds (ids of no guild: subscribing is not checked against membership) push it out; subscribing
    // again to the large guild after 99 of them keeps it in for `kept`.
    for (let i = 1; i <= 100; i++) {
      const guildId = String(1_000_000 + i);
      dropped.send({ op: 14, d: { guild_id: guildId, activities: true } });
      if (i <= 99) kept.send({ op: 14, d: { guild_id: guildId, activities: true } });
    }
    await subscribe(kept, { guild_id: large.id });
    await subscribe(kept, { guild_id: String(1_000_100), activities: true });
    dropped.send({ op: 1, d: null });
    await dropped.next((f) => f.op === 11);
    await bobOnline(witness, large.id);
    await kept.next(presenceOf(bob, large.id, 'online'));
    assert.ok(await dropped.nothing(presenceOf(bob, large.id)));
    await bobOffline(witness, large.id);
    for (const client of [witness, kept, dropped]) await client.close(1000);
  });

  test('a bad op 14 closes 4002; before Identify it is 4003', async () => {
    const tooMany = Array.from({ length: 101 }, (_, i) => String(2_000_000 + i));
    const bad: unknown[] = [
      null,
      'x',
      {},
      { guild_id: 'abc' },
      { guild_id: large.id, activities: 'yes' },
      { guild_id: large.id, typing: 1 },
      { guild_id: large.id, threads: 'no' },
      { guild_id: large.id, channels: [] },
      { guild_id: large.id, members: bob.id },
      { guild_id: large.id, members: ['not-an-id'] },
      { guild_id: large.id, members: tooMany },
    ];
    for (const d of bad) {
      const { client } = await connect(carol);
      client.send({ op: 14, d });
      assert.deepEqual(
        await client.closed,
        { code: 4002, reason: 'Invalid guild subscriptions payload' },
        JSON.stringify(d),
      );
    }
    // Exactly 100 members is within the bound.
    const { client: within } = await connect(carol);
    await subscribe(within, { guild_id: large.id, members: tooMany.slice(0, 100) });
    await within.close(1000);

    const early = GatewayClient.connect(server);
    open.push(early);
    await early.hello();
    early.send({ op: 14, d: { guild_id: large.id } });
    assert.deepEqual(await early.closed, { code: 4003, reason: 'Not authenticated' });
  });
});
