import { type Frame, type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import type { TestUser } from './client.ts';
import type { TestServer } from './server.ts';
import { VoiceTestClient } from './voice-client.ts';

/** What a test opened, closed in its `after` (voice clients first, then their gateway sessions). */
export interface OpenedVoice {
  gateways: GatewayClient[];
  voices: VoiceTestClient[];
}

/**
 * Joins `user` to a voice channel the way a client does: a gateway session sends op 4, and a Node WebRTC client
 * connects to the VOICE_SERVER_UPDATE's endpoint with its token (docs/voice.md). Resolves once the client exists;
 * call `negotiations(1)` on it to wait for the first answered offer.
 */
export async function joinVoiceChannel(
  server: TestServer,
  user: Pick<TestUser, 'token'>,
  channel: { guildId: string; channelId: string },
  opened: OpenedVoice,
  options: ConstructorParameters<typeof VoiceTestClient>[2] = {},
): Promise<VoiceTestClient> {
  const { client: gw } = await readyClient(server, user.token);
  opened.gateways.push(gw);
  gw.send({
    op: 4,
    d: { guild_id: channel.guildId, channel_id: channel.channelId, self_mute: false, self_deaf: false },
  });
  const update = (await gw.dispatch('VOICE_SERVER_UPDATE')) as Frame & { d: { token: string; endpoint: string } };
  const voice = new VoiceTestClient(update.d.endpoint, update.d.token, options);
  opened.voices.push(voice);
  return voice;
}

/** Closes what `joinVoiceChannel` opened. */
export async function closeVoice(opened: OpenedVoice): Promise<void> {
  await Promise.all(opened.voices.map((v) => v.close().catch(() => {})));
  await Promise.all(opened.gateways.map((g) => g.close()));
}
