import type { VisibilityBefore } from '../events/dispatch.ts';
import type { GuildPayloadView } from './guild-payload.ts';
import type { GuildSettingsPayload } from './guild-settings-store.ts';
import type { ReadStatePayload } from './read-state-store.ts';
import type { RelationshipView } from './relationships.ts';
import type { GuildChannelView, MemberView, PrivateChannelView } from './views.ts';

/**
 * What the gateway reads from the chat core. The chat module implements it (`ChatReadModel` in
 * `chat-read-model.ts`); the gateway depends only on this interface.
 */
/** Some users lost (CHANNEL_DELETE) or gained (CHANNEL_CREATE) sight of one channel. */
export interface VisibilityChange {
  event: 'CHANNEL_DELETE' | 'CHANNEL_CREATE';
  /** The channel as REST shows it, `guild_id` included. */
  channel: GuildChannelView;
  userIds: string[];
}

/** What READY needs to know first about a user, read in one round trip. */
export interface ReadyIndex {
  /** Ids of the guilds the user is a member of, ascending. */
  guildIds: string[];
  /** Whether the user takes part in any DM or group DM (when not, READY skips that read). */
  hasPrivateChannels: boolean;
}

export interface ChatReadModelPort {
  readyIndex(userId: string): Promise<ReadyIndex>;
  /**
   * The guild payload of READY and GUILD_CREATE for one viewer (docs/gateway.md#ready-s-1): guild fields at top
   * level and under `properties`, roles, visible channels, members, counts, `joined_at`.
   * `reducedMembers` reduces member `user` objects to `{id}` (READY and the bot burst); `largeThreshold` is the
   * session's (docs/gateway.md#large-guilds); `lastMessageIds` replaces the snapshot's channel `last_message_id`s.
   */
  guildPayload(
    guildId: string,
    viewerId: string,
    options?: { reducedMembers?: boolean; largeThreshold?: number; lastMessageIds?: ReadonlyMap<string, string> },
  ): Promise<GuildPayloadView | undefined>;
  /**
   * The newest message id of each channel of these guilds, read now (`lastMessageIds` of `guildPayload`): the
   * guild snapshots are cached and a new message does not invalidate them, so their `last_message_id` can be old.
   */
  lastMessageIds(guildIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** How many members the guild has (the gateway's test of a large guild). */
  memberCount(guildId: string): Promise<number>;
  /** READY `read_state`: `{version, partial: false, entries: [{id, last_message_id, mention_count, last_pin_timestamp, flags}]}`. */
  readStateOf(userId: string): Promise<ReadStatePayload>;
  /** READY `user_guild_settings`: `{version, partial: false, entries: [the user's per-guild notification settings]}`. */
  guildSettingsOf(userId: string): Promise<GuildSettingsPayload>;
  /** The viewer's DM and group-DM channels (READY `private_channels`). */
  privateChannelsOf(userId: string): Promise<PrivateChannelView[]>;
  /** True when the user is a member of the guild and may view the channel (membership + VIEW_CHANNEL). */
  canViewChannel(userId: string, guildId: string, channelId: string): Promise<boolean>;
  /**
   * Of `userIds` (members of the guild), who lost or gained VIEW_CHANNEL on its channels through the change
   * `before` describes, compared with the state now; one entry per channel and direction, in channel order.
   */
  visibilityChanges(guildId: string, userIds: readonly string[], before: VisibilityBefore): Promise<VisibilityChange[]>;
  /** True when the user is a member of the guild holding every bit of `permission` (decimal) at guild level. */
  holdsGuildPermission(userId: string, guildId: string, permission: string): Promise<boolean>;
  /** Members for op 8 Request Guild Members. */
  searchMembers(guildId: string, options: { query?: string; limit: number; userIds?: string[] }): Promise<MemberView[]>;
  /** The user's relationships in the REST shape (READY `relationships`). */
  relationshipsOf(userId: string): Promise<RelationshipView[]>;
  /** Ids of the user's friends: they see the user's presence outside any guild. */
  friendIds(userId: string): Promise<string[]>;
}
