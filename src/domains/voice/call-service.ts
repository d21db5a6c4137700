import type { Config } from '../../config/config.ts';
import { ApiError } from '../../http/errors.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { StoredCall, StoredVoiceState } from '../../platform/state/voice-states.ts';
import { type ChannelAccess, isPrivateChannel } from '../chat/access.ts';
import { MESSAGE_TYPES } from '../chat/message-service.ts';
import type { ChatModule } from '../chat/module.ts';
import { CHANNEL_TYPES, type ChannelRow } from '../chat/rows.ts';
import type { GatewayEvent, GatewayEvents } from '../events/dispatch.ts';
import { mintVoiceServer, type VoiceServiceDeps, type VoiceStateRequest } from './voice-service.ts';
import type { CallCreateView, CallView, VoiceServerView } from './voice-views.ts';

/** The one media region of an embedded SFU (Discord's `region` of a call). */
export const CALL_REGION = 'hearth';

export type CallRefusal = 'unknown_channel' | 'not_private_channel' | 'blocked' | 'not_connected';

export type CallOutcome = { ok: true; server: VoiceServerView | undefined } | { ok: false; refusal: CallRefusal };

export interface CallServiceDeps extends Omit<VoiceServiceDeps, 'chat' | 'bus' | 'log'> {
  chat: Pick<ChatModule, 'access' | 'store' | 'messages'>;
  ids: SnowflakeGenerator;
  config: Pick<Config, 'voiceRingTimeoutMs'>;
}

/** Calls looked at per ring sweep (the rest are taken at the next one). */
const RING_SWEEP_LIMIT = 200;

/**
 * DM and group-DM calls (docs/voice.md, "DM and group-DM calls"). The call of a DM channel is its voice states
 * (kept under the channel's id, `guild_id: null`) and a call record (message id, who is rung, who took part),
 * both in the shared voice store. The first join creates the call: CALL_CREATE to the recipients and a type 3
 * CALL system message; the last leave ends it: CALL_DELETE and the message's `ended_timestamp`. Every event of a
 * call goes to the channel's recipients.
 */
export class CallService {
  constructor(private readonly deps: CallServiceDeps) {}

  /** Op 4 `{guild_id: null, channel_id}`: join (or change one's flags in) the DM channel's call. */
  async join(
    sessionId: string,
    userId: string,
    request: VoiceStateRequest & { channelId: string },
  ): Promise<CallOutcome> {
    const { store } = this.deps;
    let access: ChannelAccess;
    try {
      access = await this.deps.chat.access.channel(request.channelId, userId, this.deps.clock.now());
    } catch (error) {
      if (error instanceof ApiError) return { ok: false, refusal: 'unknown_channel' };
      throw error;
    }
    const { channel } = access;
    if (!isPrivateChannel(channel)) return { ok: false, refusal: 'not_private_channel' };
    const recipients = access.recipients ?? [];
    const others = recipients.filter((id) => id !== userId);
    const blocked = await this.deps.chat.store.blockedAmong(userId, others);
    // A blocked pair cannot call each other; in a group DM the blocked are only left out of the ringing.
    if (channel.type === CHANNEL_TYPES.DM && blocked.size > 0) return { ok: false, refusal: 'blocked' };

    const previous = await store.get(channel.id, userId);
    const state: StoredVoiceState = {
      guild_id: null,
      channel_id: channel.id,
      user_id: userId,
      session_id: sessionId,
      deaf: false,
      mute: false,
      self_deaf: request.selfDeaf,
      self_mute: request.selfMute || request.selfDeaf,
      self_video: request.selfVideo,
      self_stream: request.selfStream,
      suppress: false,
      request_to_speak_timestamp: null,
    };
    await store.put(state, 0);

    let call = await store.call(channel.id);
    if (!call) {
      const ringing = others.filter((id) => !blocked.has(id));
      const until = this.deps.clock.now() + this.deps.config.voiceRingTimeoutMs;
      const created: StoredCall = {
        channel_id: channel.id,
        message_id: this.deps.ids.next(),
        region: CALL_REGION,
        ringing,
        participants: [userId],
        ring_deadlines: Object.fromEntries(ringing.map((id) => [id, until])),
      };
      if (await store.createCall(created)) {
        // Even with nobody rung, the check comes: a call nobody answers ends then.
        await store.scheduleRingCheck(channel.id, until);
        await this.send(recipients, 'CALL_CREATE', {
          ...callView(created),
          voice_states: await store.ofGuild(channel.id),
        });
        const author = await this.deps.chat.store.user(userId);
        await this.deps.chat.messages.create({
          channel,
          id: created.message_id,
          recipients,
          author: author ?? null,
          type: MESSAGE_TYPES.CALL,
          canMentionEveryone: false,
          extras: { call: { participants: created.participants, ended_timestamp: null } },
        });
        await this.announce(state, recipients);
        return { ok: true, server: await mintVoiceServer(this.deps, state) };
      }
      // Someone else's join created it a moment ago: join theirs.
      call = await store.call(channel.id);
    }
    if (call) {
      const wasRinging = call.ringing.includes(userId);
      const newcomer = !call.participants.includes(userId);
      if (wasRinging || newcomer) {
        call.ringing = call.ringing.filter((id) => id !== userId);
        if (call.ring_deadlines) delete call.ring_deadlines[userId];
        if (newcomer) call.participants.push(userId);
        await store.putCall(call);
        if (wasRinging) await this.send(recipients, 'CALL_UPDATE', callView(call));
        if (newcomer) await this.callMessage(channel, call, null);
      }
    }
    await this.announce(state, recipients);
    const joined = !previous || previous.session_id !== sessionId;
    return { ok: true, server: joined ? await mintVoiceServer(this.deps, state) : undefined };
  }

