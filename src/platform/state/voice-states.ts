/**
 * Who is in which voice channel, shared by every process (a gateway session on one node, a moderator's PATCH on
 * another). One state per (guild, user), stored in the wire shape of Discord's voice state minus `member`.
 * Voice grants are the short-lived single-room tokens of VOICE_SERVER_UPDATE, kept only as digests.
 * A DM or group-DM call's states have `guild_id: null`; they are kept under the DM channel's id wherever the
 * methods below say `guildId` (the *scope*: a guild, or the channel of a call), which never collides with a
 * guild id (one snowflake space).
 */
export interface StoredVoiceState {
  guild_id: string | null;
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

/** Where a state is kept: its guild, or the DM channel of its call. */
export function voiceScope(state: Pick<StoredVoiceState, 'guild_id' | 'channel_id'>): string {
  return state.guild_id ?? state.channel_id;
}

/** A DM or group-DM call in progress (docs/voice.md, "DM and group-DM calls"). */
export interface StoredCall {
  channel_id: string;
  /** The call's system message (type 3). */
  message_id: string;
  region: string;
  /** Recipients being rung. */
  ringing: string[];
  /** Everyone who has been in the call (the message's `call.participants`). */
  participants: string[];
  /**
   * When each recipient in `ringing` stops being rung (unix ms; the ringing timeout). Absent in records written
   * before the timeout existed: the next ring check gives them a deadline.
   */
  ring_deadlines?: Record<string, number>;
}

export interface VoiceGrant {
  /** null for a DM call (the room is the DM channel). */
  guildId: string | null;
  channelId: string;
  userId: string;
  sessionId: string;
  /** Unix ms. */
  expiresAt: number;
}

/** A member whose AFK check is due: when they were last active (unix ms). */
export interface AfkCandidate {
  guildId: string;
  userId: string;
  activeAt: number;
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
  /**
   * Activity for the AFK timeout (docs/voice.md): the member was active at `activeAt`; their AFK check is due
   * at `checkAt`.
   */
  markActive(guildId: string, userId: string, activeAt: number, checkAt: number): Promise<void>;
  /** Moves the member's AFK check to `checkAt` (nothing if they have no activity record). */
  scheduleAfkCheck(guildId: string, userId: string, checkAt: number): Promise<void>;
  /**
   * Takes up to `limit` members whose AFK check is due at `now`, removing their checks atomically: of several
   * processes sweeping at once, each member goes to one. The taker reschedules whoever stays in voice.
   */
  takeDueAfkChecks(now: number, limit: number): Promise<AfkCandidate[]>;
  forgetActivity(guildId: string, userId: string): Promise<void>;
  call(channelId: string): Promise<StoredCall | undefined>;
  /** Stores a new call unless one exists for the channel (atomic); false when one does. */
  createCall(call: StoredCall): Promise<boolean>;
  /** Replaces the call's record (ringing, participants). */
  putCall(call: StoredCall): Promise<void>;
  /** Deletes the call; returns it if it was there (only one caller gets it, so one CALL_DELETE). */
  deleteCall(channelId: string): Promise<StoredCall | undefined>;
  /** The calls in progress among these channels (READY's CALL_CREATEs), in no particular order. */
  callsOf(channelIds: string[]): Promise<StoredCall[]>;
  /** The call's next ring check (the ringing timeout) is due at `checkAt`, replacing any earlier schedule. */
  scheduleRingCheck(channelId: string, checkAt: number): Promise<void>;
  /** Takes up to `limit` channels whose ring check is due at `now`, atomically (each goes to one sweeper). */
  takeDueRingChecks(now: number, limit: number): Promise<string[]>;
  /** Clears everything (test harness). */
  reset(): Promise<void>;
}

export class InProcessVoiceStateStore implements VoiceStateStore {
  private readonly guilds = new Map<string, Map<string, StoredVoiceState>>();
  private readonly grants = new Map<string, VoiceGrant>();
  /** One per DM channel with people in a call (bounded by the states). */
  private readonly calls = new Map<string, StoredCall>();
  /** DM channel → when its ring check is due; one per call at most (an ended call's goes at its check). */
  private readonly ringChecks = new Map<string, number>();
  /** `guild:user` → last activity and AFK check time; one entry per member in voice, so bounded by the states. */
  private readonly activity = new Map<string, { guildId: string; userId: string; activeAt: number; checkAt: number }>();

  async get(guildId: string, userId: string): Promise<StoredVoiceState | undefined> {
    return this.guilds.get(guildId)?.get(userId);
  }

  async put(state: StoredVoiceState, userLimit: number): Promise<boolean> {
    let guild = this.guilds.get(voiceScope(state));
    if (!guild) {
      guild = new Map();
      this.guilds.set(voiceScope(state), guild);
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

  async markActive(guildId: string, userId: string, activeAt: number, checkAt: number): Promise<void> {
    this.activity.set(`${guildId}:${userId}`, { guildId, userId, activeAt, checkAt });
  }

  async scheduleAfkCheck(guildId: string, userId: string, checkAt: number): Promise<void> {
    const entry = this.activity.get(`${guildId}:${userId}`);
    if (entry) entry.checkAt = checkAt;
  }

  async takeDueAfkChecks(now: number, limit: number): Promise<AfkCandidate[]> {
    const due: AfkCandidate[] = [];
    for (const entry of this.activity.values()) {
      if (due.length >= limit) break;
      if (entry.checkAt > now) continue;
      // Taken: not due again until the taker reschedules it.
      entry.checkAt = Number.POSITIVE_INFINITY;
      due.push({ guildId: entry.guildId, userId: entry.userId, activeAt: entry.activeAt });
    }
    return due;
  }

  async forgetActivity(guildId: string, userId: string): Promise<void> {
    this.activity.delete(`${guildId}:${userId}`);
  }

  async call(channelId: string): Promise<StoredCall | undefined> {
    const call = this.calls.get(channelId);
    return call ? structuredClone(call) : undefined;
  }

  async createCall(call: StoredCall): Promise<boolean> {
    if (this.calls.has(call.channel_id)) return false;
    this.calls.set(call.channel_id, structuredClone(call));
    return true;
  }

  async putCall(call: StoredCall): Promise<void> {
    this.calls.set(call.channel_id, structuredClone(call));
  }

  async deleteCall(channelId: string): Promise<StoredCall | undefined> {
    const call = this.calls.get(channelId);
    this.calls.delete(channelId);
    return call;
  }

  async callsOf(channelIds: string[]): Promise<StoredCall[]> {
    const found: StoredCall[] = [];
    for (const id of channelIds) {
      const call = this.calls.get(id);
      if (call) found.push(structuredClone(call));
    }
    return found;
  }

  async scheduleRingCheck(channelId: string, checkAt: number): Promise<void> {
    this.ringChecks.set(channelId, checkAt);
  }

  async takeDueRingChecks(now: number, limit: number): Promise<string[]> {
    const due: string[] = [];
    for (const [channelId, checkAt] of this.ringChecks) {
      if (due.length >= limit) break;
      if (checkAt > now) continue;
      this.ringChecks.delete(channelId);
      due.push(channelId);
    }
    return due;
  }

  async reset(): Promise<void> {
    this.ringChecks.clear();
    this.guilds.clear();
    this.grants.clear();
    this.activity.clear();
    this.calls.clear();
  }
}
