import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { type BusGap, BusPositions, type EventBus, InProcessEventBus } from '../../src/platform/state/event-bus.ts';
import { InProcessIpBanStore, type IpBanStore } from '../../src/platform/state/ip-bans.ts';
import { gcra, InProcessRateLimiter, type RateLimiter } from '../../src/platform/state/rate-limiter.ts';
import {
  BUS_SHARDS,
  busStream,
  openRedisClusterState,
  openRedisState,
  shardChannel,
} from '../../src/platform/state/redis.ts';
import { keySlot } from '../../src/platform/state/redis-keyspace.ts';
import { InProcessSlotStore, type SlotStore } from '../../src/platform/state/slots.ts';
import {
  closeSharedRedisCluster,
  clusterSeeds,
  sharedRedisCluster,
  TEST_REDIS_CLUSTER,
} from '../support/redis-cluster.ts';

// The contract's own topics: any name under these patterns carries any message here.
declare module '../../src/platform/state/event-bus.ts' {
  interface BusTopics {
    t: unknown;
    [topic: `t.${string}`]: unknown;
    [topic: `topic.${string}`]: unknown;
  }
}

/**
 * One contract, every backend: the in-process implementations always, Redis too when TEST_REDIS_URL is set, and
 * in that leg a three-master Redis cluster started from the local `redis-server` (test/support/redis-cluster.ts).
 */
interface Backend {
  rateLimiter: RateLimiter;
  ipBans: IpBanStore;
  slots: SlotStore;
  bus: EventBus;
  /** Waits until subscriptions made so far are live (a no-op in process). */
  settle(): Promise<void>;
  /** A second client of the same shared state, as another process would hold (the same objects in process). */
  twin(): Promise<Backend>;
  close(): Promise<void>;
}

interface BackendFactory {
  name: string;
  open(): Promise<Backend>;
}

const redisUrl = process.env.TEST_REDIS_URL;
const factories: BackendFactory[] = [
  {
    name: 'in-process',
    async open() {
      const backend: Backend = {
        rateLimiter: new InProcessRateLimiter(),
        ipBans: new InProcessIpBanStore(),
        slots: new InProcessSlotStore(),
        bus: new InProcessEventBus(),
        settle: async () => {},
        twin: async () => backend,
        close: async () => {},
      };
      return backend;
    },
  },
];
if (redisUrl) {
  factories.push({
    name: 'redis',
    async open() {
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const openOne = async (): Promise<Backend> => {
        const state = await openRedisState(redisUrl, prefix);
        return { ...state, settle: () => state.bus.ready(), twin: openOne };
      };
      return openOne();
    },
  });
}

if (TEST_REDIS_CLUSTER) {
  after(closeSharedRedisCluster);
  factories.push({
    name: 'redis cluster',
    async open() {
      const cluster = await sharedRedisCluster();
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const openOne = async (): Promise<Backend> => {
        const state = await openRedisClusterState(clusterSeeds(cluster), prefix);
        return { ...state, settle: () => state.bus.ready(), twin: openOne };
      };
      return openOne();
    },
  });
}

const T0 = 1_700_000_000_000;

