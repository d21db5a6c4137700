import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { openRedisState } from '../../src/platform/state/redis.ts';
import {
  InProcessVoiceStateStore,
  type StoredVoiceState,
  type VoiceStateStore,
} from '../../src/platform/state/voice-states.ts';

/** The voice-state contract, in process always and on Redis when TEST_REDIS_URL is set. */
const backends: { name: string; open(): Promise<{ store: VoiceStateStore; close(): Promise<void> }> }[] = [
  { name: 'in-process', open: async () => ({ store: new InProcessVoiceStateStore(), close: async () => {} }) },
];
const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl)
  backends.push({
    name: 'redis',
    async open() {
      const state = await openRedisState(redisUrl, `hearth-unit-${randomBytes(6).toString('hex')}:`);
      return { store: state.voiceStates, close: state.close };
    },
  });

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
  });
}
