import type { EventBus } from '../../platform/state/event-bus.ts';
import {
  type Audience,
  type Dispatcher,
  type GatewayEvent,
  type GatewayEvents,
  VISIBILITY_EVENT,
  type VisibilityBefore,
} from '../events/dispatch.ts';
import type { ChannelAccess } from './access.ts';
import { type ChannelRow, isThread } from './rows.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'chat.invalidate': ChatInvalidation;
  }
}

/** Tells every process that cached permission data of a guild (or of one member in it) is stale. */
export const CHAT_INVALIDATE_TOPIC = 'chat.invalidate';
export interface ChatInvalidation {
  guildId: string;
  /** Only this member's row changed; absent = the guild's roles, channels or owner changed. */
  userId?: string;
  /** Members were added in bulk (the test harness's seed): every cached member row and count is dropped. */
  members?: true;
}

/** The payload of `E` without the fields a `ChatEvents` method adds itself (`guild_id`, `channel_id`). */
type Without<E extends GatewayEvent, K extends string> = Omit<GatewayEvents[E], K>;

/** `payload` with the fields a method added: the event's payload again (checked at the call site without them). */
function completed<E extends GatewayEvent>(payload: object): GatewayEvents[E] {
  return payload as GatewayEvents[E];
}

/**
 * The chat module's outlet to the gateway. Call after the database change has committed: a dispatch
 * describes state the receiver can already read back.
 */
export class ChatEvents {
  private threadAudience: ((thread: ChannelRow) => Promise<Audience>) | undefined;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly bus: EventBus,
  ) {}

  /** Who sees a thread's events: the threads module knows (parent viewers, or a private thread's members). */
  setThreadAudience(resolve: (thread: ChannelRow) => Promise<Audience>): void {
    this.threadAudience = resolve;
  }

  guild<E extends GatewayEvent>(event: E, guildId: string, payload: Without<E, 'guild_id'>): Promise<void> {
    return this.dispatcher.dispatch(event, completed<E>({ ...payload, guild_id: guildId }), { kind: 'guild', guildId });
  }

  /** Guild members holding `permission` at guild level (owner and ADMINISTRATOR included). */
  guildHolders<E extends GatewayEvent>(
    event: E,
    guildId: string,
    permission: bigint,
    payload: Without<E, 'guild_id'>,
  ): Promise<void> {
    return this.dispatcher.dispatch(event, completed<E>({ ...payload, guild_id: guildId }), {
      kind: 'guild',
      guildId,
      permission: permission.toString(),
    });
  }

  users<E extends GatewayEvent>(event: E, userIds: readonly string[], payload: GatewayEvents[E]): Promise<void> {
    if (userIds.length === 0) return Promise.resolve();
    return this.dispatcher.dispatch(event, payload, { kind: 'users', userIds: [...new Set(userIds)] });
  }

  /** Channel-scoped events: viewers of a guild channel, or the recipients of a DM. */
  channel<E extends GatewayEvent>(
    event: E,
    access: Pick<ChannelAccess, 'channel' | 'recipients'>,
    payload: Without<E, 'channel_id' | 'guild_id'>,
  ) {
    const { channel } = access;
    if (channel.guild_id === null) {
      return this.users(event, access.recipients ?? [], completed<E>({ ...payload, channel_id: channel.id }));
    }
    const full = completed<E>({ ...payload, channel_id: channel.id, guild_id: channel.guild_id });
    if (isThread(channel) && this.threadAudience) {
      return this.threadAudience(channel).then((audience) => this.dispatcher.dispatch(event, full, audience));
    }
    const audience: Audience = { kind: 'channel', guildId: channel.guild_id, channelId: channel.id };
    return this.dispatcher.dispatch(event, full, audience);
  }

  /** A thread's own events (THREAD_CREATE/UPDATE/DELETE/MEMBERS_UPDATE): who sees the thread; payload untouched. */
  async thread<E extends GatewayEvent>(event: E, thread: ChannelRow, payload: GatewayEvents[E]): Promise<void> {
    const guildId = thread.guild_id as string;
    const audience: Audience = this.threadAudience
      ? await this.threadAudience(thread)
      : { kind: 'channel', guildId, channelId: thread.parent_id as string };
    await this.dispatcher.dispatch(event, payload, audience);
  }

  /** A guild channel's own events (CHANNEL_CREATE/UPDATE): members who can view it; payload untouched. */
  channelViewers<E extends GatewayEvent>(
    event: E,
    guildId: string,
    channelId: string,
    payload: GatewayEvents[E],
  ): Promise<void> {
    return this.dispatcher.dispatch(event, payload, { kind: 'channel', guildId, channelId });
  }

  /**
   * After a change that may move who sees the guild's channels (call it after `invalidate`): the gateway tells
   * each member who lost a channel (CHANNEL_DELETE) or gained one (CHANNEL_CREATE). `before` holds only what
   * changed; nothing is published when it is empty.
   */
  visibility(guildId: string, before: VisibilityBefore): Promise<void> {
    // Empty parts are dropped: the gateway reads an absent `roles`/`overwrites`/`ownerId` as "only the members
    // named in `held`/`notHeld` can be concerned".
    const kept: VisibilityBefore = {};
    if (before.overwrites && Object.keys(before.overwrites).length > 0) kept.overwrites = before.overwrites;
    if (before.roles && Object.keys(before.roles).length > 0) kept.roles = before.roles;
    if (before.held && Object.values(before.held).some((ids) => ids.length > 0)) kept.held = before.held;
    if (before.notHeld && Object.values(before.notHeld).some((ids) => ids.length > 0)) kept.notHeld = before.notHeld;
    if (before.ownerId !== undefined) kept.ownerId = before.ownerId;
    if (Object.keys(kept).length === 0) return Promise.resolve();
    return this.dispatcher.dispatch(VISIBILITY_EVENT, {}, { kind: 'visibility', guildId, before: kept });
  }

  async invalidate(message: ChatInvalidation): Promise<void> {
    // On the guild's bus shard, like its dispatches: a visibility dispatch published after this invalidation
    // must not reach a process before it (docs/deployment.md#redis-cluster).
    await this.bus.publish(CHAT_INVALIDATE_TOPIC, message, message.guildId);
  }
}
