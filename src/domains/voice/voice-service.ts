import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/log.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import { type StoredVoiceState, type VoiceStateStore, voiceScope } from '../../platform/state/voice-states.ts';
import type { GuildContext } from '../chat/access.ts';
import type { ChatModule } from '../chat/module.ts';
import { has, PERMISSIONS } from '../chat/permissions.ts';
import { CHANNEL_TYPES, type ChannelRow, type GuildRow, type MemberRow } from '../chat/rows.ts';
import { memberView } from '../chat/views.ts';
import type { Dispatcher } from '../events/dispatch.ts';
import { VOICE_SESSION_TOPIC, type VoicePlacement } from './voice-placement.ts';
import type { VoiceServerView, VoiceStateView } from './voice-views.ts';

export { VOICE_SESSION_TOPIC, type VoiceSessionMessage } from './voice-placement.ts';

/** Op 4 as the gateway parsed it; `guildId: null` is a DM or group-DM call (CallService). */
export interface VoiceStateRequest {
  guildId: string | null;
  channelId: string | null;
  selfMute: boolean;
  selfDeaf: boolean;
  selfVideo: boolean;
  selfStream: boolean;
}

/** Why an op 4 changed nothing (the gateway, like Discord's, answers a refusal with silence; tests read this). */
export type VoiceRefusal =
  | 'unknown_channel'
  | 'not_voice_channel'
  | 'missing_connect'
  | 'channel_full'
  | 'not_member'
  | 'not_connected';

export type VoiceOutcome = { ok: true; server: VoiceServerView | undefined } | { ok: false; refusal: VoiceRefusal };

/** The first AFK check after any activity: Discord's smallest `afk_timeout` (60 s). */
export const AFK_MIN_TIMEOUT_MS = 60_000;
/** Members looked at per AFK sweep (the rest are taken at the next one). */
const AFK_SWEEP_LIMIT = 200;

export interface VoiceServiceDeps {
  store: VoiceStateStore;
  chat: Pick<ChatModule, 'access' | 'store'>;
  dispatcher: Dispatcher;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Which voice node a room is on (docs/voice.md#room-placement). */
  placement: VoicePlacement;
}

/** VOICE_SERVER_UPDATE for a state that just joined a room: its node's endpoint and a fresh token. */
export function mintVoiceServer(
  deps: Pick<VoiceServiceDeps, 'placement'>,
  state: StoredVoiceState,
): Promise<VoiceServerView> {
  return deps.placement.serverFor(state);
}

/**
 * Voice state: who is in which voice channel, with which flags, and who may be there. Changes are stored in the
 * shared store and announced to the guild as VOICE_STATE_UPDATE; a join or move also mints the single-room token
 * the joining session receives in VOICE_SERVER_UPDATE.
 */
export class VoiceService {
  constructor(private readonly deps: VoiceServiceDeps) {}

  statesOf(guildId: string): Promise<StoredVoiceState[]> {
    return this.deps.store.ofGuild(guildId);
  }

  stateOf(guildId: string, userId: string): Promise<StoredVoiceState | undefined> {
    return this.deps.store.get(guildId, userId);
  }

  /** Op 4 from a gateway session. */
  async update(
    sessionId: string,
    userId: string,
    request: VoiceStateRequest & { guildId: string },
  ): Promise<VoiceOutcome> {
    const { store } = this.deps;
    if (request.channelId === null) {
      const removed = await store.remove(request.guildId, userId);
      if (!removed) return { ok: false, refusal: 'not_connected' };
      await this.announceLeft(removed);
      return { ok: true, server: undefined };
    }
    const target = await this.voiceChannel(request.channelId, userId, request.guildId);
    if (!target.ok) return target;
    const { channel, member, permissions, guild } = target;
    if (!has(permissions, PERMISSIONS.VIEW_CHANNEL) || !has(permissions, PERMISSIONS.CONNECT))
      return { ok: false, refusal: 'missing_connect' };
    const previous = await store.get(request.guildId, userId);
    const canStream = has(permissions, PERMISSIONS.STREAM);
    const state: StoredVoiceState = {
      guild_id: request.guildId,
      channel_id: channel.id,
      user_id: userId,
      session_id: sessionId,
      deaf: member.deaf,
      mute: member.mute,
      self_deaf: request.selfDeaf,
      self_mute: request.selfMute || request.selfDeaf,
      self_video: request.selfVideo && canStream,
      self_stream: request.selfStream && canStream,
      // Nobody speaks in the AFK channel (Discord's rule): it is where idle members are parked.
      suppress: !has(permissions, PERMISSIONS.SPEAK) || guild.afk_channel_id === channel.id,
      request_to_speak_timestamp: null,
    };
    // MOVE_MEMBERS lets a member into a full channel, as in Discord.
    const limit = has(permissions, PERMISSIONS.MOVE_MEMBERS) ? 0 : (channel.user_limit ?? 0);
    if (!(await store.put(state, limit))) return { ok: false, refusal: 'channel_full' };
    // An op 4 is someone acting on their call: it counts as activity for the AFK timeout.
    await this.markActive(request.guildId, userId);
    await this.announce(state, member);
    const moved = !previous || previous.channel_id !== state.channel_id || previous.session_id !== sessionId;
    return { ok: true, server: moved ? await this.serverUpdate(state) : undefined };
  }