for (const factory of factories) {
  describe(`shared state contract: ${factory.name}`, () => {
    const opened: Backend[] = [];
    const open = async () => {
      const backend = await factory.open();
      opened.push(backend);
      return backend;
    };
    after(async () => {
      for (const backend of opened) await backend.close();
    });

    describe('rate limiter (GCRA)', () => {
      it('admits exactly the limit, then denies with the time until the next slot', async () => {
        const { rateLimiter } = await open();
        const decisions = [];
        for (let i = 0; i < 6; i++) decisions.push(await rateLimiter.consume('k', 5, 1000, T0));
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.remaining, d.limit]),
          [
            [true, 4, 5],
            [true, 3, 5],
            [true, 2, 5],
            [true, 1, 5],
            [true, 0, 5],
            [false, 0, 5],
          ],
        );
        const denied = decisions[5]!;
        assert.equal(denied.retryAfterMs, 200);
        assert.equal(denied.resetAfterMs, 1000);
        assert.equal(decisions[0]!.resetAfterMs, 200);
        assert.equal(decisions[0]!.retryAfterMs, 0);
      });

      it('frees one slot per interval', async () => {
        const { rateLimiter } = await open();
        for (let i = 0; i < 5; i++) await rateLimiter.consume('drip', 5, 1000, T0);
        assert.equal((await rateLimiter.consume('drip', 5, 1000, T0 + 199)).allowed, false);
        const next = await rateLimiter.consume('drip', 5, 1000, T0 + 200);
        assert.equal(next.allowed, true);
        assert.equal(next.remaining, 0);
        const drained = await rateLimiter.consume('drip', 5, 1000, T0 + 5000);
        assert.equal(drained.allowed, true);
        assert.equal(drained.remaining, 4);
      });

      it('matches the pure gcra() step by step, fractional intervals included', async () => {
        const { rateLimiter } = await open();
        let tat: number | undefined;
        const times = [0, 0, 1, 5, 100, 333, 334, 900, 901, 2000, 2000, 2000, 2001];
        for (const t of times) {
          const expected = gcra(tat, 3, 1000, T0 + t);
          tat = expected.tat;
          const actual = await rateLimiter.consume('mirror', 3, 1000, T0 + t);
          assert.equal(actual.allowed, expected.decision.allowed, `allowed at +${t}`);
          assert.equal(actual.remaining, expected.decision.remaining, `remaining at +${t}`);
          assert.ok(Math.abs(actual.retryAfterMs - expected.decision.retryAfterMs) < 1e-6, `retry at +${t}`);
          assert.ok(Math.abs(actual.resetAfterMs - expected.decision.resetAfterMs) < 1e-6, `reset at +${t}`);
        }
      });

      it('keeps keys apart and forgets everything on reset', async () => {
        const { rateLimiter } = await open();
        assert.equal((await rateLimiter.consume('a', 1, 60_000, T0)).allowed, true);
        assert.equal((await rateLimiter.consume('a', 1, 60_000, T0)).allowed, false);
        assert.equal((await rateLimiter.consume('b', 1, 60_000, T0)).allowed, true);
        await rateLimiter.reset();
        assert.equal((await rateLimiter.consume('a', 1, 60_000, T0)).allowed, true);
      });

      it("remembers arrivals while real time outruns the caller's clock (a frozen test clock, a slow node)", async () => {
        const { rateLimiter } = await open();
        // One arrival at 50 per second is 20 ms of the bucket: a key that expired by real time would forget it.
        assert.equal((await rateLimiter.consume('slow', 50, 1000, T0)).allowed, true);
        await new Promise((resolve) => setTimeout(resolve, 60));
        const rest = [];
        for (let i = 0; i < 50; i++) rest.push((await rateLimiter.consume('slow', 50, 1000, T0)).allowed);
        assert.equal(rest.filter(Boolean).length, 49);
      });

      it('never admits more than the limit under many parallel consumes', async () => {
        const { rateLimiter } = await open();
        const results = await Promise.all(
          Array.from({ length: 300 }, () => rateLimiter.consume('parallel', 50, 10_000, T0)),
        );
        assert.equal(results.filter((r) => r.allowed).length, 50);
        const remaining = results.filter((r) => r.allowed).map((r) => r.remaining);
        assert.deepEqual(
          [...remaining].sort((x, y) => y - x),
          Array.from({ length: 50 }, (_, i) => 49 - i),
        );
      });

      it('never admits more than the limit when two clients race on one key', async () => {
        const first = await open();
        const second = await first.twin();
        if (second !== first) opened.push(second);
        const limiters = [first.rateLimiter, second.rateLimiter];
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            limiters[i % limiters.length]!.consume('race', 20, 10_000, T0 + (i % 3)),
          ),
        );
        assert.equal(results.filter((r) => r.allowed).length, 20);
      });
    });

    describe('IP ban store', () => {
      it('counts failures in a sliding window', async () => {
        const { ipBans } = await open();
        assert.equal(await ipBans.recordFailure('198.51.100.1', T0, 1000), 1);
        assert.equal(await ipBans.recordFailure('198.51.100.1', T0, 1000), 2);
        assert.equal(await ipBans.recordFailure('198.51.100.1', T0 + 500, 1000), 3);
        // The two failures at T0 fall out of the window once T0 is no longer inside (now - window, now].
        assert.equal(await ipBans.recordFailure('198.51.100.1', T0 + 1000, 1000), 2);
        assert.equal(await ipBans.recordFailure('198.51.100.2', T0 + 1000, 1000), 1);
      });

      it('counts parallel failures without losing one', async () => {
        const { ipBans } = await open();
        const counts = await Promise.all(
          Array.from({ length: 100 }, () => ipBans.recordFailure('2001:db8::/64', T0, 60_000)),
        );
        assert.deepEqual(
          [...counts].sort((a, b) => a - b),
          Array.from({ length: 100 }, (_, i) => i + 1),
        );
      });

      it('finds, lists, expires and removes bans', async () => {
        const { ipBans } = await open();
        await ipBans.ban({ ip: '203.0.113.7', kind: 'automatic', expiresAt: T0 + 1000 });
        await ipBans.ban({ ip: '2001:db8:1:2::/64', kind: 'automatic', expiresAt: T0 + 5000 });
        await ipBans.ban({ ip: '203.0.113.9', kind: 'manual', expiresAt: null });
        assert.deepEqual(await ipBans.find('203.0.113.7', T0), {
          ip: '203.0.113.7',
          kind: 'automatic',
          expiresAt: T0 + 1000,
        });
        assert.equal(await ipBans.find('203.0.113.8', T0), undefined);
        const listed = (await ipBans.list(T0)).map((b) => b.ip).sort();
        assert.deepEqual(listed, ['2001:db8:1:2::/64', '203.0.113.7', '203.0.113.9']);

        assert.equal(await ipBans.find('203.0.113.7', T0 + 1000), undefined);
        assert.deepEqual((await ipBans.list(T0 + 1000)).map((b) => b.ip).sort(), ['2001:db8:1:2::/64', '203.0.113.9']);
        assert.deepEqual(await ipBans.find('203.0.113.9', T0 + 10 ** 9), {
          ip: '203.0.113.9',
          kind: 'manual',
          expiresAt: null,
        });

        await ipBans.remove('2001:db8:1:2::/64');
        assert.equal(await ipBans.find('2001:db8:1:2::/64', T0), undefined);
        assert.deepEqual(
          (await ipBans.list(T0)).map((b) => b.ip),
          ['203.0.113.9'],
        );
      });

      it('a later ban replaces the earlier one for the same key', async () => {
        const { ipBans } = await open();
        await ipBans.ban({ ip: '192.0.2.1', kind: 'automatic', expiresAt: T0 + 1000 });
        await ipBans.ban({ ip: '192.0.2.1', kind: 'automatic', expiresAt: T0 + 9000 });
        assert.equal((await ipBans.find('192.0.2.1', T0 + 2000))?.expiresAt, T0 + 9000);
        assert.equal((await ipBans.list(T0)).length, 1);
      });

      it('reset clears failures and bans', async () => {
        const { ipBans } = await open();
        await ipBans.recordFailure('192.0.2.5', T0, 60_000);
        await ipBans.recordFailure('192.0.2.5', T0, 60_000);
        await ipBans.ban({ ip: '192.0.2.5', kind: 'automatic', expiresAt: T0 + 60_000 });
        await ipBans.reset();
        assert.equal(await ipBans.find('192.0.2.5', T0), undefined);
        assert.deepEqual(await ipBans.list(T0), []);
        assert.equal(await ipBans.recordFailure('192.0.2.5', T0, 60_000), 1);
      });

      it('remove also forgets the failure count', async () => {
        const { ipBans } = await open();
        await ipBans.recordFailure('192.0.2.6', T0, 60_000);
        await ipBans.recordFailure('192.0.2.6', T0, 60_000);
        await ipBans.remove('192.0.2.6');
        assert.equal(await ipBans.recordFailure('192.0.2.6', T0, 60_000), 1);
      });
    });

    describe('slot store (gateway caps across processes)', () => {
      const lease = { now: T0, leaseMs: 60_000 };

      it('admits up to the limit, refuses the next, and frees a slot on release; taking one again is not a second', async () => {
        const { slots } = await open();
        const taken = [];
        for (const member of ['s1', 's2', 's3', 's4']) taken.push(await slots.acquire('k', member, 3, lease));
        assert.deepEqual(taken, [{ admitted: true }, { admitted: true }, { admitted: true }, { admitted: false }]);
        assert.deepEqual(await slots.acquire('k', 's2', 3, lease), { admitted: true });
        assert.equal(await slots.count('k', T0), 3);
        await slots.release('k', 's1');
        assert.equal(await slots.count('k', T0), 2);
        assert.deepEqual(await slots.acquire('k', 's4', 3, lease), { admitted: true });
        assert.deepEqual(await slots.acquire('other', 's5', 3, lease), { admitted: true });
      });

      it('at the limit evicts the member idle the longest when asked to, never a busy one', async () => {
        const { slots } = await open();
        for (const member of ['a', 'b', 'c']) await slots.acquire('u', member, 3, lease);
        assert.deepEqual(await slots.acquire('u', 'd', 3, { ...lease, evictIdle: true }), { admitted: false });
        await slots.idle('u', 'b', 500, lease);
        await slots.idle('u', 'c', 200, lease);
        assert.deepEqual(await slots.acquire('u', 'd', 3, lease), { admitted: false }, 'no eviction unless asked');
        assert.deepEqual(await slots.acquire('u', 'd', 3, { ...lease, evictIdle: true }), {
          admitted: true,
          evicted: 'c',
        });
        assert.equal(await slots.busy('u', 'c', lease), false, 'the evicted slot is gone');
        assert.equal(await slots.busy('u', 'b', lease), true, 'busy again: no longer evictable');
        assert.deepEqual(await slots.acquire('u', 'e', 3, { ...lease, evictIdle: true }), { admitted: false });
        await slots.idle('u', 'gone', 1, lease);
        assert.equal(await slots.count('u', T0), 3, 'marking a slot not held idle takes none');
      });

      it('lets leases lapse unless renewed (a dead process frees its slots)', async () => {
        const { slots } = await open();
        await slots.acquire('l', 'kept', 2, lease);
        await slots.acquire('l', 'dead', 2, lease);
        await slots.renew([{ key: 'l', member: 'kept' }], { now: T0 + 50_000, leaseMs: 60_000 });
        assert.equal(await slots.count('l', T0 + 59_999), 2);
        assert.equal(await slots.count('l', T0 + 60_000), 1);
        assert.deepEqual(await slots.acquire('l', 'new', 2, { now: T0 + 60_000, leaseMs: 60_000 }), { admitted: true });
        assert.equal(await slots.busy('l', 'dead', { now: T0 + 60_000, leaseMs: 60_000 }), false);
        await slots.renew([{ key: 'l', member: 'dead' }], { now: T0 + 60_001, leaseMs: 60_000 });
        assert.equal(await slots.count('l', T0 + 60_001), 2, 'renewing a lapsed slot does not bring it back');
        await slots.reset();
        assert.equal(await slots.count('l', T0 + 60_001), 0);
      });

      it('never admits more than the limit when two processes race on one key', async () => {
        const first = await open();
        const second = await first.twin();
        if (second !== first) opened.push(second);
        const stores = [first.slots, second.slots];
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) => stores[i % 2]!.acquire('race', `m${i}`, 25, lease)),
        );
        assert.equal(results.filter((r) => r.admitted).length, 25);
        assert.equal(await second.slots.count('race', T0), 25);
        assert.equal(await first.slots.count('race', T0), 25);
      });
    });

    describe('event bus', () => {
      it('delivers JSON messages to every subscriber of the topic, synchronously to local ones', async () => {
        const { bus, settle } = await open();
        const a: unknown[] = [];
        const b: unknown[] = [];
        const other: unknown[] = [];
        bus.subscribe('topic.one', (m) => a.push(m));
        bus.subscribe('topic.one', (m) => b.push(m));
        bus.subscribe('topic.two', (m) => other.push(m));
        await settle();
        const message = { userId: '123', nested: { list: [1, 'x', null] }, text: 'héllo ✓' };
        await bus.publish('topic.one', message);
        assert.deepEqual(a, [message]);
        assert.deepEqual(b, [message]);
        assert.deepEqual(other, []);
      });

      it('stops delivering after unsubscribe and survives a throwing subscriber', async () => {
        const { bus, settle } = await open();
        const seen: unknown[] = [];
        const off = bus.subscribe('topic.x', (m) => seen.push(m));
        bus.subscribe('topic.x', () => {
          throw new Error('boom');
        });
        await settle();
        await bus.publish('topic.x', 1);
        off();
        off();
        await bus.publish('topic.x', 2);
        assert.deepEqual(seen, [1]);
      });

      it("numbers each publisher's messages per topic without a break, and reports no gap for them", async () => {
        const first = await open();
        const second = await first.twin();
        if (second !== first) opened.push(second);
        const marks: number[] = [];
        const gaps: BusGap[] = [];
        second.bus.subscribe('topic.n', (_m, mark) => marks.push(mark.n));
        second.bus.onGap('topic.n', (gap) => gaps.push(gap));
        first.bus.onGap('topic.n', (gap) => gaps.push(gap));
        await second.settle();
        for (let i = 0; i < 5; i++) await first.bus.publish('topic.n', i);
        await waitFor(() => marks.length === 5);
        assert.deepEqual(marks, [1, 2, 3, 4, 5]);
        await new Promise((resolve) => setTimeout(resolve, 30));
        assert.deepEqual(gaps, []);
      });
    });
  });
}

