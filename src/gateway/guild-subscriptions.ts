import { type GuildSubscriptionPayload, SUBSCRIPTION_LIMITS } from './protocol.ts';

/** One guild's subscription: every member's presence (`all`), or only those of `members`. */
interface GuildSubscription {
  all: boolean;
  members: ReadonlySet<string>;
}

/** A session's subscriptions as a hand-off carries them, oldest first (docs/gateway.md#across-nodes). */
export type SubscriptionsState = [guildId: string, all: boolean, members: string[]][];

/**
 * What a session that sent no `intents` asked to follow in its large guilds with op 14
 * (docs/gateway.md#large-guilds). At most 100 guilds, the least recently subscribed dropped first; at most 100
 * members per guild (the parser refuses more).
 */
export class GuildSubscriptions {
  /** Insertion order is recency: a guild subscribed again moves to the end. */
  private readonly guilds = new Map<string, GuildSubscription>();

  get size(): number {
    return this.guilds.size;
  }

  /**
   * Applies one op 14. `activities` sets whether every member's presence is followed; `members` replaces the
   * followed users. A guild's first request without either subscribes it as a whole.
   */
  apply(request: GuildSubscriptionPayload): void {
    const previous = this.guilds.get(request.guildId);
    this.guilds.delete(request.guildId);
    const all = request.activities ?? previous?.all ?? request.members === undefined;
    const members = request.members ? new Set(request.members) : (previous?.members ?? new Set<string>());
    this.guilds.set(request.guildId, { all, members });
    while (this.guilds.size > SUBSCRIPTION_LIMITS.guilds) {
      const oldest = this.guilds.keys().next().value as string;
      this.guilds.delete(oldest);
    }
  }

  /** Whether the session follows `userId`'s presence in the guild. */
  follows(guildId: string, userId: string): boolean {
    const subscription = this.guilds.get(guildId);
    return subscription !== undefined && (subscription.all || subscription.members.has(userId));
  }

  snapshot(): SubscriptionsState {
    return [...this.guilds].map(([guildId, { all, members }]) => [guildId, all, [...members]]);
  }

  restore(state: SubscriptionsState | undefined): void {
    this.guilds.clear();
    for (const [guildId, all, members] of state ?? []) this.guilds.set(guildId, { all, members: new Set(members) });
  }
}
