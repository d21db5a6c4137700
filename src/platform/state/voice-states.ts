/**
 * Who is in which voice channel, shared by every process (a gateway session on one node, a moderator's PATCH on
 * another). One state per (guild, user), stored in the wire shape of Discord's voice state minus `member`.
 * Voice grants are the short-lived single-room tokens of VOICE_SERVER_UPDATE, kept only as digests.
 */
export interface StoredVoiceState {
  guild_id: string;
  channel_id: string;
  user_id: string;
  session_id: string;
  deaf: boolean;
  mute: boolean;
  self_deaf: boolean;
  self_mute: boolean;
  self_video: boolean;
  self_stream: boolean;
  suppress: boolean;
  request_to_speak_timestamp: null;
}

export interface VoiceGrant {
  guildId: string;
  channelId: string;
  userId: string;
  sessionId: string;
  /** Unix ms. */
  expiresAt: number;
}

export interface VoiceStateStore {
  get(guildId: string, userId: string): Promise<StoredVoiceState | undefined>;
  /**
   * Writes the state unless its channel already holds `userLimit` other users (0 = no limit); atomic, so two
   * joins racing for the last seat cannot both win. Returns false when the channel is full.
   */
  put(state: StoredVoiceState, userLimit: number): Promise<boolean>;
  /** Removes the user's state, only if it still belongs to `sessionId` when one is given. Returns what was removed. */
  remove(guildId: string, userId: string, sessionId?: string): Promise<StoredVoiceState | undefined>;
  ofGuild(guildId: string): Promise<StoredVoiceState[]>;
  putGrant(digest: string, grant: VoiceGrant): Promise<void>;
  /** The grant, if unexpired; a grant may be read more than once within its life (a reconnect). */
  grant(digest: string, now: number): Promise<VoiceGrant | undefined>;
  /** Clears everything (test harness). */
  reset(): Promise<void>;
}

export class InProcessVoiceStateStore implements VoiceStateStore {
  private readonly guilds = new Map<string, Map<string, StoredVoiceState>>();
  private readonly grants = new Map<string, VoiceGrant>();

  async get(guildId: string, userId: string): Promise<StoredVoiceState | undefined> {
    return this.guilds.get(guildId)?.get(userId);
  }

  async put(state: StoredVoiceState, userLimit: number): Promise<boolean> {
    let guild = this.guilds.get(state.guild_id);
    if (!guild) {
      guild = new Map();
      this.guilds.set(state.guild_id, guild);
    }
    if (userLimit > 0) {
      let others = 0;
      for (const s of guild.values()) if (s.channel_id === state.channel_id && s.user_id !== state.user_id) others++;
      if (others >= userLimit) return false;
    }
    guild.set(state.user_id, { ...state });
    return true;
  }

  async remove(guildId: string, userId: string, sessionId?: string): Promise<StoredVoiceState | undefined> {
    const guild = this.guilds.get(guildId);
    const state = guild?.get(userId);
    if (!guild || !state || (sessionId !== undefined && state.session_id !== sessionId)) return undefined;
    guild.delete(userId);
    if (guild.size === 0) this.guilds.delete(guildId);
    return state;
  }

  async ofGuild(guildId: string): Promise<StoredVoiceState[]> {
    return [...(this.guilds.get(guildId)?.values() ?? [])];
  }

  async putGrant(digest: string, grant: VoiceGrant): Promise<void> {
    this.grants.set(digest, grant);
    // Expired grants are dropped lazily; bound the map so abandoned ones cannot pile up.
    if (this.grants.size > 10_000) {
      const now = Date.now();
      for (const [key, value] of this.grants) if (value.expiresAt <= now) this.grants.delete(key);
    }
  }

  async grant(digest: string, now: number): Promise<VoiceGrant | undefined> {
    const grant = this.grants.get(digest);
    if (!grant) return undefined;
    if (grant.expiresAt <= now) {
      this.grants.delete(digest);
      return undefined;
    }
    return grant;
  }

  async reset(): Promise<void> {
    this.guilds.clear();
    this.grants.clear();
  }
}