if (redisUrl) {
  describe('redis shared state across processes', () => {
    const closers: (() => Promise<void>)[] = [];
    after(async () => {
      for (const close of closers) await close();
    });
    const openState = async (prefix: string) => {
      const state = await openRedisState(redisUrl, prefix);
      closers.push(state.close);
      return state;
    };

    it('delivers a message published by one process to the other exactly once', async () => {
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const one = await openState(prefix);
      const two = await openState(prefix);
      const onOne: unknown[] = [];
      const onTwo: unknown[] = [];
      one.bus.subscribe('auth.invalidate', (m) => onOne.push(m));
      two.bus.subscribe('auth.invalidate', (m) => onTwo.push(m));
      await one.bus.ready();
      await two.bus.ready();
      await one.bus.publish('auth.invalidate', { userId: '42' });
      await waitFor(() => onTwo.length === 1);
      // Give a duplicate echo the time to show up if the origin filter were broken.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(onOne, [{ userId: '42' }]);
      assert.deepEqual(onTwo, [{ userId: '42' }]);
    });

    it('isolates deployments by prefix, for channels and keys', async () => {
      const p1 = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const p2 = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const one = await openState(p1);
      const two = await openState(p2);
      const heard: unknown[] = [];
      two.bus.subscribe('t', (m) => heard.push(m));
      await two.bus.ready();
      await one.bus.publish('t', 'hello');
      await one.rateLimiter.consume('shared', 1, 60_000, T0);
      assert.equal((await two.rateLimiter.consume('shared', 1, 60_000, T0)).allowed, true);
      await one.ipBans.ban({ ip: '192.0.2.77', kind: 'automatic', expiresAt: T0 + 60_000 });
      assert.equal(await two.ipBans.find('192.0.2.77', T0), undefined);
      await two.rateLimiter.reset();
      assert.equal((await one.rateLimiter.consume('shared', 1, 60_000, T0)).allowed, false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(heard, []);

      const raw = new Redis(redisUrl);
      closers.push(async () => {
        await raw.quit();
      });
      const keys = await raw.keys(`${p1}*`);
      assert.deepEqual(keys.sort(), [`${p1}ipban:192.0.2.77`, `${p1}ipbans`, `${p1}rl:shared`]);
      const ttl = await raw.pttl(`${p1}rl:shared`);
      // The window plus the 10 s slack that keeps a key alive while real time outruns a caller's clock.
      assert.ok(ttl > 10_000 && ttl <= 70_000, `bucket key expires with the bucket, got ${ttl}`);
    });

    it("reports a skipped number as a gap before the message, and nothing for a publisher's first message", async () => {
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const one = await openState(prefix);
      const events: unknown[] = [];
      one.bus.subscribe('t.gap', (m, mark) => events.push(['message', m, mark.n]));
      one.bus.onGap('t.gap', (gap) => events.push(['gap', gap]));
      one.bus.onGap('t.other', (gap) => events.push(['other', gap]));
      await one.bus.ready();
      const raw = new Redis(redisUrl);
      closers.push(async () => {
        await raw.quit();
      });
      const send = (o: string, n: number, m: unknown) => raw.publish(`${prefix}bus:t.gap`, JSON.stringify({ o, n, m }));
      await send('p1', 7, 'first seen');
      await send('p1', 8, 'next');
      await send('p2', 1, 'another publisher');
      await send('p1', 11, 'after a gap');
      await waitFor(() => events.length === 5);
      assert.deepEqual(events, [
        ['message', 'first seen', 7],
        ['message', 'next', 8],
        ['message', 'another publisher', 1],
        ['gap', { topic: 't.gap', reason: 'sequence', origin: 'p1', from: 9, to: 10 }],
        ['message', 'after a gap', 11],
      ]);
    });

    it('reports no gap for what was published while nobody here subscribed to the topic', async () => {
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const one = await openState(prefix);
      const two = await openState(prefix);
      const heard: unknown[] = [];
      const gaps: BusGap[] = [];
      one.bus.onGap('t.sub', (gap) => gaps.push(gap));
      const off = one.bus.subscribe('t.sub', (m) => heard.push(m));
      await one.bus.ready();
      await two.bus.publish('t.sub', 1);
      await waitFor(() => heard.length === 1);
      off();
      await two.bus.publish('t.sub', 2);
      one.bus.subscribe('t.sub', (m) => heard.push(m));
      await one.bus.ready();
      await two.bus.publish('t.sub', 3);
      await waitFor(() => heard.length === 2);
      assert.deepEqual(heard, [1, 3]);
      assert.deepEqual(gaps, []);
    });

    it('reports a gap on every topic listened to when the bus connection comes back, then numbers restart', async () => {
      const prefix = `hearth-unit-${randomBytes(6).toString('hex')}:`;
      const one = await openState(prefix);
      const two = await openState(prefix);
      const gaps: BusGap[] = [];
      const heard: unknown[] = [];
      one.bus.subscribe('t.a', (m) => heard.push(m));
      one.bus.onGap('t.a', (gap) => gaps.push(gap));
      one.bus.onGap('t.b', (gap) => gaps.push(gap));
      await one.bus.ready();
      await two.bus.publish('t.a', 'before');
      await waitFor(() => heard.length === 1);
      const raw = new Redis(redisUrl);
      closers.push(async () => {
        await raw.quit();
      });
      const list = (await raw.call('CLIENT', 'LIST')) as string;
      const ids = list
        .split('\n')
        .filter((line) => line.includes(` name=${prefix}bus `))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1] as string);
      assert.equal(ids.length, 2);
      // Both processes' bus connections drop (as when Redis restarts); each comes back on its own.
      for (const id of ids) await raw.call('CLIENT', 'KILL', 'ID', id);
      await waitFor(() => gaps.length === 2, 10_000);
      assert.deepEqual(gaps.map((g) => [g.topic, g.reason]).sort(), [
        ['t.a', 'reconnect'],
        ['t.b', 'reconnect'],
      ]);
      // Subscribed again; the next message is not a second gap even though none came in between.
      await two.bus.publish('t.a', 'after');
      await waitFor(() => heard.length === 2);
      assert.deepEqual(heard, ['before', 'after']);
      assert.equal(gaps.length, 2);
    });

    it('answers start-up with a clear error when Redis does not answer', async () => {
      await assert.rejects(openRedisState('redis://127.0.0.1:1', 'x:'), /REDIS_URL: cannot connect/);
    });
  });
}

