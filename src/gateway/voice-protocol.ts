import type { VoiceStateRequest } from '../domains/voice/voice-service.ts';
import { parseSnowflake } from '../platform/crypto/snowflake.ts';

/**
 * Op 4 Voice State Update `{guild_id, channel_id|null, self_mute, self_deaf, self_video?, self_stream?}`.
 * `guild_id: null` is a DM or group-DM call in the channel `channel_id`. `undefined` = malformed (close
 * 4002).
 */
export function parseVoiceStateUpdate(d: unknown): VoiceStateRequest | undefined {
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  const record = d as Record<string, unknown>;
  let guildId: string | null = null;
  if (record.guild_id !== null) {
    const guild = parseSnowflake(record.guild_id);
    if (!guild.ok) return undefined;
    guildId = guild.value;
  }
  let channelId: string | null = null;
  if (record.channel_id !== null && record.channel_id !== undefined) {
    const channel = parseSnowflake(record.channel_id);
    if (!channel.ok) return undefined;
    channelId = channel.value;
  }
  const flags: boolean[] = [];
  for (const key of ['self_mute', 'self_deaf', 'self_video', 'self_stream']) {
    const value = record[key];
    if (value !== undefined && value !== null && typeof value !== 'boolean') return undefined;
    flags.push(value === true);
  }
  const [selfMute, selfDeaf, selfVideo, selfStream] = flags as [boolean, boolean, boolean, boolean];
  return { guildId, channelId, selfMute, selfDeaf, selfVideo, selfStream };
}
