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
  roles: Snowflake[];
  joined_at?: string;
  communication_disabled_until?: string | null;
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
  unavailable?: boolean;
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
  message_reference?: { message_id?: Snowflake; channel_id?: Snowflake };
  referenced_message?: Message | null;
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

export interface SendMessageBody {
  content?: string;
  nonce?: string;
  message_reference?: { message_id: Snowflake };
  allowed_mentions?: { parse?: string[]; replied_user?: boolean };
}