if (TEST_REDIS_CLUSTER) {
  describe('redis cluster: sharded event bus', () => {
    const closers: (() => Promise<void>)[] = [];
    after(async () => {
      for (const close of closers) await close();
    });
    const openState = async (prefix: string) => {
      const cluster = await sharedRedisCluster();
      const state = await openRedisClusterState(clusterSeeds(cluster), prefix);
      closers.push(state.close);
      return state;
    };
    const newPrefix = () => `hearth-unit-${randomBytes(6).toString('hex')}:`;
    /** Which master carries each subscribed channel of `prefix` (PUBSUB SHARDCHANNELS on every node). */
    const channelOwners = async (prefix: string) => {
      const cluster = await sharedRedisCluster();
      const owners = new Map<string, string>();
      for (const node of cluster.nodes) {
        const raw = cluster.connect(node);
        for (const channel of (await raw.call('PUBSUB', 'SHARDCHANNELS', `${prefix}*`)) as string[])
          owners.set(channel, node);
        raw.disconnect();
      }
      return owners;
    };

    it("carries each guild's events on its shard channel, the shards spread over every master", async () => {
      const cluster = await sharedRedisCluster();
      const prefix = newPrefix();
      const one = await openState(prefix);
      const two = await openState(prefix);
      const heard: [unknown, string][] = [];
      two.bus.subscribe('t.dispatch', (m, mark) => heard.push([m, mark.origin]));
      await two.bus.ready();
      const owners = await channelOwners(prefix);
      assert.equal(owners.size, BUS_SHARDS + 1, 'one channel per shard, one for messages without a guild');
      assert.equal(new Set(owners.values()).size, 3, 'each of the three masters carries shards');
      const probe = cluster.connect(cluster.nodes[0] as string);
      for (const channel of owners.keys())
        assert.equal(await probe.call('CLUSTER', 'KEYSLOT', channel), keySlot(channel), channel);
      probe.disconnect();

      const channelOf = (guildId: string | undefined) => shardChannel(prefix, 't.dispatch', busStream(guildId));
      const guildA = '1180000000000000001';
      let guildB = '';
      for (let i = 2; !guildB; i++) {
        const id = `118000000000000${String(i).padStart(4, '0')}`;
        if (owners.get(channelOf(id)) !== owners.get(channelOf(guildA))) guildB = id;
      }
      // A plain sharded subscriber on each guild's master sees that guild's event there, and only it.
      const seen = new Map<string, string[]>();
      const rawSubscribers = [];
      for (const guildId of [guildA, guildB]) {
        const raw = cluster.connect(owners.get(channelOf(guildId)) as string);
        rawSubscribers.push(raw);
        seen.set(guildId, []);
        raw.on('smessage', (channel: string, text: string) =>
          seen.get(guildId)?.push(`${channel} ${JSON.parse(text).m.guild}`),
        );
        await raw.ssubscribe(channelOf(guildId));
      }
      await one.bus.publish('t.dispatch', { guild: 'a' }, guildA);
      await one.bus.publish('t.dispatch', { guild: 'b' }, guildB);
      await one.bus.publish('t.dispatch', { guild: 'none' });
      await waitFor(() => heard.length === 3 && [...seen.values()].every((lines) => lines.length === 1));
      assert.deepEqual(seen.get(guildA), [`${channelOf(guildA)} a`]);
      assert.deepEqual(seen.get(guildB), [`${channelOf(guildB)} b`]);
      assert.deepEqual(
        heard.map(([m, origin]) => [m, origin.slice(origin.indexOf('/') + 1)]),
        [
          [{ guild: 'a' }, busStream(guildA)],
          [{ guild: 'b' }, busStream(guildB)],
          [{ guild: 'none' }, busStream(undefined)],
        ],
      );
      for (const raw of rawSubscribers) raw.disconnect();
    });

    it("numbers each shard apart: many guilds' messages at once arrive in order per guild, with no gap", async () => {
      const prefix = newPrefix();
      const one = await openState(prefix);
      const two = await openState(prefix);
      const byGuild = new Map<string, number[]>();
      const gaps: BusGap[] = [];
      two.bus.subscribe('t.dispatch', (message) => {
        const m = message as { g: string; i: number };
        const list = byGuild.get(m.g) ?? [];
        list.push(m.i);
        byGuild.set(m.g, list);
      });
      two.bus.onGap('t.dispatch', (gap) => gaps.push(gap));
      await two.bus.ready();
      const guilds = Array.from({ length: 8 }, (_, k) => `12${k}0000000000000000`);
      const sends: Promise<void>[] = [];
      for (let i = 0; i < 25; i++) for (const g of guilds) sends.push(one.bus.publish('t.dispatch', { g, i }, g));
      await Promise.all(sends);
      await waitFor(() => [...byGuild.values()].reduce((sum, list) => sum + list.length, 0) === 200, 5000);
      for (const g of guilds) assert.deepEqual(byGuild.get(g), [...Array(25).keys()], g);
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.deepEqual(gaps, []);
      const position = two.bus.position('t.dispatch');
      const streams = new Set(guilds.map((g) => busStream(g)));
      assert.equal(Object.keys(position).length, streams.size + 1, 'one stream per shard used, plus its own');
    });

    it('reports a skipped number on a shard as a gap before the message', async () => {
      const cluster = await sharedRedisCluster();
      const prefix = newPrefix();
      const one = await openState(prefix);
      const events: unknown[] = [];
      one.bus.subscribe('t.gap', (m, mark) => events.push(['message', m, mark.n]));
      one.bus.onGap('t.gap', (gap) => events.push(['gap', gap]));
      await one.bus.ready();
      const stream = busStream('42');
      const channel = shardChannel(prefix, 't.gap', stream);
      const owner = (await channelOwners(prefix)).get(channel) as string;
      const raw = cluster.connect(owner);
      const send = (n: number, m: string) => raw.spublish(channel, JSON.stringify({ o: 'p1', n, m }));
      await send(7, 'first seen');
      await send(8, 'next');
      await send(11, 'after a gap');
      await waitFor(() => events.length === 4);
      raw.disconnect();
      assert.deepEqual(events, [
        ['message', 'first seen', 7],
        ['message', 'next', 8],
        ['gap', { topic: 't.gap', reason: 'sequence', origin: `p1/${stream}`, from: 9, to: 10 }],
        ['message', 'after a gap', 11],
      ]);
    });

    it("reports a gap on every topic listened to when a master's bus connection comes back", async () => {
      const cluster = await sharedRedisCluster();
      const prefix = newPrefix();
      const one = await openState(prefix);
      const two = await openState(prefix);
      const gaps: BusGap[] = [];
      const heard: unknown[] = [];
      one.bus.subscribe('t.a', (m) => heard.push(m));
      one.bus.onGap('t.a', (gap) => gaps.push(gap));
      one.bus.onGap('t.b', (gap) => gaps.push(gap));
      await one.bus.ready();
      await two.bus.publish('t.a', 'before', '7');
      await waitFor(() => heard.length === 1);
      // One master's bus connections drop (as when that node restarts); they come back on their own.
      const raw = cluster.connect(cluster.nodes[1] as string);
      const list = (await raw.call('CLIENT', 'LIST')) as string;
      const ids = list
        .split('\n')
        .filter((line) => line.includes(` name=${prefix}bus `))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1] as string);
      assert.equal(ids.length, 1, list);
      for (const id of ids) await raw.call('CLIENT', 'KILL', 'ID', id);
      raw.disconnect();
      await waitFor(() => gaps.length === 2, 10_000);
      assert.deepEqual(gaps.map((g) => [g.topic, g.reason]).sort(), [
        ['t.a', 'reconnect'],
        ['t.b', 'reconnect'],
      ]);
      // Subscribed again on that master too: every guild's messages arrive, and no second gap.
      const guilds = Array.from({ length: 16 }, (_, k) => `13${k}0000000000000000`);
      for (const g of guilds) await two.bus.publish('t.a', g, g);
      await waitFor(() => heard.length === 17, 5000);
      assert.equal(gaps.length, 2);
    });

    it("follows a shard's slot to another master: subscribed there, a gap reported, messages flow again", async () => {
      const cluster = await sharedRedisCluster();
      const prefix = newPrefix();
      const one = await openState(prefix);
      const two = await openState(prefix);
      const heard: unknown[] = [];
      const gaps: BusGap[] = [];
      one.bus.subscribe('t.move', (m) => heard.push(m));
      one.bus.onGap('t.move', (gap) => gaps.push(gap));
      await one.bus.ready();
      const guild = '1400000000000000001';
      const channel = shardChannel(prefix, 't.move', busStream(guild));
      const from = (await channelOwners(prefix)).get(channel) as string;
      const to = cluster.nodes.find((node) => node !== from) as string;
      await two.bus.publish('t.move', 'before', guild);
      await waitFor(() => heard.length === 1);

      // Reshard the channel's slot (it holds no key: no MIGRATE needed): every master is told its new owner.
      const slot = keySlot(channel);
      const admin = new Map(cluster.nodes.map((node) => [node, cluster.connect(node)]));
      const idOf = async (node: string) => (await admin.get(node)?.call('CLUSTER', 'MYID')) as string;
      const assign = async (owner: string) => {
        const id = await idOf(owner);
        // The new owner first, then the old one, then the rest (the order resharding tools use).
        const order = [owner, ...cluster.nodes.filter((node) => node !== owner)];
        for (const node of order) await admin.get(node)?.call('CLUSTER', 'SETSLOT', slot, 'NODE', id);
      };
      await assign(to);
      try {
        await waitFor(() => gaps.length === 1, 10_000);
        assert.deepEqual(gaps, [{ topic: 't.move', reason: 'reconnect' }]);
        assert.equal((await channelOwners(prefix)).get(channel), to, 'subscribed on the new owner');
        // The publisher follows the MOVED redirection; the message arrives through the new owner.
        await two.bus.publish('t.move', 'after', guild);
        await waitFor(() => heard.length === 2, 5000);
        assert.deepEqual(heard, ['before', 'after']);
      } finally {
        // The slot goes back, so the cluster keeps the layout the other tests expect.
        await assign(from);
        for (const raw of admin.values()) raw.disconnect();
      }
    });

    it('answers start-up with a clear error when no node answers', async () => {
      await assert.rejects(openRedisClusterState(['redis://127.0.0.1:1'], 'x:'), /REDIS_CLUSTER_NODES: cannot connect/);
    });
  });
}

describe('bus positions', () => {
  it('reports the numbers skipped by a publisher it followed without a break, and never across a resync', () => {
    const positions = new BusPositions('me');
    assert.equal(positions.received('t', { origin: 'p', n: 4 }), undefined);
    assert.equal(positions.received('t', { origin: 'p', n: 5 }), undefined);
    assert.deepEqual(positions.received('t', { origin: 'p', n: 8 }), { from: 6, to: 7 });
    assert.equal(positions.received('u', { origin: 'p', n: 20 }), undefined, 'topics are numbered apart');
    positions.resync();
    assert.equal(positions.received('t', { origin: 'p', n: 12 }), undefined);
    assert.deepEqual(positions.received('t', { origin: 'p', n: 14 }), { from: 13, to: 13 });
    assert.deepEqual(positions.position('t'), { p: 14, me: 0 });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
