import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import { snowflakeTimestamp } from '../../platform/crypto/snowflake.ts';
import type { AttachmentView } from '../attachments/attachment-view.ts';
import { parsePermissions } from './permissions.ts';
import { CHANNEL_TYPES, type ChannelRow, type GuildRow, iso, type MemberRow, type RoleRow } from './rows.ts';
import type { StickerItemView, StickerView } from './sticker-store.ts';
import type { ThreadView } from './thread-views.ts';

/**
 * Wire shapes of docs/chat.md, with the field names discord.js reads. The types describe what the builders send,
 * field by field (Discord's shapes where Hearth follows them, Hearth's own where it differs); the gateway event
 * catalogue types the whole-object events with them (docs/gateway.md#every-event).
 */

/** A guild's own fields (`guildView`): REST `GET /guilds/{id}` adds roles and expressions, GUILD_CREATE more. */
export type GuildView = {
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
  vanity_url_code: null;
};

/** A role (`roleView`); `permissions` is the bitfield as a decimal string. */
export type RoleView = {
  id: string;
  name: string;
  color: number;
  position: number;
  permissions: string;
  hoist: boolean;
  mentionable: boolean;
  managed: boolean;
  /** A bot's managed role only. */
  tags?: { bot_id: string };
};

/** A permission overwrite; `allow`/`deny` are decimal strings. */
export type OverwriteView = { id: string; type: number; allow: string; deny: string };

type GuildChannelBase = { id: string; type: number; guild_id: string | null; name: string | null; position: number };

/** A guild channel (`channelView`): the members depend on the type, as on Discord. */
export type GuildChannelView =
  /** A category (type 4). */
  | (GuildChannelBase & { parent_id: null; permission_overwrites: OverwriteView[]; nsfw: boolean })
  /** A voice channel (type 2). */
  | (GuildChannelBase & {
      parent_id: string | null;
      permission_overwrites: OverwriteView[];
      nsfw: boolean;
      bitrate: number;
      user_limit: number;
      rate_limit_per_user: number;
      last_message_id: string | null;
    })
  /** A text channel (type 0). */
  | (GuildChannelBase & {
      topic: string | null;
      parent_id: string | null;
      permission_overwrites: OverwriteView[];
      nsfw: boolean;
      rate_limit_per_user: number;
      last_message_id: string | null;
      last_pin_timestamp: string | null;
    });

/** A DM (type 1) or group DM (type 3) as one recipient sees it (`privateChannelView`). */
export type PrivateChannelView =
  | {
      id: string;
      type: number;
      name: string | null;
      icon: string | null;
      owner_id: string | null;
      recipients: PartialUser[];
      last_message_id: string | null;
      last_pin_timestamp: string | null;
    }
  | {
      id: string;
      type: number;
      recipients: PartialUser[];
      last_message_id: string | null;
      last_pin_timestamp: string | null;
    };

/** A guild member (`memberView`); `user` is absent where the member rides on a message (MESSAGE_CREATE). */
export type MemberView = {
  user?: PartialUser | { id: string };
  nick: string | null;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  roles: string[];
  joined_at: string | null;
  mute: boolean;
  deaf: boolean;
  communication_disabled_until: string | null;
};

/** A reaction on a message: the emoji, how many, and whether the viewer is among them. */
export type ReactionView = {
  emoji: { id: string | null; name: string | null; animated?: boolean };
  count: number;
  me: boolean;
};

/**
 * A message (`MessageService.render`, docs/chat.md). `components`, `application_id`, `interaction`,
 * `interaction_metadata` and a call's `call` come from the row's `extras` (written by the modules that own them),
 * `nonce` only on the MESSAGE_CREATE and the answer of the create that carried one.
 */
export type MessageView = {
  id: string;
  channel_id: string;
  author: PartialUser;
  webhook_id?: string;
  type: number;
  flags: number;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  pinned: boolean;
  mention_everyone: boolean;
  tts: boolean;
  mentions: PartialUser[];
  mention_roles: string[];
  embeds: unknown[];
  attachments: AttachmentView[];
  stickers: StickerView[];
  sticker_items?: StickerItemView[];
  components: unknown[];
  application_id?: string;
  interaction?: unknown;
  interaction_metadata?: unknown;
  call?: { participants: string[]; ended_timestamp: string | null };
  thread?: ThreadView;
  reactions?: ReactionView[];
  message_reference?: { type?: number; message_id?: string; channel_id: string; guild_id?: string };
  referenced_message?: MessageView | null;
  nonce?: string | number;
};

