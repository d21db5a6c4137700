import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until, VoiceTestClient } from '../support/voice-client.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: { id: string; system_channel_id: string };
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

async function joinVoice(
  user: TestUser,
  channelId: string,
  setup?: (voice: VoiceTestClient) => void,
): Promise<VoiceTestClient> {
  const { client: gw } = await readyClient(server, user.token);
  gateways.push(gw);
  gw.send({ op: 4, d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false } });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
  const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
  setup?.(voice);
  voices.push(voice);
  await voice.negotiations(1);
  return voice;
}

/** Keeps `voice` sending video frames (a key frame every 10th) until `check` holds. */
async function streamUntil(voice: VoiceTestClient, kind: 'camera' | 'screen', check: () => boolean, what: string) {
  let done = false;
  let frame = 0;
  const sending = (async () => {
    while (!done) {
      voice.sendVideoPacket(kind, frame++ % 10 === 0);
      await new Promise((r) => setTimeout(r, 33));
    }
  })();
  try {
    await until(check, what, 10_000);
  } finally {
    done = true;
    await sending;
  }
}

before(async () => {
  server = await startTestServer();
  [owner, alice, bob] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  guild = await newGuild(server, owner);
  for (const user of [alice, bob]) await join(server, owner, user, guild);
});

after(async () => {
  await Promise.all(voices.map((v) => v.close().catch(() => {})));
  await Promise.all(gateways.map((g) => g.close()));
  await server.close();
});

describe('video through the embedded SFU (werift clients)', () => {
  it('a camera published by one member reaches the other as RTP on a video m-line', async () => {
    const room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'cams', type: 2 }))).id;
    const a = await joinVoice(alice, room, (v) => v.publishVideo('camera'));
    const b = await joinVoice(bob, room);
    await streamUntil(a, 'camera', () => b.count(alice.id, 'camera') >= 10, 'bob receives alice’s camera');
    const packet = b.lastPacket.get(`${alice.id}:camera`);
    assert.ok(packet);
    assert.equal(packet.header.payloadType, 96);
    // The downstream m-line is a new one: the subscriber's own upstream slots (mids 0–2) are never taken over.
    const offers = b.messages.filter((m) => m.op === 'offer');
    const last = offers[offers.length - 1]?.d;
    const upstreamMids = last.upstream.map((u: { mid: string }) => u.mid);
    assert.deepEqual(upstreamMids, ['0', '1', '2']);
    const camera = last.tracks.find((t: { user_id: string; kind: string }) => t.user_id === alice.id);
    assert.ok(camera && !upstreamMids.includes(camera.mid));
  });
});
