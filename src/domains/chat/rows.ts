/** Database rows of the chat tables as the drivers return them (int8 columns as decimal strings). */
import type { AttachmentView } from '../attachments/attachment-view.ts';

export const CHANNEL_TYPES = {
  GUILD_TEXT: 0,
  DM: 1,
  GUILD_VOICE: 2,
  GROUP_DM: 3,
  GUILD_CATEGORY: 4,
  ANNOUNCEMENT_THREAD: 10,
  PUBLIC_THREAD: 11,
  PRIVATE_THREAD: 12,
} as const;

/** Thread channel types (announcement, public, private): rows of `channels` with a `threads` row too. */
export const THREAD_TYPES: readonly number[] = [
  CHANNEL_TYPES.ANNOUNCEMENT_THREAD,
  CHANNEL_TYPES.PUBLIC_THREAD,
  CHANNEL_TYPES.PRIVATE_THREAD,
];

export function isThread(channel: Pick<ChannelRow, 'type'>): boolean {
  return THREAD_TYPES.includes(channel.type);
}

export interface GuildRow {
  id: string;
  name: string;
  icon: string | null;
  banner: string | null;
  splash: string | null;
  owner_id: string;
  system_channel_id: string | null;
  system_channel_flags: number;
  rules_channel_id: string | null;
  afk_channel_id: string | null;
  afk_timeout: number;
  features: string[];
  verification_level: number;
  mfa_level: number;
  nsfw_level: number;
  explicit_content_filter: number;
  default_message_notifications: number;
}

export interface OverwriteJson {
  id: string;
  type: number;
  allow: string;
  deny: string;
}

export interface ChannelRow {
  id: string;
  type: number;
  guild_id: string | null;
  name: string | null;
  topic: string | null;
  position: number;
  parent_id: string | null;
  nsfw: boolean;
  rate_limit_per_user: number;
  bitrate: number | null;
  user_limit: number | null;
  permission_overwrites: OverwriteJson[];
  last_message_id: string | null;
  last_pin_timestamp: Date | null;
  owner_id: string | null;
  icon: string | null;
}

/** Roles as the access query aggregates them (JSON, ids and bitfields as strings). */
export interface RoleRow {
  id: string;
  guild_id: string;
  name: string;
  color: number;
  position: number;
  permissions: string;
  hoist: boolean;
  mentionable: boolean;
  managed: boolean;
  bot_user_id: string | null;
}

export interface MemberRow {
  guild_id: string;
  user_id: string;
  nick: string | null;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  roles: string[];
  joined_at: Date | string;
  mute: boolean;
  deaf: boolean;
  communication_disabled_until: Date | string | null;
}

export interface MessageRow {
  id: string;
  channel_id: string;
  guild_id: string | null;
  author_id: string | null;
  webhook_id: string | null;
  webhook_name: string | null;
  webhook_avatar: string | null;
  type: number;
  flags: number;
  content: string;
  edited_at: Date | null;
  pinned_at: Date | null;
  mention_everyone: boolean;
  tts: boolean;
  mentions: string[];
  mention_roles: string[];
  embeds: unknown[];
  attachments: AttachmentView[];
  sticker_ids: string[];
  reference_message_id: string | null;
  reference_channel_id: string | null;
  reference_guild_id: string | null;
  /** Members of the message object owned by other modules: `components`, `application_id`, `interaction_metadata`. */
  extras: Record<string, unknown> | null;
}

export interface InviteRow {
  code: string;
  guild_id: string;
  channel_id: string;
  inviter_id: string | null;
  max_age: number;
  max_uses: number;
  uses: number;
  temporary: boolean;
  created_at: Date;
  expires_at: Date | null;
}

/** Columns of `members` with arrays cast to text so ids keep their precision on every driver. */
export const MEMBER_COLUMNS =
  'm.guild_id, m.user_id, m.nick, m.avatar, m.banner, m.bio, m.roles::text[] AS roles, m.joined_at, m.mute, m.deaf, m.communication_disabled_until';

export const MESSAGE_COLUMNS =
  'msg.id, msg.channel_id, msg.guild_id, msg.author_id, msg.webhook_id, msg.webhook_name, msg.webhook_avatar, msg.type, ' +
  'msg.flags, msg.content, msg.edited_at, msg.pinned_at, msg.mention_everyone, msg.tts, msg.mentions::text[] AS mentions, ' +
  'msg.mention_roles::text[] AS mention_roles, msg.embeds, msg.attachments, msg.sticker_ids::text[] AS sticker_ids, ' +
  'msg.reference_message_id, msg.reference_channel_id, msg.reference_guild_id, msg.extras';

/** A JSON object of a role row with ids and permissions as text, for aggregation in SQL. */
export const ROLE_JSON =
  "json_build_object('id', r.id::text, 'guild_id', r.guild_id::text, 'name', r.name, 'color', r.color, " +
  "'position', r.position, 'permissions', r.permissions::text, 'hoist', r.hoist, 'mentionable', r.mentionable, " +
  "'managed', r.managed, 'bot_user_id', r.bot_user_id::text)";

export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
