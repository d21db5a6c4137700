import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RTCPeerConnection } from 'werift';
import { type Frame, type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startDtlsAtOnce } from '../support/dtls-at-once.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { VoiceTestClient } from '../support/voice-client.ts';
import { closeVoice, joinVoiceChannel } from '../support/voice-join.ts';

let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let room: string;
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];

/** Counts the DTLS handshake records of type ClientHello (1) the client sends, retransmissions included. */
function countClientHellos(pc: RTCPeerConnection): { count: number } {
  const sent = { count: 0 };
  const hooked = new WeakSet<object>();
  pc.iceConnectionStateChange.subscribe(() => {
    for (const transport of pc.dtlsTransports) {
      const connection = transport.iceTransport.connection;
      if (hooked.has(connection)) continue;
      hooked.add(connection);
      const send = connection.send.bind(connection);
      connection.send = (data: Buffer) => {
        // Record type 22 (handshake); the handshake message type follows the 13-byte record header.
        if (data[0] === 22 && data[13] === 1) sent.count++;
        return send(data);
      };
    }
  });
  return sent;
}

/**
 * Sends the client's first ClientHello (the one without a cookie) to the SFU a second time when the SFU's
 * ServerHello arrives: what a retransmission does when the first copy and the SFU's answer crossed on a busy
 * server (a browser retransmits after 1 s, werift after 500 ms). Resolves when it has been sent again.
 */
function replayFirstClientHelloAfterServerHello(pc: RTCPeerConnection): Promise<void> {
  const hooked = new WeakSet<object>();
  return new Promise((resolve) => {
    pc.iceConnectionStateChange.subscribe(() => {
      for (const transport of pc.dtlsTransports) {
        const connection = transport.iceTransport.connection;
        if (hooked.has(connection)) continue;
        hooked.add(connection);
        let first: Buffer | undefined;
        let replayed = false;
        const send = connection.send.bind(connection);
        connection.send = (data: Buffer) => {
          if (!first && data[0] === 22 && data[13] === 1) first = Buffer.from(data);
          return send(data);
        };
        connection.onData.subscribe((data: Buffer) => {
          // Handshake record (22) whose first message is a ServerHello (2).
          if (replayed || !first || data[0] !== 22 || data[13] !== 2) return;
          replayed = true;
          void send(first).then(() => resolve());
        });
      }
    });
  });
}

function joinVoice(user: TestUser): Promise<VoiceTestClient> {
  return joinVoiceChannel(server, user, { guildId: guild.id, channelId: room }, { gateways, voices });
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

describe('DTLS records that arrive before the SFU has started DTLS (docs/voice.md#join-admission)', () => {
  it('a client that sends its ClientHello as soon as its own ICE is connected is answered without retransmitting', async () => {
    // A browser sends its ClientHello as soon as its ICE check succeeds, often before the SFU (the controlling side)
    // has its nomination answered and has started DTLS. Without the SFU keeping that record, the client has to
    // retransmit (werift after 500 ms): three ClientHellos instead of two (the first, then the one with the cookie).
    for (let i = 0; i < 4; i++) {
      const user = await registerUser(server);
      await join(server, owner, user, guild);
      const { client: gw } = await readyClient(server, user.token);
      gateways.push(gw);
      gw.send({ op: 4, d: { guild_id: guild.id, channel_id: room, self_mute: false, self_deaf: false } });
      const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
      const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
      voices.push(voice);
      startDtlsAtOnce(voice.pc);
      const hellos = countClientHellos(voice.pc);
      const connected = new Promise<void>((resolve) =>
        voice.pc.connectionStateChange.subscribe((state) => {
          if (state === 'connected') resolve();
        }),
      );
      await voice.negotiations(1);
      await connected;
      assert.equal(hellos.count, 2, `join ${i + 1}: ClientHellos sent`);
    }
  });

  it('a retransmitted first ClientHello that reaches the SFU after its ServerHello does not restart the handshake', async () => {
    // werift's DTLS server answers every ClientHello without a cookie with a new key pair and random, even one
    // it has already answered: a late copy that arrives after the ServerHello left would make the SFU derive keys
    // the client never saw. The SFU drops such a copy (same client random, handshake past that step).
    const speakerUser = await registerUser(server);
    await join(server, owner, speakerUser, guild);
    const speaker = await joinVoice(speakerUser);
    await speaker.negotiations(1);
    const listenerUser = await registerUser(server);
    await join(server, owner, listenerUser, guild);
    const listener = await joinVoice(listenerUser);
    startDtlsAtOnce(listener.pc);
    const replayed = replayFirstClientHelloAfterServerHello(listener.pc);
    const states: string[] = [];
    listener.pc.connectionStateChange.subscribe((state) => states.push(state));
    await listener.negotiations(1);
    await replayed;
    const deadline = Date.now() + 8000;
    while ((listener.received.get(speakerUser.id) ?? 0) < 10 && Date.now() < deadline) {
      await speaker.speak(5);
    }
    assert.ok((listener.received.get(speakerUser.id) ?? 0) >= 10, `the listener hears the speaker (states: ${states})`);
    assert.ok(!states.includes('failed'), `connection states: ${states.join(', ')}`);
  });
});
