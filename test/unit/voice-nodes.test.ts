import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessVoiceNodeStore, type VoiceNodeStore } from '../../src/platform/state/voice-nodes.ts';
import { stateBackends } from '../support/state-backends.ts';

/**
 * The voice-node contract (docs/voice.md#room-placement), in process always, on Redis when TEST_REDIS_URL is set,
 * and in that leg on a three-master Redis cluster too (test/support/redis-cluster.ts).
 */
const backends = stateBackends<VoiceNodeStore>(
  () => new InProcessVoiceNodeStore(),
  (state) => state.voiceNodes,
);

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
