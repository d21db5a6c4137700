import type { GatewayHub } from '../../gateway/hub.ts';

/** Discord's voice state as the gateway sends it. */
export interface VoiceState {
  guild_id?: string;
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

/** Who is in which voice channel, from READY's `voice_states` and VOICE_STATE_UPDATE. */
export class VoiceStates {
  private readonly byGuild = new Map<string, Map<string, VoiceState>>();
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
      for (const guild of ready.guilds ?? [])
        this.byGuild.set(guild.id, new Map((guild.voice_states ?? []).map((s) => [s.user_id, s])));
    } else if (type === 'VOICE_STATE_UPDATE') {
      const state = data as VoiceState & { guild_id: string };
      let guild = this.byGuild.get(state.guild_id);
      if (!guild) {
        guild = new Map();
        this.byGuild.set(state.guild_id, guild);
      }
      if (state.channel_id === null) guild.delete(state.user_id);
      else guild.set(state.user_id, state);
    } else if (type === 'GUILD_DELETE') {
      this.byGuild.delete((data as { id: string }).id);
    } else return;
    this.version++;
    for (const listener of this.listeners) listener();
  }
}
