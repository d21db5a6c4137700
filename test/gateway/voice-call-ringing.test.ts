import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { as, ok } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { VoiceTestClient } from '../support/voice-client.ts';
import { call, dmCallServer, dmState, event } from './dm-call-frames.ts';

// The ringing timeout (docs/voice.md#ringing-timeout), shortened to one second for these tests.
const RING_TIMEOUT_MS = 1000;

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const { gateway, voices } = dmCallServer((started) => ({ server, alice, bob, carol } = started), {
  HEARTH_VOICE_RING_TIMEOUT_MS: String(RING_TIMEOUT_MS),
});

describe('the ringing timeout of DM and group-DM calls', () => {
  it('an unanswered DM call stops ringing after the timeout and, nobody having joined, ends', async () => {
    const channelId = (await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }))).id;
    const { client: aliceGw, session: aliceSession } = await gateway(alice);
    const { client: bobGw } = await gateway(bob);

    call(aliceGw, channelId);
    const created = (await bobGw.next(event('CALL_CREATE'))).d as any;
    const startedAt = Date.now();
    assert.deepEqual(created.ringing, [bob.id]);
    const server1 = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    const aliceVoice = new VoiceTestClient(server1.endpoint, server1.token);
    voices.push(aliceVoice);
    await aliceVoice.negotiations(1);

    // Bob neither accepts nor declines: his ringing stops, for both of them.
    const stopped = {
      channel_id: channelId,
      message_id: created.message_id,
      region: 'hearth',
      ringing: [],
    };
    assert.deepEqual((await bobGw.next(event('CALL_UPDATE'))).d, stopped);
    assert.ok(Date.now() - startedAt >= RING_TIMEOUT_MS - 100, 'not before the timeout');
    assert.deepEqual((await aliceGw.next(event('CALL_UPDATE'))).d, stopped);
    // Nobody but the caller joined: she is hung up, and the call ends.
    assert.deepEqual(
      (await bobGw.next(event('VOICE_STATE_UPDATE', (d) => d.channel_id === null))).d,
      dmState(channelId, alice.id, aliceSession, { channel_id: null }),
    );
    assert.deepEqual((await aliceGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    assert.deepEqual((await bobGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    const ended = (await bobGw.next(event('MESSAGE_UPDATE', (d) => d.call?.ended_timestamp))).d as any;
    assert.equal(ended.id, created.message_id);
    assert.deepEqual(ended.call.participants, [alice.id]);
    assert.equal((await aliceVoice.closed).code, 4014);
    assert.equal(await server.app.services.voice.stateOf(channelId, alice.id), undefined);

    // A new call in the same DM starts afresh.
    call(aliceGw, channelId);
    const again = (await bobGw.next(event('CALL_CREATE'))).d as any;
    assert.notEqual(again.message_id, created.message_id);
    assert.deepEqual(again.ringing, [bob.id]);
    call(aliceGw, null);
    assert.deepEqual((await bobGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
  });

  it('a declined DM call ends at the timeout: no CALL_UPDATE then, the caller hung up, CALL_DELETE', async () => {
    const channelId = (await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }))).id;
    const { client: aliceGw, session: aliceSession } = await gateway(alice);
    const { client: bobGw } = await gateway(bob);
    call(aliceGw, channelId);
    const created = (await bobGw.next(event('CALL_CREATE'))).d as any;
    assert.equal((await as(server, bob, 'POST', `/channels/${channelId}/call/stop-ringing`)).status, 204);
    assert.deepEqual((await aliceGw.next(event('CALL_UPDATE'))).d, {
      channel_id: channelId,
      message_id: created.message_id,
      region: 'hearth',
      ringing: [],
    });
    assert.deepEqual(
      (await aliceGw.next(event('VOICE_STATE_UPDATE', (d) => d.channel_id === null))).d,
      dmState(channelId, alice.id, aliceSession, { channel_id: null }),
    );
    assert.deepEqual((await bobGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    assert.deepEqual(
      aliceGw.pending().filter((f) => f.t === 'CALL_UPDATE'),
      [],
    );
  });

  it('group DM: one who does not answer stops ringing; the call that others joined goes on', async () => {
    const group = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id] }));
    const { client: aliceGw, session: aliceSession } = await gateway(alice);
    const { client: bobGw, session: bobSession } = await gateway(bob);
    const { client: carolGw } = await gateway(carol);
    call(aliceGw, group.id);
    const created = (await carolGw.next(event('CALL_CREATE'))).d as any;
    assert.deepEqual([...created.ringing].sort(), [bob.id, carol.id].sort());
    const view = (ringing: string[]) => ({
      channel_id: group.id,
      message_id: created.message_id,
      region: 'hearth',
      ringing,
    });
    // Bob accepts at once.
    call(bobGw, group.id);
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([carol.id]));
    // Carol does not answer: after the timeout she stops ringing; Alice and Bob stay.
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([]));
    assert.ok(await carolGw.nothing(event('CALL_DELETE'), 500));
    assert.deepEqual(
      await server.app.services.voice.stateOf(group.id, alice.id),
      dmState(group.id, alice.id, aliceSession),
    );
    assert.deepEqual(await server.app.services.voice.stateOf(group.id, bob.id), dmState(group.id, bob.id, bobSession));

    // Rung again, she rings for another timeout, then stops again.
    const rungAt = Date.now();
    assert.equal(
      (await as(server, bob, 'POST', `/channels/${group.id}/call/ring`, { recipients: [carol.id] })).status,
      204,
    );
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([carol.id]));
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([]));
    assert.ok(Date.now() - rungAt >= RING_TIMEOUT_MS - 100, 'not before the timeout');

    call(aliceGw, null);
    call(bobGw, null);
    assert.deepEqual((await carolGw.next(event('CALL_DELETE'))).d, { channel_id: group.id });
  });
});
