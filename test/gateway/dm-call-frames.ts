import type { Frame, GatewayClient } from './gateway-client.ts';

/**
 * What the DM-call tests (voice-calls, voice-call-ringing) send and expect: op 4 for a DM or group DM, frame
 * matchers, and a DM voice state as docs/voice.md#dm-and-group-dm-calls gives it.
 */

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
