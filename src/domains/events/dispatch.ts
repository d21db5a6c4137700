import type { EventBus } from '../../platform/state/event-bus.ts';

/** Who may receive a gateway dispatch. The gateway checks membership and `VIEW_CHANNEL` per connection. */
export type Audience =
  /** Every member of a guild (guild-wide events: GUILD_UPDATE, roles, members). */
  | { kind: 'guild'; guildId: string }
  /** Members of a guild who can view the channel (messages, typing, channel updates). */
  | { kind: 'channel'; guildId: string; channelId: string }
  /** Explicit users (DMs, USER_UPDATE, relationships, a member who just left). */
  | { kind: 'users'; userIds: string[] };

export interface Dispatch {
  event: string;
  payload: Record<string, unknown>;
  audience: Audience;
}

export const DISPATCH_TOPIC = 'gateway.dispatch';

/**
 * Publishes gateway events onto the event bus; every gateway process subscribes and delivers to the
 * connections that may see them. Handlers call this after the change is committed.
 */
export class Dispatcher {
  constructor(private readonly bus: EventBus) {}

  async dispatch(event: string, payload: Record<string, unknown>, audience: Audience): Promise<void> {
    await this.bus.publish<Dispatch>(DISPATCH_TOPIC, { event, payload, audience });
  }
}