  /** A gateway session ended: its voice states go, unless another session has taken them over. */
  async leaveSession(sessionId: string, userId: string, guildIds: Iterable<string>): Promise<void> {
    for (const guildId of guildIds) {
      const removed = await this.deps.store.remove(guildId, userId, sessionId);
      if (removed) await this.announceLeft(removed);
    }
  }

  /**
   * The SFU gave up on this session's media in this channel (docs/voice.md#join-admission): the voice state goes as
   * at a leave, VOICE_STATE_UPDATE with `channel_id: null` to the guild, unless it is no longer that session's in
   * that channel (the member moved or joined again meanwhile). True when it went.
   */
  async leaveFailedMedia(guildId: string, channelId: string, userId: string, sessionId: string): Promise<boolean> {
    const current = await this.deps.store.get(guildId, userId);
    if (!current || current.channel_id !== channelId || current.session_id !== sessionId) return false;
    const removed = await this.deps.store.remove(guildId, userId, sessionId);
    if (!removed) return false;
    await this.announceLeft(removed);
    return true;
  }

  /**
   * PATCH /guilds/{id}/members/{uid} `channel_id` (move or disconnect), checked before anything is written:
   * the caller needs MOVE_MEMBERS, the target must be connected, and the caller must be able to connect to
   * the destination.
   */
  async checkMove(guild: GuildContext, targetUserId: string, channelId: string | null): Promise<void> {
    guild.require(PERMISSIONS.MOVE_MEMBERS);
    const current = await this.deps.store.get(guild.guildId, targetUserId);
    if (!current) throw new ApiError('TARGET_NOT_CONNECTED_TO_VOICE');
    if (channelId === null) return;
    const channel = await this.deps.chat.store.channel(channelId);
    if (!channel || channel.guild_id !== guild.guildId) throw new ApiError('UNKNOWN_CHANNEL');
    if (channel.type !== CHANNEL_TYPES.GUILD_VOICE) throw new ApiError('UNKNOWN_CHANNEL');
    const permissions = guild.channelPermissions(channel);
    if (!has(permissions, PERMISSIONS.VIEW_CHANNEL) || !has(permissions, PERMISSIONS.CONNECT))
      throw new ApiError('MISSING_PERMISSIONS');
  }

  /**
   * After the member row was written: server mute/deaf and a move or disconnect reach the voice state, the guild
   * hears VOICE_STATE_UPDATE, and a moved member's session gets a token for the new room.
   */
  async applyMemberChange(
    guildId: string,
    member: MemberRow,
    change: { channelId?: string | null | undefined },
  ): Promise<void> {
    const { store } = this.deps;
    const current = await store.get(guildId, member.user_id);
    if (!current) return;
    if (change.channelId === null) {
      const removed = await store.remove(guildId, member.user_id, current.session_id);
      if (removed) await this.announceLeft(removed);
      return;
    }
    const channelId = change.channelId ?? current.channel_id;
    await this.moveState(current, channelId, member);
  }

  /**
   * Writes `current` moved to `channelId` (or only re-checked, same channel) with the member's server mute/deaf
   * and SPEAK there, announces it, and sends a moved session its token for the new room.
   */
  private async moveState(current: StoredVoiceState, channelId: string, member: MemberRow): Promise<boolean> {
    const { store } = this.deps;
    const [channel, guild] = await Promise.all([
      this.deps.chat.store.channel(channelId),
      this.deps.chat.store.guild(voiceScope(current)),
    ]);
    const targetPermissions = channel ? await this.memberPermissions(channel, member.user_id) : 0n;
    const next: StoredVoiceState = {
      ...current,
      channel_id: channelId,
      mute: member.mute,
      deaf: member.deaf,
      suppress: !has(targetPermissions, PERMISSIONS.SPEAK) || guild?.afk_channel_id === channelId,
    };
    if (!(await store.put(next, 0))) return false;
    // The moved session hears of its new room before the guild hears of the move: the SFU ends the old room's
    // connection on the VOICE_STATE_UPDATE, and the client should already be on its way to the new one.
    if (next.channel_id !== current.channel_id) {
      const server = await this.serverUpdate(next);
      await this.deps.bus.publish(VOICE_SESSION_TOPIC, {
        sessionId: next.session_id,
        event: 'VOICE_SERVER_UPDATE',
        payload: server,
      });
    }
    await this.announce(next, member);
    return true;
  }

