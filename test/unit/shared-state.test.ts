import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { type EventBus, InProcessEventBus } from '../../src/platform/state/event-bus.ts';
import { InProcessIpBanStore, type IpBanStore } from '../../src/platform/state/ip-bans.ts';
import { gcra, InProcessRateLimiter, type RateLimiter } from '../../src/platform/state/rate-limiter.ts';
import { openRedisState } from '../../src/platform/state/redis.ts';

/**
 * One contract, every backend: the in-process implementations always, Redis too when TEST_REDIS_URL is set.
 */
interface Backend {
  rateLimiter: RateLimiter;
  ipBans: IpBanStore;
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
      assert.ok(ttl > 0 && ttl <= 60_000, `bucket key expires with the bucket, got ${ttl}`);
    });

    it('answers start-up with a clear error when Redis does not answer', async () => {
      await assert.rejects(openRedisState('redis://127.0.0.1:1', 'x:'), /REDIS_URL: cannot connect/);
    });
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
