/**
 * What the gateway reads from the chat core. The chat module implements it (`ChatReadModel` in
 * `chat-read-model.ts`); the gateway depends only on this interface.
 */
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
   * The guild payload of READY and GUILD_CREATE for one viewer (api.md §3.8 and §6): guild fields at top
   * level and under `properties`, roles, visible channels, members, counts, `joined_at`.
   * `reducedMembers` reduces member `user` objects to `{id}` (READY and the bot burst).
   */
  guildPayload(
    guildId: string,
    viewerId: string,
    options?: { reducedMembers?: boolean },
  ): Promise<Record<string, unknown> | undefined>;
  /** The viewer's DM and group-DM channels (READY `private_channels`). */
  privateChannelsOf(userId: string): Promise<Record<string, unknown>[]>;
  /** True when the user is a member of the guild and may view the channel (membership + VIEW_CHANNEL). */
  canViewChannel(userId: string, guildId: string, channelId: string): Promise<boolean>;
  /** Members for op 8 Request Guild Members. */
  searchMembers(
    guildId: string,
    options: { query?: string; limit: number; userIds?: string[] },
  ): Promise<Record<string, unknown>[]>;
}
