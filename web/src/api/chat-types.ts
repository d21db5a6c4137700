/** Chat wire shapes (docs/chat.md "Shapes"); only the fields the web client reads. */
import type { PartialUser, Snowflake } from './types.ts';

export const ChannelType = { Text: 0, DM: 1, Voice: 2, GroupDM: 3, Category: 4 } as const;

export interface PermissionOverwrite {
  id: Snowflake;
  type: 0 | 1;
  allow: string;
  deny: string;
}

export interface Channel {
  id: Snowflake;
  type: number;
  guild_id?: Snowflake;
  name?: string | null;
  position?: number;
  parent_id?: Snowflake | null;
  topic?: string | null;
  last_message_id?: Snowflake | null;
  permission_overwrites?: PermissionOverwrite[];
  recipients?: PartialUser[];
  owner_id?: Snowflake;
  /** A group DM's icon hash (docs/chat.md). */
  icon?: string | null;
}

export interface Role {
  id: Snowflake;
  name: string;
  color: number;
  position: number;
  permissions: string;
  hoist: boolean;
  mentionable: boolean;
}

export interface Member {
  user?: PartialUser;
  nick?: string | null;
  /** Per-guild profile: image hashes under `/media/guilds/{gid}/users/{uid}/…`, null = the account's own. */
  avatar?: string | null;
  banner?: string | null;
  bio?: string | null;
  roles: Snowflake[];
  joined_at?: string;
  communication_disabled_until?: string | null;
}

/** A timed mute: `end_time` null mutes until unmuted. */
export interface MuteConfig {
  end_time: string | null;
  selected_time_window: number;
}

/**
 * One guild's notification settings of the person (READY `user_guild_settings`, USER_GUILD_SETTINGS_UPDATE), or,
 * with `guild_id` null, those of their direct conversations (overrides keyed by DM / group DM id).
 */
export interface GuildNotificationSettings {
  guild_id: Snowflake | null;
  muted: boolean;
  mute_config: MuteConfig | null;
  /** 0 all messages, 1 only mentions, 2 nothing, 3 the guild's default. */
  message_notifications: number;
  /** @everyone and @here do not notify nor count as a mention. */
  suppress_everyone: boolean;
  /** Role mentions do not notify nor count as a mention. */
  suppress_roles: boolean;
  channel_overrides: {
    channel_id: Snowflake;
    muted: boolean;
    mute_config: MuteConfig | null;
    /** 3: the guild's level. */
    message_notifications: number;
    /** A category folded in the channel list. */
    collapsed: boolean;
  }[];
  version: number;
}

/**
 * What `PATCH /users/@me/guilds/{id}/settings` (`@me`: the direct conversations' entry) changes: members left out
 * (a channel's too) keep their value.
 */
export interface GuildSettingsChanges {
  muted?: boolean;
  mute_config?: MuteConfig | null;
  message_notifications?: number;
  suppress_everyone?: boolean;
  suppress_roles?: boolean;
  channel_overrides?: Record<
    Snowflake,
    { muted?: boolean; mute_config?: MuteConfig | null; message_notifications?: number; collapsed?: boolean }
  >;
}

export interface Guild {
  id: Snowflake;
  name: string;
  icon: string | null;
  owner_id: Snowflake;
  system_channel_id?: Snowflake | null;
  roles?: Role[];
  channels?: Channel[];
  members?: Member[];
  member_count?: number;
  /** More members than the session's `large_threshold` (250 for this client): presences follow op 14. */
  large?: boolean;
  unavailable?: boolean;
  emojis?: Emoji[];
  /** What a member is notified of unless they chose otherwise: 0 all messages, 1 only mentions. */
  default_message_notifications?: number;
}

export interface Emoji {
  id: Snowflake | null;
  name: string;
  animated?: boolean;
}

export interface Reaction {
  emoji: Emoji;
  count: number;
  me: boolean;
}

export interface Attachment {
  id: Snowflake;
  filename: string;
  size: number;
  url: string;
  proxy_url?: string;
  content_type?: string | null;
  width?: number | null;
  height?: number | null;
  description?: string | null;
}

export interface Embed {
  title?: string;
  description?: string;
  url?: string;
  color?: number;
}

