import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { as, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { speakUntil, VoiceTestClient } from '../support/voice-client.ts';
import { call, dmCallServer, dmState, event } from './dm-call-frames.ts';
import { GatewayClient } from './gateway-client.ts';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const { gateway, clients, voices } = dmCallServer((started) => ({ server, alice, bob, carol } = started));

async function dm(from: TestUser, to: TestUser): Promise<string> {
  return (await ok(as(server, from, 'POST', '/users/@me/channels', { recipient_id: to.id }))).id;
}

const voiceOf = (userId: string, channelId: string | null) =>
  event('VOICE_STATE_UPDATE', (d) => d.user_id === userId && d.channel_id === channelId);

describe('DM and group-DM calls', () => {
  it('the first join rings the other side (CALL_CREATE, a CALL message); accepting, hanging up, CALL_DELETE', async () => {
    const channelId = await dm(alice, bob);
    const { client: aliceGw, session: aliceSession } = await gateway(alice);
    const { client: bobGw, session: bobSession } = await gateway(bob);

    call(aliceGw, channelId);
    const created = (await bobGw.next(event('CALL_CREATE'))).d as any;
    assert.match(created.message_id, /^\d+$/);
    assert.deepEqual(created, {
      channel_id: channelId,
      message_id: created.message_id,
      region: 'hearth',
      ringing: [bob.id],
      voice_states: [dmState(channelId, alice.id, aliceSession)],
    });
    assert.deepEqual((await aliceGw.next(event('CALL_CREATE'))).d, created);
    const message = (await bobGw.next(event('MESSAGE_CREATE'))).d as any;
    assert.equal(message.id, created.message_id);
    assert.equal(message.type, 3);
    assert.equal(message.content, '');
    assert.equal(message.author.id, alice.id);
    assert.deepEqual(message.call, { participants: [alice.id], ended_timestamp: null });
    assert.deepEqual((await bobGw.next(voiceOf(alice.id, channelId))).d, dmState(channelId, alice.id, aliceSession));
    const server1 = (await aliceGw.dispatch('VOICE_SERVER_UPDATE')).d as any;
    assert.deepEqual(Object.keys(server1).sort(), ['channel_id', 'endpoint', 'token']);
    assert.equal(server1.channel_id, channelId);
    assert.equal(server1.endpoint, `${server.url.replace(/^http/, 'ws')}/voice`);
    assert.match(server1.token, /^[A-Za-z0-9]{40}$/);
    assert.ok(await bobGw.nothing(event('VOICE_SERVER_UPDATE'), 100));

    // Bob accepts: he stops ringing and becomes a participant.
    call(bobGw, channelId, { self_mute: true });
    assert.deepEqual((await aliceGw.next(event('CALL_UPDATE'))).d, {
      channel_id: channelId,
      message_id: created.message_id,
      region: 'hearth',
      ringing: [],
    });
    const updated = (await aliceGw.next(event('MESSAGE_UPDATE'))).d as any;
    assert.equal(updated.id, created.message_id);
    assert.equal(updated.edited_timestamp, null);
    assert.deepEqual(updated.call, { participants: [alice.id, bob.id], ended_timestamp: null });
    assert.deepEqual(
      (await aliceGw.next(voiceOf(bob.id, channelId))).d,
      dmState(channelId, bob.id, bobSession, { self_mute: true }),
    );
    assert.equal(((await bobGw.dispatch('VOICE_SERVER_UPDATE')).d as any).channel_id, channelId);

    // Each hears the other through the SFU room of the DM channel.
    const aliceVoice = new VoiceTestClient(server1.endpoint, server1.token);
    voices.push(aliceVoice);
    await aliceVoice.negotiations(1);
    assert.equal(aliceVoice.messages.find((m) => m.op === 'ready')?.d.channel_id, channelId);
    assert.equal(aliceVoice.messages.find((m) => m.op === 'ready')?.d.guild_id, null);

    // Alice hangs up (op 4 with channel_id null): Bob hears it; the call goes on.
    call(aliceGw, null);
    assert.deepEqual(
      (await bobGw.next(voiceOf(alice.id, null))).d,
      dmState(channelId, alice.id, aliceSession, { channel_id: null }),
    );
    assert.ok(await bobGw.nothing(event('CALL_DELETE'), 200));
    await aliceVoice.closed;

    // Bob, the last one, hangs up: the call ends.
    call(bobGw, null);
    assert.deepEqual((await aliceGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    assert.deepEqual((await bobGw.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    const ended = (await aliceGw.next(event('MESSAGE_UPDATE', (d) => d.call?.ended_timestamp))).d as any;
    assert.deepEqual(ended.call.participants, [alice.id, bob.id]);
    assert.ok(!Number.isNaN(Date.parse(ended.call.ended_timestamp)));
    const [listed] = await ok(as(server, bob, 'GET', `/channels/${channelId}/messages?limit=1`));
    assert.equal(listed.id, created.message_id);
    assert.deepEqual(listed.call, ended.call);
  });

  it('two people in a DM call each receive the other’s audio', async () => {
    const channelId = await dm(alice, bob);
    const { client: watcher } = await gateway(alice);
    const joined: { gw: GatewayClient; voice: VoiceTestClient }[] = [];
    for (const user of [alice, bob]) {
      const { client: gw } = await gateway(user);
      call(gw, channelId);
      const update = (await gw.dispatch('VOICE_SERVER_UPDATE')).d as any;
      const voice = new VoiceTestClient(update.endpoint, update.token);
      voices.push(voice);
      await voice.negotiations(1);
      joined.push({ gw, voice });
    }
    const [a, b] = joined as [(typeof joined)[0], (typeof joined)[0]];
    await speakUntil(a.voice, () => (b.voice.received.get(alice.id) ?? 0) >= 10, 'bob hears alice');
    await speakUntil(b.voice, () => (a.voice.received.get(bob.id) ?? 0) >= 10, 'alice hears bob');
    // A session that ends leaves the call; the last one's end ends it.
    await a.gw.close(1000);
    await b.gw.next(voiceOf(alice.id, null));
    await b.gw.close(1000);
    assert.deepEqual((await watcher.next(event('CALL_DELETE'))).d, { channel_id: channelId });
    assert.equal(await server.app.services.voice.stateOf(channelId, bob.id), undefined);
  });

  it('group DM: ring, decline (stop-ringing for oneself), ring again, stop ringing others', async () => {
    const group = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id] }));
    const { client: aliceGw } = await gateway(alice);
    const { client: carolGw } = await gateway(carol);
    const noCall = await as(server, alice, 'POST', `/channels/${group.id}/call/ring`, {});
    assert.equal(noCall.status, 404);
    assert.equal(noCall.body.code, 'UNKNOWN_CALL');

    call(aliceGw, group.id);
    const created = (await carolGw.next(event('CALL_CREATE'))).d as any;
    assert.deepEqual([...created.ringing].sort(), [bob.id, carol.id].sort());
    const view = (ringing: string[]) => ({
      channel_id: group.id,
      message_id: created.message_id,
      region: 'hearth',
      ringing,
    });

    const declined = await as(server, carol, 'POST', `/channels/${group.id}/call/stop-ringing`);
    assert.equal(declined.status, 204);
    assert.deepEqual((await aliceGw.next(event('CALL_UPDATE'))).d, view([bob.id]));
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([bob.id]));
    // Declining again changes nothing.
    assert.equal((await as(server, carol, 'POST', `/channels/${group.id}/call/stop-ringing`)).status, 204);
    assert.ok(await aliceGw.nothing(event('CALL_UPDATE'), 200));

    assert.equal(
      (await as(server, alice, 'POST', `/channels/${group.id}/call/ring`, { recipients: [carol.id] })).status,
      204,
    );
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([bob.id, carol.id]));
    // Ringing someone in the call (Alice herself) or no recipient at all changes nothing.
    assert.equal(
      (await as(server, alice, 'POST', `/channels/${group.id}/call/ring`, { recipients: [alice.id] })).status,
      204,
    );
    assert.equal(
      (
        await as(server, alice, 'POST', `/channels/${group.id}/call/stop-ringing`, {
          recipients: [bob.id, carol.id],
        })
      ).status,
      204,
    );
    assert.deepEqual((await carolGw.next(event('CALL_UPDATE'))).d, view([]));

    // Not a recipient: 403; not a private channel: 400; a malformed recipient: 400.
    const outsider = await registerUser(server);
    const foreign = await as(server, outsider, 'POST', `/channels/${group.id}/call/ring`, {});
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.code, 'MISSING_ACCESS');
    const guild = await newGuild(server, outsider);
    const text = await as(server, outsider, 'POST', `/channels/${guild.system_channel_id}/call/ring`, {});
    assert.equal(text.status, 400);
    assert.equal(text.body.code, 'CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
    const bad = await as(server, alice, 'POST', `/channels/${group.id}/call/ring`, { recipients: ['x'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
    // A guild channel id with guild_id null in op 4 is refused in silence.
    call(carolGw, guild.system_channel_id);
    assert.ok(await carolGw.nothing(event('VOICE_SERVER_UPDATE'), 200));

    call(aliceGw, null);
    assert.deepEqual((await carolGw.next(event('CALL_DELETE'))).d, { channel_id: group.id });
  });

  it('a session that connects during a call gets CALL_CREATE right after READY (ringing, voice states)', async () => {
    const group = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id] }));
    const { client: aliceGw, session: aliceSession } = await gateway(alice);
    call(aliceGw, group.id, { self_mute: true });
    const created = (await aliceGw.next(event('CALL_CREATE'))).d as any;
    await aliceGw.dispatch('VOICE_SERVER_UPDATE');

    // Carol connects mid-call: READY says nothing of calls (as Discord's), the next dispatch is the call.
    const late = GatewayClient.connect(server);
    clients.push(late);
    const ready = await late.ready(carol.token);
    assert.equal('calls' in (ready.d as any), false);
    const afterReady = await late.next((f) => f.op === 0);
    assert.equal(afterReady.t, 'CALL_CREATE');
    assert.equal(afterReady.s, (ready.s as number) + 1);
    assert.deepEqual(afterReady.d, {
      channel_id: group.id,
      message_id: created.message_id,
      region: 'hearth',
      ringing: created.ringing,
      voice_states: [dmState(group.id, alice.id, aliceSession, { self_mute: true })],
    });
    assert.deepEqual([...created.ringing].sort(), [bob.id, carol.id].sort());

    // Bob answers; a session of his that connects now sees the call without himself ringing, and both states.
    const { client: bobGw, session: bobSession } = await gateway(bob);
    await bobGw.next(event('CALL_CREATE'));
    call(bobGw, group.id);
    await late.next(event('CALL_UPDATE', (d) => !d.ringing.includes(bob.id)));
    const again = GatewayClient.connect(server);
    clients.push(again);
    await again.ready(bob.token);
    const seen = (await again.next((f) => f.op === 0)).d as any;
    assert.deepEqual(seen.ringing, [carol.id]);
    assert.deepEqual(
      [...seen.voice_states].sort((a: any, b: any) => (a.user_id === alice.id ? -1 : b.user_id === alice.id ? 1 : 0)),
      [dmState(group.id, alice.id, aliceSession, { self_mute: true }), dmState(group.id, bob.id, bobSession)],
    );

    // Once the call is over, a new session gets no CALL_CREATE.
    call(aliceGw, null);
    call(bobGw, null);
    await late.next(event('CALL_DELETE'));
    const later = GatewayClient.connect(server);
    clients.push(later);
    await later.ready(carol.token);
    assert.ok(await later.nothing(event('CALL_CREATE'), 300));
  });

  it('a blocked pair cannot call; in a group DM the blocked are not rung', async () => {
    const channelId = await dm(alice, bob);
    const group = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id] }));
    await ok(as(server, bob, 'PUT', `/users/@me/relationships/${alice.id}`, { type: 2 }));
    const { client: aliceGw } = await gateway(alice);
    const { client: carolGw } = await gateway(carol);
    call(aliceGw, channelId);
    assert.ok(await aliceGw.nothing(event('VOICE_SERVER_UPDATE'), 300));
    assert.ok(await aliceGw.nothing(event('CALL_CREATE'), 50));
    assert.equal(await server.app.services.voice.stateOf(channelId, alice.id), undefined);

    call(aliceGw, group.id);
    assert.deepEqual(((await carolGw.next(event('CALL_CREATE'))).d as any).ringing, [carol.id]);
    await aliceGw.dispatch('VOICE_SERVER_UPDATE');
    // Ringing the blocker on purpose does nothing either.
    assert.equal(
      (await as(server, alice, 'POST', `/channels/${group.id}/call/ring`, { recipients: [bob.id] })).status,
      204,
    );
    assert.ok(await carolGw.nothing(event('CALL_UPDATE'), 200));
    call(aliceGw, null);
    await carolGw.next(event('CALL_DELETE'));
    assert.equal((await as(server, bob, 'DELETE', `/users/@me/relationships/${alice.id}`)).status, 204);
  });
});
