import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until, type VideoCodec, VoiceTestClient } from '../support/voice-client.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
let guild: { id: string; system_channel_id: string };
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

async function joinVoice(
  user: TestUser,
  channelId: string,
  setup?: (voice: VoiceTestClient) => void,
  options?: { videoCodecs?: VideoCodec[] },
): Promise<VoiceTestClient> {
  const { client: gw } = await readyClient(server, user.token);
  gateways.push(gw);
  gw.send({ op: 4, d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false } });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
  const voice = new VoiceTestClient(update.d.endpoint, update.d.token, options);
  setup?.(voice);
  voices.push(voice);
  await voice.negotiations(1);
  return voice;
}

/** Keeps each of `voices` sending video frames (a key frame every 10th) until `check` holds. */
async function streamUntil(
  voices: VoiceTestClient | VoiceTestClient[],
  kind: 'camera' | 'screen',
  check: () => boolean,
  what: string,
) {
  let done = false;
  let frame = 0;
  const sending = (async () => {
    while (!done) {
      const keyFrame = frame++ % 10 === 0;
      for (const voice of [voices].flat()) voice.sendVideoPacket(kind, keyFrame);
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
  [owner, alice, bob, carol, dave] = await Promise.all([
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
    registerUser(server),
  ]);
  guild = await newGuild(server, owner);
  for (const user of [alice, bob, carol, dave]) await join(server, owner, user, guild);
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

  it('an H.264 camera and a VP8 camera reach each subscriber with its payload type for each codec; one without H.264 gets the VP8 only', async () => {
    const room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'codecs', type: 2 }))).id;
    const droppedBefore = server.app.sfu?.stats().dropped ?? 0;
    const a = await joinVoice(alice, room, (v) => v.publishVideo('camera', 'H264'));
    const b = await joinVoice(bob, room, (v) => v.publishVideo('camera', 'VP8'));
    const c = await joinVoice(carol, room);
    const d = await joinVoice(dave, room, undefined, { videoCodecs: ['VP8'] });
    await streamUntil(
      [a, b],
      'camera',
      () => c.count(alice.id, 'camera') >= 10 && c.count(bob.id, 'camera') >= 10 && d.count(bob.id, 'camera') >= 10,
      'carol receives both cameras and dave the VP8 one',
    );
    // werift's sender alone would have labelled every packet with its first negotiated codec (VP8, 96).
    assert.equal(c.lastPacket.get(`${alice.id}:camera`)?.header.payloadType, 102);
    assert.equal(c.lastPacket.get(`${bob.id}:camera`)?.header.payloadType, 96);
    assert.equal(b.lastPacket.get(`${alice.id}:camera`)?.header.payloadType, 102);
    assert.equal(a.lastPacket.get(`${bob.id}:camera`)?.header.payloadType, 96);
    assert.equal(d.lastPacket.get(`${bob.id}:camera`)?.header.payloadType, 96);
    // Dave's answer accepted VP8 only: Alice's H.264 is not sent to him under a payload type he would misread.
    assert.equal(d.count(alice.id, 'camera'), 0);
    assert.ok((server.app.sfu?.stats().dropped ?? 0) > droppedBefore, 'counted as dropped');
  });

  it('a key-frame request sent from the subscriber’s own upstream SSRC, as Chromium sends it, reaches the publisher', async () => {
    const room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'pli', type: 2 }))).id;
    const a = await joinVoice(alice, room, (v) => v.publishVideo('camera'));
    const b = await joinVoice(bob, room);
    await streamUntil(a, 'camera', () => b.count(alice.id, 'camera') >= 10, 'bob receives alice’s camera');
    // The SFU's own requests (a new subscriber, a new stream) are over: the count holds still.
    const before = a.keyFrameRequests.get('camera') ?? 0;
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(a.keyFrameRequests.get('camera') ?? 0, before);
    await b.requestKeyFrame(alice.id, 'camera');
    await until(() => (a.keyFrameRequests.get('camera') ?? 0) > before, 'alice is asked for a key frame');
  });

  it('layer selection: each subscriber gets the temporal layers of a VP8 camera its bandwidth estimate fits, gapless, and more when it says it can take more', async () => {
    const room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'layers', type: 2 }))).id;
    const a = await joinVoice(alice, room, (v) => v.publishVideo('camera'));
    const b = await joinVoice(bob, room);
    const c = await joinVoice(carol, room);
    const d = await joinVoice(dave, room);
    const received = new Map<VoiceTestClient, { tid: number; sequence: number; pictureId: number }[]>();
    for (const voice of [b, c, d]) {
      received.set(voice, []);
      voice.onPacket = (from, packet) => {
        if (from !== alice.id || packet.payload[0] !== 0x90) return;
        const pictureId = (((packet.payload[2] ?? 0) & 0x7f) << 8) | (packet.payload[3] ?? 0);
        const tid = (packet.payload[5] ?? 0) >> 6;
        received.get(voice)?.push({ tid, sequence: packet.header.sequenceNumber, pictureId });
      };
    }
    // 30 frames/s in the usual three-layer pattern 0, 2, 1, 2: layer 0 ≈ 60 kbit/s, with layer 1 ≈ 96, all ≈ 144.
    let frame = 0;
    let sending = true;
    const started = performance.now();
    const stream = (async () => {
      while (sending) {
        // Paced by the clock, not by the timer: on a busy machine a late timer sends the frames that are due, so
        // the stream keeps its 30 frames/s and the layers' weights, which the estimates below are set against.
        if (frame >= ((performance.now() - started) * 30) / 1000) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const position = frame % 4;
        const temporalId = [0, 2, 1, 2][position] ?? 0;
        a.sendVideoPacket('camera', frame % 60 === 0, [1000, 400, 600, 400][position], {
          temporalId,
          layerSync: position === 1 || position === 2,
          pictureId: frame & 0x7fff,
        });
        frame++;
      }
    })();
    try {
      await until(() => [b, c, d].every((v) => v.count(alice.id, 'camera') >= 10), 'everyone receives the camera');
      await b.sendBandwidthEstimate(70_000);
      await d.sendBandwidthEstimate(110_000);
      // The layers' weights are measured over a second; then each subscriber settles on its layers.
      await new Promise((r) => setTimeout(r, 2500));
      for (const list of received.values()) list.length = 0;
      await new Promise((r) => setTimeout(r, 2000));
      const layersOf = (voice: VoiceTestClient) => [...new Set(received.get(voice)?.map((p) => p.tid))].sort();
      assert.deepEqual(layersOf(b), [0], 'bob (70 kbit/s) gets layer 0 only');
      assert.deepEqual(layersOf(d), [0, 1], 'dave (110 kbit/s) gets layers 0 and 1');
      assert.deepEqual(layersOf(c), [0, 1, 2], 'carol (no estimate) gets every layer');
      // What is dropped leaves no hole: sequence numbers and picture IDs go on one by one.
      for (const voice of [b, d]) {
        const packets = received.get(voice) ?? [];
        assert.ok(packets.length >= 10);
        for (let i = 1; i < packets.length; i++) {
          assert.equal(packets[i]?.sequence, ((packets[i - 1]?.sequence ?? 0) + 1) & 0xffff);
          assert.equal(packets[i]?.pictureId, ((packets[i - 1]?.pictureId ?? 0) + 1) & 0x7fff);
        }
      }
      // Bob's estimate rises: layers come back at the next layer-sync or key frame.
      await b.sendBandwidthEstimate(1_000_000);
      await until(() => received.get(b)?.some((p) => p.tid === 2) ?? false, 'bob gets layer 2 again');
    } finally {
      sending = false;
      await stream;
    }
  });
});