/** MESSAGE_CREATE/UPDATE: a guild message also carries `guild_id` and the author's `member` (without `user`). */
export type MessageEventView = MessageView & { guild_id?: string; member?: MemberView };

export function guildView(g: GuildRow): GuildView {
  return {
    id: g.id,
    name: g.name,
    icon: g.icon,
    banner: g.banner,
    splash: g.splash,
    owner_id: g.owner_id,
    system_channel_id: g.system_channel_id,
    system_channel_flags: g.system_channel_flags,
    rules_channel_id: g.rules_channel_id,
    afk_channel_id: g.afk_channel_id,
    afk_timeout: g.afk_timeout,
    features: g.features,
    verification_level: g.verification_level,
    mfa_level: g.mfa_level,
    nsfw_level: g.nsfw_level,
    explicit_content_filter: g.explicit_content_filter,
    default_message_notifications: g.default_message_notifications,
    vanity_url_code: null,
  };
}

export function roleView(r: RoleRow): RoleView {
  return {
    id: r.id,
    name: r.name,
    color: r.color,
    position: r.position,
    permissions: parsePermissions(r.permissions).toString(),
    hoist: r.hoist,
    mentionable: r.mentionable,
    managed: r.managed,
    ...(r.bot_user_id ? { tags: { bot_id: r.bot_user_id } } : {}),
  };
}

export function overwritesView(c: Pick<ChannelRow, 'permission_overwrites'>): OverwriteView[] {
  return c.permission_overwrites.map((o) => ({
    id: o.id,
    type: o.type,
    allow: parsePermissions(o.allow).toString(),
    deny: parsePermissions(o.deny).toString(),
  }));
}

/** A guild channel; DM channels go through `privateChannelView` because recipients depend on the viewer. */
export function channelView(c: ChannelRow): GuildChannelView {
  const base = { id: c.id, type: c.type, guild_id: c.guild_id, name: c.name, position: c.position };
  const overwrites = overwritesView(c);
  switch (c.type) {
    case CHANNEL_TYPES.GUILD_CATEGORY:
      return { ...base, parent_id: null, permission_overwrites: overwrites, nsfw: c.nsfw };
    case CHANNEL_TYPES.GUILD_VOICE:
      return {
        ...base,
        parent_id: c.parent_id,
        permission_overwrites: overwrites,
        nsfw: c.nsfw,
        bitrate: c.bitrate ?? 64000,
        user_limit: c.user_limit ?? 0,
        rate_limit_per_user: c.rate_limit_per_user,
        last_message_id: c.last_message_id,
      };
    default:
      return {
        ...base,
        topic: c.topic,
        parent_id: c.parent_id,
        permission_overwrites: overwrites,
        nsfw: c.nsfw,
        rate_limit_per_user: c.rate_limit_per_user,
        last_message_id: c.last_message_id,
        last_pin_timestamp: iso(c.last_pin_timestamp),
      };
  }
}

/** DM (type 1) and group DM (type 3) as one recipient sees them: `recipients` excludes the viewer. */
export function privateChannelView(
  c: ChannelRow,
  recipients: readonly UserRecord[],
  viewerId: string,
): PrivateChannelView {
  const others = recipients.filter((u) => u.id !== viewerId).map(partialUser);
  if (c.type === CHANNEL_TYPES.GROUP_DM) {
    return {
      id: c.id,
      type: c.type,
      name: c.name,
      icon: c.icon,
      owner_id: c.owner_id,
      recipients: others,
      last_message_id: c.last_message_id,
      last_pin_timestamp: iso(c.last_pin_timestamp),
    };
  }
  return {
    id: c.id,
    type: c.type,
    recipients: others,
    last_message_id: c.last_message_id,
    last_pin_timestamp: iso(c.last_pin_timestamp),
  };
}

/** A member; `user` is the full partial user unless a reduced `{id}` is asked for (READY, bot burst). */
export function memberView(
  m: MemberRow,
  user: UserRecord | { id: string } | undefined,
  options: { includeUser?: boolean } = {},
): MemberView {
  // Built member by member, `user` first when present, as the wire has always had it.
  const view = {} as MemberView;
  if (options.includeUser !== false) view.user = user && 'username' in user ? partialUser(user) : { id: m.user_id };
  view.nick = m.nick;
  view.avatar = m.avatar;
  view.banner = m.banner;
  view.bio = m.bio;
  view.roles = m.roles;
  view.joined_at = iso(m.joined_at);
  view.mute = m.mute;
  view.deaf = m.deaf;
  view.communication_disabled_until = iso(m.communication_disabled_until);
  return view;
}

export function timestampOf(id: string): string {
  return new Date(snowflakeTimestamp(id)).toISOString();
}
