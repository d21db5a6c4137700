import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  aggregatePresence,
  InProcessPresenceStore,
  type PresenceStore,
  type SessionPresence,
  samePresence,
} from '../../src/platform/state/presences.ts';
import { stateBackends } from '../support/state-backends.ts';

/** The presence contract, in process always, on Redis when TEST_REDIS_URL is set, and in that leg
 * on a three-master Redis cluster too (test/support/redis-cluster.ts). */
const backends = stateBackends<PresenceStore>(
  () => new InProcessPresenceStore(),
  (state) => state.presences,
);

const NOW = 1_000_000;
const entry = (overrides: Partial<SessionPresence> = {}): SessionPresence => ({
  status: 'online',
  activities: [],
  platform: 'web',
  afk: false,
  customStatus: null,
  updatedAt: NOW,
  expiresAt: NOW + 60_000,
  ...overrides,
});

describe('aggregatePresence', () => {
  it('is undefined (offline) without live sessions', () => {
    assert.equal(aggregatePresence([], NOW), undefined);
    assert.equal(aggregatePresence([entry({ expiresAt: NOW })], NOW), undefined);
  });

  it('takes the status of the most recently changed session and reports each platform', () => {
    const presence = aggregatePresence(
      [
        entry({ status: 'idle', platform: 'web', updatedAt: NOW - 10 }),
        entry({ status: 'dnd', platform: 'mobile', updatedAt: NOW - 5 }),
      ],
      NOW,
    );
    assert.deepEqual(presence, {
      status: 'dnd',
      activities: [],
      client_status: { mobile: 'dnd', web: 'idle' },
      afk: false,
      mobile: true,
      custom_status: null,
    });
  });

  it('hides a user whose latest choice is invisible, and caps activities at 10', () => {
    assert.equal(
      aggregatePresence([entry({ updatedAt: NOW - 10 }), entry({ status: 'invisible', updatedAt: NOW })], NOW),
      undefined,
    );
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `game ${i}`, type: 0 }));
    const presence = aggregatePresence(
      [entry({ activities: many }), entry({ activities: many, platform: 'desktop' })],
      NOW,
    );
    assert.equal(presence?.activities.length, 10);
  });

  it('compares aggregates by value', () => {
    assert.equal(samePresence(undefined, undefined), true);
    assert.equal(samePresence(aggregatePresence([entry()], NOW), aggregatePresence([entry()], NOW)), true);
    assert.equal(samePresence(aggregatePresence([entry()], NOW), undefined), false);
  });
});

for (const backend of backends) {
  describe(`presence store (${backend.name})`, () => {
    let opened: { store: PresenceStore; close(): Promise<void> } | undefined;
    after(async () => opened?.close());
    const store = async () => {
      opened ??= await backend.open();
      return opened.store;
    };

    it('reports the change of each update and goes offline when the last session leaves', async () => {
      const s = await store();
      const first = await s.update('1', 'a', entry(), NOW);
      assert.equal(first.before, undefined);
      assert.equal(first.after?.status, 'online');
      assert.equal(first.sessionsAfter, 1);
      const second = await s.update('1', 'b', entry({ status: 'idle', platform: 'mobile', updatedAt: NOW + 1 }), NOW);
      assert.equal(second.before?.status, 'online');
      assert.deepEqual(second.after?.client_status, { mobile: 'idle', web: 'online' });
      assert.equal(second.sessionsAfter, 2);
      const third = await s.update('1', 'b', undefined, NOW);
      assert.equal(third.after?.status, 'online');
      assert.equal(third.sessionsAfter, 1);
      const last = await s.update('1', 'a', undefined, NOW);
      assert.equal(last.before?.status, 'online');
      assert.equal(last.after, undefined);
      // The last session anywhere is gone (temporary memberships end on this).
      assert.equal(last.sessionsAfter, 0);
      assert.equal((await s.getMany(['1'], NOW)).size, 0);
    });

    it('reads many users at once, leaving out the offline and the expired', async () => {
      const s = await store();
      await s.update('10', 'a', entry({ status: 'dnd' }), NOW);
      await s.update('11', 'a', entry({ expiresAt: NOW + 5 }), NOW);
      await s.update('12', 'a', entry({ status: 'invisible' }), NOW);
      const found = await s.getMany(['10', '11', '12', '13'], NOW + 10);
      assert.deepEqual([...found.keys()], ['10']);
      assert.equal(found.get('10')?.status, 'dnd');
      // An invisible session counts as a session; an expired one (its process died) does not.
      assert.equal((await s.update('12', 'b', entry(), NOW)).sessionsAfter, 2);
      assert.equal((await s.update('11', 'b', undefined, NOW + 10)).sessionsAfter, 0);
    });

    it('refreshes live entries without reviving removed ones', async () => {
      const s = await store();
      await s.update('20', 'a', entry({ expiresAt: NOW + 5 }), NOW);
      await s.update('21', 'a', entry({ expiresAt: NOW + 5 }), NOW);
      await s.update('21', 'a', undefined, NOW);
      await s.refresh([
        { userId: '20', sessionId: 'a', entry: entry({ expiresAt: NOW + 100 }) },
        { userId: '21', sessionId: 'a', entry: entry({ expiresAt: NOW + 100 }) },
      ]);
      const found = await s.getMany(['20', '21'], NOW + 50);
      assert.deepEqual([...found.keys()], ['20']);
    });

    it('resets', async () => {
      const s = await store();
      await s.update('30', 'a', entry(), NOW);
      await s.reset();
      assert.equal((await s.getMany(['30'], NOW)).size, 0);
    });
  });
}