  /**
   * Leaves the DM channel's call (op 4 `channel_id: null`, or the session ended: then only the state that
   * session holds). The last one out ends the call.
   */
  async leave(channelId: string, userId: string, sessionId?: string): Promise<CallOutcome> {
    const { store } = this.deps;
    const removed = await store.remove(channelId, userId, sessionId);
    if (!removed) return { ok: false, refusal: 'not_connected' };
    const recipients = await this.deps.chat.store.recipientIds(channelId);
    const audience = recipients.includes(userId) ? recipients : [...recipients, userId];
    await this.send(audience, 'VOICE_STATE_UPDATE', {
      ...removed,
      channel_id: null,
      self_video: false,
      self_stream: false,
    });
    if ((await store.ofGuild(channelId)).length === 0) {
      const ended = await store.deleteCall(channelId);
      if (ended) {
        await this.send(recipients, 'CALL_DELETE', { channel_id: channelId });
        const channel = await this.deps.chat.store.channel(channelId);
        if (channel) await this.callMessage(channel, ended, new Date(this.deps.clock.now()).toISOString());
      }
    }
    return { ok: true, server: undefined };
  }

  /**
   * `POST /channels/{id}/call/ring`: rings `recipients` (default: every recipient not in the call), except the
   * caller, those already in the call and those in a block with the caller.
   */
  async ring(channelId: string, userId: string, targets: string[] | null | undefined): Promise<void> {
    const access = await this.deps.chat.access.channel(channelId, userId, this.deps.clock.now());
    const { channel } = access;
    const call = await this.requireCall(channel);
    const recipients = access.recipients ?? [];
    const inCall = new Set((await this.deps.store.ofGuild(channel.id)).map((s) => s.user_id));
    const wanted = (targets ?? recipients).filter((id) => recipients.includes(id) && id !== userId && !inCall.has(id));
    const blocked = await this.deps.chat.store.blockedAmong(userId, wanted);
    const added = [...new Set(wanted)].filter((id) => !blocked.has(id) && !call.ringing.includes(id));
    if (added.length === 0) return;
    const until = this.deps.clock.now() + this.deps.config.voiceRingTimeoutMs;
    call.ringing.push(...added);
    call.ring_deadlines = { ...call.ring_deadlines };
    for (const id of added) call.ring_deadlines[id] = until;
    await this.deps.store.putCall(call);
    await this.deps.store.scheduleRingCheck(channel.id, nextRingCheck(call, until));
    await this.send(recipients, 'CALL_UPDATE', callView(call));
  }

  /**
   * `POST /channels/{id}/call/stop-ringing`: stops ringing `recipients` (default: the caller — declining).
   * No call, or nobody of them rung: nothing happens.
   */
  async stopRinging(channelId: string, userId: string, targets: string[] | null | undefined): Promise<void> {
    const access = await this.deps.chat.access.channel(channelId, userId, this.deps.clock.now());
    const { channel } = access;
    if (!isPrivateChannel(channel)) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
    const call = await this.deps.store.call(channel.id);
    if (!call) return;
    const stop = new Set(targets ?? [userId]);
    const ringing = call.ringing.filter((id) => !stop.has(id));
    if (ringing.length === call.ringing.length) return;
    call.ringing = ringing;
    if (call.ring_deadlines) for (const id of stop) delete call.ring_deadlines[id];
    await this.deps.store.putCall(call);
    await this.send(access.recipients ?? [], 'CALL_UPDATE', callView(call));
  }

