import type { StoredCall, StoredVoiceState } from '../../platform/state/voice-states.ts';
import type { MemberView } from '../chat/views.ts';

/**
 * Voice on the wire (docs/voice.md): the types of VOICE_STATE_UPDATE, VOICE_SERVER_UPDATE and the call events,
 * as the voice domain sends them; the gateway event catalogue types those events with them.
 */

/** VOICE_STATE_UPDATE: the stored state (`channel_id: null` once it left); a guild's carries the member too. */
export type VoiceStateView = Omit<StoredVoiceState, 'channel_id'> & { channel_id: string | null; member?: MemberView };

/** A guild payload's `voice_states` entry: Discord's shape, without `guild_id`. */
export type GuildVoiceStateView = Omit<StoredVoiceState, 'guild_id'>;

/** VOICE_SERVER_UPDATE: the room's node and a single-room token; `guild_id` in a guild, `channel_id` in a DM call. */
export type VoiceServerView = { token: string; endpoint: string } & ({ guild_id: string } | { channel_id: string });

/** CALL_UPDATE, and the common part of CALL_CREATE, as Discord sends them. */
export type CallView = Pick<StoredCall, 'channel_id' | 'message_id' | 'region' | 'ringing'>;

/** CALL_CREATE: the call with who is in it. */
export type CallCreateView = CallView & { voice_states: StoredVoiceState[] };
