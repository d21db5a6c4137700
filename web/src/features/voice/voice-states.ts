import type { GatewayHub } from '../../gateway/hub.ts';

/** Discord's voice state as the gateway sends it. */
export interface VoiceState {
  guild_id?: string | null;
  channel_id: string | null;
  user_id: string;
  session_id: string;
  mute: boolean;
  deaf: boolean;
  self_mute: boolean;
  self_deaf: boolean;
  self_video: boolean;
  self_stream: boolean;
  suppress: boolean;
}

/** A DM or group-DM call in progress (CALL_CREATE / CALL_UPDATE). */
export interface CallInfo {
  channel_id: string;
  message_id: string;
  ringing: string[];
}

/**
 * Who is in which voice channel, from READY's `voice_states` and VOICE_STATE_UPDATE; DM calls from CALL_* events
 * (their states are kept under the DM channel's id, as the server does).
 */
export class VoiceStates {
  private readonly byGuild = new Map<string, Map<string, VoiceState>>();
  readonly calls = new Map<string, CallInfo>();
  private readonly listeners = new Set<() => void>();
  version = 0;
  /** This tab's gateway session id (READY), to tell our own state from another tab's. */
  sessionId = '';
  private readonly stop: () => void;

  constructor(hub: GatewayHub) {
    this.stop = hub.subscribe((type, data) => this.dispatch(type, data), { replay: true });
  }

  dispose(): void {
    this.stop();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  inChannel(guildId: string, channelId: string): VoiceState[] {
    return [...(this.byGuild.get(guildId)?.values() ?? [])].filter((s) => s.channel_id === channelId);
  }

  of(guildId: string, userId: string): VoiceState | undefined {
    return this.byGuild.get(guildId)?.get(userId);
  }

  private dispatch(type: string, data: unknown): void {
    if (type === 'READY') {
      const ready = data as { session_id: string; guilds: { id: string; voice_states?: VoiceState[] }[] };
      this.sessionId = ready.session_id;
      this.byGuild.clear();
      // Calls in progress follow READY as CALL_CREATEs (docs/voice.md#calls-in-ready); a call that ended while
      // the tab was away is not among them.
      this.calls.clear();
      for (const guild of ready.guilds ?? [])
        this.byGuild.set(guild.id, new Map((guild.voice_states ?? []).map((s) => [s.user_id, s])));
    } else if (type === 'VOICE_STATE_UPDATE') {
      const state = data as VoiceState;
      if (!state.guild_id) {
        // A DM call: a hang-up names no channel, so it clears that session's state in every call.
        if (state.channel_id === null) {
          for (const call of this.byGuild.values())
            if (call.get(state.user_id)?.session_id === state.session_id) call.delete(state.user_id);
        } else {
          let call = this.byGuild.get(state.channel_id);
          if (!call) {
            call = new Map();
            this.byGuild.set(state.channel_id, call);
          }
          call.set(state.user_id, state);
        }
      } else {
        let guild = this.byGuild.get(state.guild_id);
        if (!guild) {
          guild = new Map();
          this.byGuild.set(state.guild_id, guild);
        }
        if (state.channel_id === null) guild.delete(state.user_id);
        else guild.set(state.user_id, state);
      }
    } else if (type === 'CALL_CREATE' || type === 'CALL_UPDATE') {
      const call = data as CallInfo & { voice_states?: VoiceState[] };
      this.calls.set(call.channel_id, {
        channel_id: call.channel_id,
        message_id: call.message_id,
        ringing: call.ringing,
      });
      if (call.voice_states) this.byGuild.set(call.channel_id, new Map(call.voice_states.map((s) => [s.user_id, s])));
    } else if (type === 'CALL_DELETE') {
      const { channel_id } = data as { channel_id: string };
      this.calls.delete(channel_id);
      this.byGuild.delete(channel_id);
    } else if (type === 'GUILD_DELETE') {
      this.byGuild.delete((data as { id: string }).id);
    } else return;
    this.version++;
    for (const listener of this.listeners) listener();
  }
}
