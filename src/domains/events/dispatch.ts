import type { EventBus } from '../../platform/state/event-bus.ts';
import type { GatewayEvent, GatewayEvents } from './catalogue.ts';

export type { GatewayEvent, GatewayEvents, GatewayPayload } from './catalogue.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'gateway.dispatch': Dispatch;
  }
}

/** Who may receive a gateway dispatch. The gateway checks membership and `VIEW_CHANNEL` per connection. */
export type Audience =
  /**
   * Every member of a guild (guild-wide events: GUILD_UPDATE, roles, members); with `permission` (a decimal
   * permission bit set) only members holding all of it at guild level (GUILD_AUDIT_LOG_ENTRY_CREATE).
   */
  | { kind: 'guild'; guildId: string; permission?: string }
  /** Members of a guild who can view the channel (messages, typing, channel updates). */
  | { kind: 'channel'; guildId: string; channelId: string }
  /** Explicit users (DMs, USER_UPDATE, relationships, a member who just left). */
  | { kind: 'users'; userIds: string[] }
  /**
   * Not delivered as such (event `CHANNEL_VISIBILITY`): a change to a guild's overwrites, roles, members' roles or
   * owner may have changed who can view its channels. Each gateway process compares, for the guild's members
   * connected to it, what they could view as `before` describes with what they can view now, and sends
   * CHANNEL_DELETE for each channel one lost and CHANNEL_CREATE for each one gained (docs/gateway.md).
   */
  | { kind: 'visibility'; guildId: string; before: VisibilityBefore };

/**
 * How a guild's permission data differed before a change from what it is now (only what changed). Small on
 * purpose: it crosses the event bus, and each process applies it to the state it already caches.
 */
export interface VisibilityBefore {
  /** Channel id → its overwrites before (decimal `allow`/`deny`, as stored). */
  overwrites?: Record<string, { id: string; type: number; allow: string; deny: string }[]>;
  /** Role id → its permissions before (decimal); a deleted role included. */
  roles?: Record<string, string>;
  /** Role id → members who held it before and do not now (a role removed from them, or deleted). */
  held?: Record<string, string[]>;
  /** Role id → members who hold it now and did not before. */
  notHeld?: Record<string, string[]>;
  /** The owner before an ownership transfer. */
  ownerId?: string;
}

/** The internal event name of a `visibility` dispatch (never sent to a client). */
export const VISIBILITY_EVENT = 'CHANNEL_VISIBILITY' satisfies GatewayEvent;

/** One event of the catalogue with its payload: a switch over `event` narrows `payload`. */
export type Dispatch = { [E in GatewayEvent]: DispatchOf<E> }[GatewayEvent];

export interface DispatchOf<E extends GatewayEvent> {
  event: E;
  payload: GatewayEvents[E];
  audience: Audience;
  /** Unix ms when published: fan-out latency is measured from here (docs/deployment.md, "Metrics"). */
  publishedAt?: number;
}

export const DISPATCH_TOPIC = 'gateway.dispatch';

/**
 * Publishes gateway events onto the event bus; every gateway process subscribes and delivers to the
 * connections that may see them. Handlers call this after the change is committed.
 */
export class Dispatcher {
  constructor(private readonly bus: EventBus) {}

  async dispatch<E extends GatewayEvent>(event: E, payload: GatewayEvents[E], audience: Audience): Promise<void> {
    const dispatch = { event, payload, audience, publishedAt: Date.now() } as DispatchOf<E> as Dispatch;
    await this.bus.publish(DISPATCH_TOPIC, dispatch, dispatchShardKey(dispatch));
  }
}

/**
 * The guild a dispatch concerns: on a sharded bus (a Redis cluster, docs/deployment.md#redis-cluster) a
 * guild's events travel on that guild's shard and keep their order. GUILD_CREATE and GUILD_DELETE sent to
 * users name the guild in `id`: they go on the guild's shard too, so a member's first guild event never
 * overtakes the GUILD_CREATE that adds the guild to their sessions (the gateway's guild index follows it).
 */
export function dispatchShardKey({ event, payload, audience }: Dispatch): string | undefined {
  if (audience.kind !== 'users') return audience.guildId;
  const fields = payload as { guild_id?: unknown; id?: unknown };
  if (typeof fields.guild_id === 'string') return fields.guild_id;
  if ((event === 'GUILD_CREATE' || event === 'GUILD_DELETE') && typeof fields.id === 'string') return fields.id;
  return undefined;
}