/** Message components (docs/bots.md): action rows of buttons or one select. */
export interface Component {
  type: number;
  custom_id?: string;
  label?: string;
  style?: number;
  url?: string;
  disabled?: boolean;
  placeholder?: string;
  options?: { label: string; value: string; description?: string }[];
  components?: Component[];
  emoji?: { name?: string };
}

export interface Message {
  application_id?: Snowflake;
  /** Type 3 (a DM call): who took part and when it ended. */
  call?: { participants: Snowflake[]; ended_timestamp: string | null };
  components?: Component[];
  id: Snowflake;
  channel_id: Snowflake;
  guild_id?: Snowflake;
  author: PartialUser;
  member?: Member;
  type: number;
  flags?: number;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  pinned: boolean;
  mention_everyone: boolean;
  mentions: PartialUser[];
  mention_roles: Snowflake[];
  attachments: Attachment[];
  embeds: Embed[];
  reactions?: Reaction[];
  /** `type` 1: a forward, whose `message_snapshots` holds what it copied. */
  message_reference?: { type?: 0 | 1; message_id?: Snowflake; channel_id?: Snowflake; guild_id?: Snowflake };
  referenced_message?: Message | null;
  /** A forward's frozen copy of its source (Discord's APIMessageSnapshot): no author, no id. */
  message_snapshots?: { message: MessageSnapshot }[];
  nonce?: string | number;
  webhook_id?: Snowflake;
}

export interface Relationship {
  id: Snowflake;
  type: 1 | 2 | 3 | 4;
  user: PartialUser;
}

export interface Invite {
  code: string;
  guild?: { id: Snowflake; name: string; icon: string | null };
  guild_id?: Snowflake;
  channel?: { id: Snowflake; name: string; type: number };
  inviter?: PartialUser;
  member_count?: number;
  expires_at?: string | null;
}

export type MessageSnapshot = Pick<
  Message,
  | 'type'
  | 'content'
  | 'embeds'
  | 'attachments'
  | 'timestamp'
  | 'edited_timestamp'
  | 'flags'
  | 'mentions'
  | 'mention_roles'
>;

export interface SendMessageBody {
  content?: string;
  nonce?: string;
  message_reference?: { type?: 0 | 1; message_id: Snowflake; channel_id?: Snowflake; guild_id?: Snowflake };
  allowed_mentions?: { parse?: string[]; replied_user?: boolean };
}

/** An option of an application command (Discord's APIApplicationCommandOption, the fields the picker reads). */
/** A choice of a command option, or one an autocomplete answer offers. */
export interface CommandChoice {
  name: string;
  name_localizations?: Record<string, string> | null;
  value: string | number;
}

export interface CommandOption {
  type: number;
  name: string;
  description: string;
  required?: boolean;
  choices?: CommandChoice[];
  autocomplete?: boolean;
  channel_types?: number[];
  options?: CommandOption[];
  min_value?: number;
  max_value?: number;
  min_length?: number;
  max_length?: number;
}

export interface ApplicationCommand {
  id: Snowflake;
  application_id: Snowflake;
  version: string;
  type: number;
  name: string;
  description: string;
  options?: CommandOption[];
}

/** `GET /channels/{id}/application-command-index` (docs/bots.md). */
export interface CommandIndex {
  applications: { id: Snowflake; name: string; icon: string | null; description: string; bot_id?: Snowflake }[];
  application_commands: ApplicationCommand[];
  version: string;
}

/** The query of `GET /guilds/{id}/messages/search` and `GET /channels/{id}/messages/search` (docs/chat.md). */
export interface SearchParams {
  content?: string;
  author_id?: Snowflake[];
  channel_id?: Snowflake[];
  mentions?: Snowflake[];
  has?: string[];
  min_id?: Snowflake;
  max_id?: Snowflake;
  pinned?: 'true' | 'false';
  offset?: string;
  limit?: string;
}

/** Discord's search answer: each hit is a one-element array (where Discord once put context around it). */
export interface SearchAnswer {
  total_results: number;
  messages: Message[][];
}

/** `GET /users/{id}/profile`: what the caller shares with someone. */
export interface UserProfile {
  user: PartialUser;
  user_profile: { bio: string | null; pronouns: string | null; accent_color: number | null; banner: string | null };
  mutual_guilds: { id: Snowflake; nick: string | null }[];
  mutual_friends: PartialUser[];
}