  /** Speaking (reported by the SFU) or an op 4: the member is not idle. */
  async markActive(guildId: string, userId: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.store.markActive(guildId, userId, now, now + AFK_MIN_TIMEOUT_MS);
  }

  /**
   * The AFK sweep: a member in a guild with an AFK channel, idle (no op 4, no speech) for the guild's
   * `afk_timeout`, is moved to the AFK channel, where they are suppressed. Returns how many were moved.
   */
  async sweepAfk(): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    let moved = 0;
    for (const due of await store.takeDueAfkChecks(now, AFK_SWEEP_LIMIT)) {
      const state = await store.get(due.guildId, due.userId);
      if (!state) {
        await store.forgetActivity(due.guildId, due.userId);
        continue;
      }
      const guild = await this.deps.chat.store.guild(due.guildId);
      if (!guild?.afk_channel_id || state.channel_id === guild.afk_channel_id) {
        // Nothing to do now; look again later in case an AFK channel is set.
        await store.scheduleAfkCheck(due.guildId, due.userId, now + AFK_MIN_TIMEOUT_MS);
        continue;
      }
      const deadline = due.activeAt + guild.afk_timeout * 1000;
      if (deadline > now) {
        await store.scheduleAfkCheck(due.guildId, due.userId, deadline);
        continue;
      }
      const member = await this.deps.chat.store.member(due.guildId, due.userId);
      if (!member) continue;
      if (await this.moveState(state, guild.afk_channel_id, member)) moved++;
      await store.scheduleAfkCheck(due.guildId, due.userId, now + AFK_MIN_TIMEOUT_MS);
    }
    return moved;
  }

  private async memberPermissions(channel: ChannelRow, userId: string): Promise<bigint> {
    try {
      return (await this.deps.chat.access.channel(channel.id, userId, this.deps.clock.now())).permissions;
    } catch {
      return 0n;
    }
  }

  private async voiceChannel(
    channelId: string,
    userId: string,
    guildId: string,
  ): Promise<
    | { ok: true; channel: ChannelRow; member: MemberRow; guild: GuildRow; permissions: bigint }
    | { ok: false; refusal: VoiceRefusal }
  > {
    let access: Awaited<ReturnType<ChatModule['access']['channel']>>;
    try {
      access = await this.deps.chat.access.channel(channelId, userId, this.deps.clock.now());
    } catch (error) {
      if (error instanceof ApiError)
        return { ok: false, refusal: error.code === 'UNKNOWN_CHANNEL' ? 'unknown_channel' : 'not_member' };
      throw error;
    }
    const { channel, guild, permissions } = access;
    if (!guild || channel.guild_id !== guildId) return { ok: false, refusal: 'unknown_channel' };
    if (channel.type !== CHANNEL_TYPES.GUILD_VOICE) return { ok: false, refusal: 'not_voice_channel' };
    return { ok: true, channel, member: guild.member, guild: guild.guild, permissions };
  }

  private serverUpdate(state: StoredVoiceState): Promise<VoiceServerView> {
    return mintVoiceServer(this.deps, state);
  }

  private async announce(state: StoredVoiceState, member?: MemberRow): Promise<void> {
    const guildId = voiceScope(state);
    const row = member ?? (await this.deps.chat.store.member(guildId, state.user_id));
    const user = await this.deps.chat.store.user(state.user_id);
    const payload: VoiceStateView = { ...state };
    if (row) payload.member = memberView(row, user);
    await this.deps.dispatcher.dispatch('VOICE_STATE_UPDATE', payload, { kind: 'guild', guildId });
  }

  private async announceLeft(state: StoredVoiceState): Promise<void> {
    const guildId = voiceScope(state);
    await this.deps.store.forgetActivity(guildId, state.user_id);
    const left = { ...state, channel_id: null, self_video: false, self_stream: false };
    const row = await this.deps.chat.store.member(guildId, state.user_id);
    const user = await this.deps.chat.store.user(state.user_id);
    const payload: VoiceStateView = { ...left };
    if (row) payload.member = memberView(row, user);
    // A member who just left the guild is not in its audience any more; they still hear that they left.
    await this.deps.dispatcher.dispatch('VOICE_STATE_UPDATE', payload, { kind: 'guild', guildId });
  }
}
