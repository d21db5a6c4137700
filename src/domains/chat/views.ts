import { partialUser, type UserRecord } from '../../identity/user-record.ts';
import { snowflakeTimestamp } from '../../platform/crypto/snowflake.ts';
import { parsePermissions } from './permissions.ts';
import { CHANNEL_TYPES, type ChannelRow, type GuildRow, iso, type MemberRow, type RoleRow } from './rows.ts';

/** Wire shapes of docs/chat.md, with the field names discord.js reads. */

export function guildView(g: GuildRow): Record<string, unknown> {
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

export function roleView(r: RoleRow): Record<string, unknown> {
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

export function overwritesView(c: Pick<ChannelRow, 'permission_overwrites'>): Record<string, unknown>[] {
  return c.permission_overwrites.map((o) => ({
    id: o.id,
    type: o.type,
    allow: parsePermissions(o.allow).toString(),
    deny: parsePermissions(o.deny).toString(),
  }));
}

/** A guild channel; DM channels go through `privateChannelView` because recipients depend on the viewer. */
export function channelView(c: ChannelRow): Record<string, unknown> {
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
): Record<string, unknown> {
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
): Record<string, unknown> {
  const view: Record<string, unknown> = {};
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