  /**
   * CALL_CREATE payloads of the calls in progress among these DM channels, sent after READY (Discord's way of
   * telling a client that connects mid-call), oldest call first.
   */
  async ongoing(channelIds: string[]): Promise<CallCreateView[]> {
    if (channelIds.length === 0) return [];
    const calls = await this.deps.store.callsOf(channelIds);
    calls.sort((a, b) => (BigInt(a.message_id) < BigInt(b.message_id) ? -1 : 1));
    const out: CallCreateView[] = [];
    for (const call of calls) {
      const voiceStates = await this.deps.store.ofGuild(call.channel_id);
      // A call whose last member is leaving right now: its CALL_DELETE is on its way.
      if (voiceStates.length === 0) continue;
      out.push({ ...callView(call), voice_states: voiceStates });
    }
    return out;
  }

  /**
   * The ringing timeout (docs/voice.md#ringing-timeout), run by every process (each due call goes to one):
   * recipients rung for `voiceRingTimeoutMs` without answering stop ringing (CALL_UPDATE), and a call that nobody
   * but its caller has joined ends once nobody rings any more (its members hang up, CALL_DELETE).
   * Returns how many calls it changed.
   */
  async sweepRinging(): Promise<number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    let changed = 0;
    for (const channelId of await store.takeDueRingChecks(now, RING_SWEEP_LIMIT)) {
      const call = await store.call(channelId);
      if (!call) continue;
      const deadlines: Record<string, number> = {};
      const ringing: string[] = [];
      for (const id of call.ringing) {
        // A record from before the timeout existed starts its recipients' clocks now.
        const until = call.ring_deadlines?.[id] ?? now + this.deps.config.voiceRingTimeoutMs;
        if (until > now) {
          ringing.push(id);
          deadlines[id] = until;
        }
      }
      const stopped = ringing.length !== call.ringing.length;
      if (stopped) {
        call.ringing = ringing;
        call.ring_deadlines = deadlines;
        await store.putCall(call);
        await this.send(await this.deps.chat.store.recipientIds(channelId), 'CALL_UPDATE', callView(call));
        changed++;
      }
      if (ringing.length > 0) {
        await store.scheduleRingCheck(channelId, nextRingCheck(call, now));
        continue;
      }
      if (call.participants.length > 1) continue;
      // Unanswered: whoever is still in it (the caller) is hung up; the last leave sends CALL_DELETE.
      for (const state of await store.ofGuild(channelId)) await this.leave(channelId, state.user_id, state.session_id);
      if (!stopped) changed++;
    }
    return changed;
  }

  private async requireCall(channel: ChannelRow): Promise<StoredCall> {
    if (!isPrivateChannel(channel)) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
    const call = await this.deps.store.call(channel.id);
    if (!call) throw new ApiError('UNKNOWN_CALL');
    return call;
  }

  private async announce(state: StoredVoiceState, recipients: string[]): Promise<void> {
    await this.send(recipients, 'VOICE_STATE_UPDATE', { ...state });
  }

  private callMessage(channel: ChannelRow, call: StoredCall, endedAt: string | null): Promise<void> {
    return this.deps.chat.messages.setExtras(channel, call.message_id, {
      call: { participants: call.participants, ended_timestamp: endedAt },
    });
  }

  private send<E extends GatewayEvent>(userIds: string[], event: E, payload: GatewayEvents[E]): Promise<void> {
    return this.deps.dispatcher.dispatch(event, payload, { kind: 'users', userIds });
  }
}

/** When the call's next ring check is due: its earliest ringing deadline (`fallback` when none is known). */
function nextRingCheck(call: StoredCall, fallback: number): number {
  const deadlines = call.ringing.map((id) => call.ring_deadlines?.[id] ?? fallback);
  return deadlines.length > 0 ? Math.min(...deadlines) : fallback;
}

/** CALL_CREATE / CALL_UPDATE's common part, as Discord sends it. */
function callView(call: StoredCall): CallView {
  return { channel_id: call.channel_id, message_id: call.message_id, region: call.region, ringing: call.ringing };
}
