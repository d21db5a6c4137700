import { after, before } from 'node:test';
import { befriend } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import type { VoiceTestClient } from '../support/voice-client.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * What the DM-call tests (voice-calls, voice-call-ringing) set up, send and expect: their server and users, op 4
 * for a DM or group DM, frame matchers, and a DM voice state as docs/voice.md#dm-and-group-dm-calls gives it.
 */

/**
 * The DM-call tests' server (started with `env`) and users: Alice friends with Bob and with Carol (a DM needs a
 * friendship or a shared guild, a group DM friends of its creator), handed to `use` once ready. The gateway
 * clients from `gateway()` and those pushed on `clients`, and the voice clients pushed on `voices`, are closed
 * after the file, then the server.
 */
export function dmCallServer(
  use: (started: { server: TestServer; alice: TestUser; bob: TestUser; carol: TestUser }) => void,
  env: Record<string, string> = {},
) {
  let server: TestServer;
  const clients: GatewayClient[] = [];
  const voices: VoiceTestClient[] = [];
  before(async () => {
    server = await startTestServer(env);
    const [alice, bob, carol] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
    await befriend(server, alice, bob);
    await befriend(server, alice, carol);
    use({ server, alice, bob, carol });
  });
  after(async () => {
    await Promise.all(voices.map((v) => v.close().catch(() => {})));
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
  });
  /** A client past READY for `user`, and its session id. */
  async function gateway(user: TestUser): Promise<{ client: GatewayClient; session: string }> {
    const { client, ready } = await readyClient(server, user.token);
    clients.push(client);
    return { client, session: (ready.d as any).session_id };
  }
  return { gateway, clients, voices };
}

/** Op 4 joining (or, with `null`, leaving) a DM or group DM's call. */
export function call(client: GatewayClient, channelId: string | null, flags: Record<string, unknown> = {}): void {
  client.send({ op: 4, d: { guild_id: null, channel_id: channelId, self_mute: false, self_deaf: false, ...flags } });
}

/** Matches a dispatch by name and, optionally, by its data. */
export const event =
  (t: string, extra: (d: any) => boolean = () => true) =>
  (f: Frame) =>
    f.t === t && extra(f.d);

/** A voice state in a DM call, with every flag off unless `extra` says otherwise. */
export function dmState(channelId: string, userId: string, session: string, extra: Record<string, unknown> = {}) {
  return {
    guild_id: null,
    channel_id: channelId,
    user_id: userId,
    session_id: session,
    deaf: false,
    mute: false,
    self_deaf: false,
    self_mute: false,
    self_video: false,
    self_stream: false,
    suppress: false,
    request_to_speak_timestamp: null,
    ...extra,
  };
}
