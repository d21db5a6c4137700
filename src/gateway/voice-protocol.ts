import type { VoiceStateRequest } from '../domains/voice/voice-service.ts';
import { parseSnowflake } from '../platform/crypto/snowflake.ts';

/**
 * Op 4 Voice State Update `{guild_id, channel_id|null, self_mute, self_deaf, self_video?, self_stream?}`.
 * `undefined` = malformed (close 4002); `null` = a DM call (`guild_id` null), accepted and ignored until DM calls exist.
 */
export function parseVoiceStateUpdate(d: unknown): VoiceStateRequest | null | undefined {
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  const record = d as Record<string, unknown>;
  if (record.guild_id === null) return null;
  const guild = parseSnowflake(record.guild_id);
  if (!guild.ok) return undefined;
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
  return { guildId: guild.value, channelId, selfMute, selfDeaf, selfVideo, selfStream };
}
