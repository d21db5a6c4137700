import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  InProcessVoiceStateStore,
  type StoredVoiceState,
  type VoiceStateStore,
} from '../../src/platform/state/voice-states.ts';
import { stateBackends } from '../support/state-backends.ts';

/** The voice-state contract, in process always, on Redis when TEST_REDIS_URL is set, and in that leg
 * on a three-master Redis cluster too (test/support/redis-cluster.ts). */
const backends = stateBackends<VoiceStateStore>(
  () => new InProcessVoiceStateStore(),
  (state) => state.voiceStates,
);

const state = (userId: string, channelId: string, sessionId = `s${userId}`): StoredVoiceState => ({
  guild_id: '10',
  channel_id: channelId,
  user_id: userId,
  session_id: sessionId,
  deaf: false,
  mute: false,
  self_deaf: false,
  self_mute: false,
  self_video: false,
  self_stream: false,
  suppress: false,
  request_to_speak_timestamp: null,
});

for (const backend of backends) {
  describe(`voice state store (${backend.name})`, () => {
    const opened: { close(): Promise<void> }[] = [];
    after(async () => {
      for (const o of opened) await o.close();
    });
    const open = async () => {
      const o = await backend.open();
      opened.push(o);
      return o.store;
    };

    it('stores one state per user per guild and lists the guild', async () => {
      const store = await open();
      assert.equal(await store.put(state('1', '100'), 0), true);
      assert.equal(await store.put(state('1', '200'), 0), true);
      assert.deepEqual(await store.get('10', '1'), state('1', '200'));
      assert.deepEqual(await store.ofGuild('10'), [state('1', '200')]);
      assert.deepEqual(await store.ofGuild('11'), []);
    });

    it('holds the user limit, counting others only, and concurrent joins cannot overshoot', async () => {
      const store = await open();
      assert.equal(await store.put(state('1', '100'), 2), true);
      assert.equal(await store.put(state('1', '100'), 1), true, 'the user already there is not counted');
      const results = await Promise.all(['2', '3', '4', '5'].map((u) => store.put(state(u, '100'), 2)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await store.ofGuild('10')).filter((s) => s.channel_id === '100').length, 2);
    });

    it('removes only while the state belongs to the given session', async () => {
      const store = await open();
      await store.put(state('1', '100', 'a'), 0);
      assert.equal(await store.remove('10', '1', 'b'), undefined);
      assert.deepEqual(await store.remove('10', '1', 'a'), state('1', '100', 'a'));
      assert.equal(await store.get('10', '1'), undefined);
      await store.put(state('1', '100', 'a'), 0);
      assert.equal((await store.remove('10', '1'))?.session_id, 'a');
      assert.equal(await store.remove('10', '1'), undefined);
    });

    it('keeps grants by digest until they expire', async () => {
      const store = await open();
      const now = Date.now();
      const grant = { guildId: '10', channelId: '100', userId: '1', sessionId: 'a', expiresAt: now + 60_000 };
      await store.putGrant('digest-1', grant);
      assert.deepEqual(await store.grant('digest-1', now), grant);
      assert.deepEqual(await store.grant('digest-1', now), grant, 'readable again within its life');
      assert.equal(await store.grant('digest-1', now + 60_000), undefined);
      assert.equal(await store.grant('unknown', now), undefined);
    });

    it('hands each due AFK check to one taker, with the last activity; rescheduling and forgetting', async () => {
      const store = await open();
      await store.markActive('10', '1', 1_000, 61_000);
      await store.markActive('10', '2', 5_000, 65_000);
      await store.markActive('10', '3', 9_000, 69_000);
      assert.deepEqual(await store.takeDueAfkChecks(60_000, 10), []);
      const [a, b] = await Promise.all([store.takeDueAfkChecks(66_000, 10), store.takeDueAfkChecks(66_000, 10)]);
      const taken = [...(a ?? []), ...(b ?? [])].sort((x, y) => x.activeAt - y.activeAt);
      assert.deepEqual(taken, [
        { guildId: '10', userId: '1', activeAt: 1_000 },
        { guildId: '10', userId: '2', activeAt: 5_000 },
      ]);
      assert.deepEqual(await store.takeDueAfkChecks(66_000, 10), [], 'taken checks are not due again');
      await store.scheduleAfkCheck('10', '1', 70_000);
      await store.forgetActivity('10', '3');
      await store.scheduleAfkCheck('10', '3', 70_000);
      assert.deepEqual(await store.takeDueAfkChecks(80_000, 10), [{ guildId: '10', userId: '1', activeAt: 1_000 }]);
    });

    it('keeps DM-call states under the channel and one call record per channel, created once, deleted once', async () => {
      const store = await open();
      await store.put({ ...state('1', '500'), guild_id: null }, 0);
      assert.equal((await store.get('500', '1'))?.guild_id, null);
      assert.equal((await store.ofGuild('500')).length, 1);
      const record = { channel_id: '500', message_id: '9', region: 'hearth', ringing: ['2'], participants: ['1'] };
      const created = await Promise.all([store.createCall(record), store.createCall({ ...record, message_id: '8' })]);
      assert.deepEqual(created.sort(), [false, true]);
      await store.putCall({ ...record, message_id: (await store.call('500'))?.message_id ?? '', ringing: [] });
      assert.deepEqual((await store.call('500'))?.ringing, []);
      const deleted = await Promise.all([store.deleteCall('500'), store.deleteCall('500')]);
      assert.equal(deleted.filter(Boolean).length, 1);
      assert.equal(await store.call('500'), undefined);
    });

    it('lists the calls among channels, and hands each due ring check to one taker', async () => {
      const store = await open();
      const record = (channelId: string) => ({
        channel_id: channelId,
        message_id: `9${channelId}`,
        region: 'hearth',
        ringing: ['2'],
        participants: ['1'],
        ring_deadlines: { '2': 61_000 },
      });
      await store.createCall(record('600'));
      await store.createCall(record('601'));
      const listed = await store.callsOf(['600', '599', '601']);
      assert.deepEqual(
        listed.sort((a, b) => a.channel_id.localeCompare(b.channel_id)),
        [record('600'), record('601')],
      );
      assert.deepEqual(await store.callsOf([]), []);

      await store.scheduleRingCheck('600', 61_000);
      await store.scheduleRingCheck('601', 70_000);
      await store.scheduleRingCheck('602', 90_000);
      // A new schedule replaces the old one.
      await store.scheduleRingCheck('602', 65_000);
      assert.deepEqual(await store.takeDueRingChecks(60_000, 10), []);
      const [a, b] = await Promise.all([store.takeDueRingChecks(66_000, 10), store.takeDueRingChecks(66_000, 10)]);
      assert.deepEqual([...(a ?? []), ...(b ?? [])].sort(), ['600', '602']);
      assert.deepEqual(await store.takeDueRingChecks(66_000, 10), [], 'taken checks are not due again');
      assert.deepEqual(await store.takeDueRingChecks(100_000, 10), ['601']);
    });
  });
}
