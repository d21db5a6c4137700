import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HANDSHAKE_LIMIT } from '../../src/domains/voice/sfu/handshake-gate.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { VoiceTestClient } from '../support/voice-client.ts';
import { closeVoice, joinVoiceChannel } from '../support/voice-join.ts';
import type { GatewayClient } from './gateway-client.ts';

let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

async function joinVoice(user: TestUser): Promise<VoiceTestClient> {
  const voice = await joinVoiceChannel(server, user, { guildId: guild.id, channelId: room }, { gateways, voices });
  await voice.negotiations(1);
  return voice;
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  guild = await newGuild(server, owner);
  room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
});

after(async () => {
  await closeVoice({ gateways, voices });
  await server.close();
});

describe('join admission (docs/voice.md#join-admission)', () => {
  it('a wave of joins larger than the handshake limit is queued, and every member ends up hearing the speaker', async () => {
    const speaker = await joinVoice(owner);
    const wave = HANDSHAKE_LIMIT + 4;
    const users = await Promise.all(Array.from({ length: wave }, () => registerUser(server)));
    for (const user of users) await join(server, owner, user, guild);
    // The speaker talks while the wave joins (forwarding and handshakes at the same time).
    let done = false;
    const talking = (async () => {
      while (!done) await speaker.speak(1);
    })();
    try {
      const listeners = await Promise.all(users.map((user) => joinVoice(user)));
      const deadline = Date.now() + 30_000;
      while (!listeners.every((l) => (l.received.get(owner.id) ?? 0) > 0)) {
        if (Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const silent = listeners.filter((l) => (l.received.get(owner.id) ?? 0) === 0).length;
      assert.equal(silent, 0, `${silent} of ${wave} listeners never received the speaker's audio`);
    } finally {
      done = true;
      await talking;
    }
  });
});
