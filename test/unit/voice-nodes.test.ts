import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openRedisClusterState, openRedisState } from '../../src/platform/state/redis.ts';
import { InProcessVoiceNodeStore, type VoiceNodeStore } from '../../src/platform/state/voice-nodes.ts';
import {
  closeSharedRedisCluster,
  clusterSeeds,
  sharedRedisCluster,
  TEST_REDIS_CLUSTER,
} from '../support/redis-cluster.ts';

/**
 * The voice-node contract (docs/voice.md#room-placement), in process always, on Redis when TEST_REDIS_URL is set,
 * and in that leg on a three-master Redis cluster too (test/support/redis-cluster.ts).
 */
const backends: { name: string; open(): Promise<{ store: VoiceNodeStore; close(): Promise<void> }> }[] = [
  { name: 'in-process', open: async () => ({ store: new InProcessVoiceNodeStore(), close: async () => {} }) },
];
const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl)
  backends.push({
    name: 'redis',
    async open() {
      const state = await openRedisState(redisUrl, `hearth-unit-${randomBytes(6).toString('hex')}:`);
      return { store: state.voiceNodes, close: state.close };
    },
  });
if (TEST_REDIS_CLUSTER) {
  after(closeSharedRedisCluster);
  backends.push({
    name: 'redis cluster',
    async open() {
      const cluster = await sharedRedisCluster();
      const state = await openRedisClusterState(
        clusterSeeds(cluster),
        `hearth-unit-${randomBytes(6).toString('hex')}:`,
      );
      return { store: state.voiceNodes, close: state.close };
    },
  });
}

const node = (id: string, participants = 0) => ({
  id,
  endpoint: `wss://${id}.example.test/voice`,
  rooms: 0,
  participants,
});

for (const backend of backends)
  describe(`voice nodes (${backend.name})`, () => {
    let store: VoiceNodeStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await backend.open());
    });
    after(() => close());

    it('an announcement lives for its TTL and a withdrawal ends it at once', async () => {
      await store.announce(node('a', 3), 60_000);
      await store.announce(node('b'), 150);
      assert.deepEqual(
        (await store.liveNodes()).sort((x, y) => (x.id < y.id ? -1 : 1)),
        [node('a', 3), node('b')],
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await store.liveNodes(), [node('a', 3)]);
      await store.withdraw('a');
      assert.deepEqual(await store.liveNodes(), []);
    });

    it('a room keeps its live node, moves off a dead one, and a reassignment is a compare-and-set', async () => {
      const first = await store.place('g:1', 'a', ['a', 'b'], 1000);
      assert.deepEqual(first, { assignment: { node: 'a', at: 1000 }, previous: undefined });
      // Another candidate while `a` is live: the room stays on `a` (the placement is refreshed).
      assert.deepEqual(await store.place('g:1', 'b', ['a', 'b'], 2000), {
        assignment: { node: 'a', at: 2000 },
        previous: undefined,
      });
      // `a` is no longer live: the room goes to the candidate, and the caller learns where it was.
      assert.deepEqual(await store.place('g:1', 'b', ['b'], 3000), {
        assignment: { node: 'b', at: 3000 },
        previous: { node: 'a', at: 2000 },
      });
      assert.equal(await store.reassign('g:1', { node: 'b', at: 2000 }, { node: 'c', at: 4000 }), false, 'stale');
      assert.equal(await store.reassign('g:1', { node: 'b', at: 3000 }, { node: 'c', at: 4000 }), true);
      assert.deepEqual(await store.assignments(), new Map([['g:1', { node: 'c', at: 4000 }]]));
      assert.deepEqual(await store.assignmentsOf(['g:2', 'g:1']), [undefined, { node: 'c', at: 4000 }]);
      assert.deepEqual(await store.assignmentsOf([]), []);
      assert.equal(await store.reassign('g:1', { node: 'c', at: 4000 }, null), true);
      assert.deepEqual(await store.assignments(), new Map());
    });
  });
