import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { isIP } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Frame, type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, join, newGuild, ok } from '../support/chat.ts';
import { registerUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { VoiceTestClient } from '../support/voice-client.ts';

/**
 * The SFU asks a STUN server only when one is configured (docs/voice.md, "Network settings"): werift's own default
 * would send every join's ICE to stun.l.google.com.
 */
const servers: TestServer[] = [];
const gateways: GatewayClient[] = [];
const voices: VoiceTestClient[] = [];
/** Every host name this process looked up (werift resolves a STUN server's name first) or sent a datagram to. */
const destinations: string[] = [];
const originalSend = dgram.Socket.prototype.send;
const originalLookup = dns.promises.lookup;

before(() => {
  dns.promises.lookup = ((hostname: string, ...rest: unknown[]) => {
    destinations.push(hostname);
    return (originalLookup as (...a: unknown[]) => unknown)(hostname, ...rest);
  }) as typeof dns.promises.lookup;
  dgram.Socket.prototype.send = function (this: dgram.Socket, ...args: unknown[]) {
    const host = args.find((arg, i) => i > 0 && typeof arg === 'string' && isIP(arg) === 0);
    if (typeof host === 'string') destinations.push(host);
    return (originalSend as (...a: unknown[]) => void).apply(this, args);
  } as typeof dgram.Socket.prototype.send;
});

after(async () => {
  dgram.Socket.prototype.send = originalSend;
  dns.promises.lookup = originalLookup;
  await Promise.all(voices.map((v) => v.close().catch(() => {})));
  await Promise.all(gateways.map((g) => g.close()));
  for (const server of servers) await server.close();
});

/** One member joins a fresh voice channel of `server` and is connected to the SFU. */
async function joinVoice(server: TestServer): Promise<void> {
  const owner = await registerUser(server);
  const guild = await newGuild(server, owner);
  const room = (await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }))).id;
  const user = await registerUser(server);
  await join(server, owner, user, guild);
  const { client: gw } = await readyClient(server, user.token);
  gateways.push(gw);
  gw.send({ op: 4, d: { guild_id: guild.id, channel_id: room, self_mute: false, self_deaf: false } });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
  const voice = new VoiceTestClient(update.d.endpoint, update.d.token);
  voices.push(voice);
  const connected = new Promise<void>((resolve) =>
    voice.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') resolve();
    }),
  );
  await voice.negotiations(1);
  await connected;
}

describe('the STUN server the SFU asks', () => {
  it('is none when none is configured: no host the settings do not name is looked up or sent to', async () => {
    const server = await startTestServer();
    servers.push(server);
    destinations.length = 0;
    await joinVoice(server);
    assert.deepEqual(destinations, []);
  });

  it('is the configured one when HEARTH_VOICE_TURN_URLS names a stun: server', async () => {
    const stun = dgram.createSocket('udp4');
    const bindingRequests: number[] = [];
    stun.on('message', (message) => {
      // A STUN message starts with its type: 0x0001 is a Binding request.
      if (message.readUInt16BE(0) === 0x0001) bindingRequests.push(message.length);
    });
    await new Promise<void>((resolve) => stun.bind(0, '127.0.0.1', resolve));
    try {
      const server = await startTestServer({ HEARTH_VOICE_TURN_URLS: `stun:127.0.0.1:${stun.address().port}` });
      servers.push(server);
      await joinVoice(server);
      assert.ok(bindingRequests.length > 0, 'the configured STUN server was asked');
    } finally {
      stun.close();
    }
  });
});
