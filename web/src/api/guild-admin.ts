import type { Channel, Guild, Member, PermissionOverwrite, Role } from './chat-types.ts';
import type { HttpClient } from './http.ts';
import type { PartialUser, Snowflake } from './types.ts';

const enc = encodeURIComponent;

/** A guild as `GET /guilds/{id}` answers it: the settings the overview edits. */
export interface GuildSettings extends Guild {
  afk_channel_id?: Snowflake | null;
  afk_timeout?: number;
  default_message_notifications?: number;
}

export interface GuildEmoji {
  id: Snowflake;
  name: string;
  animated?: boolean;
  user?: PartialUser;
}

/** A guild sticker (`format_type` 1 PNG, 2 APNG, 4 GIF); `tags` is the related emoji. */
export interface GuildSticker {
  id: Snowflake;
  name: string;
  description: string | null;
  tags: string;
  format_type: number;
  user?: PartialUser;
}

/** Where a sticker's image is served (`/media/stickers/<id>.<ext>`, GIF for format 4, else PNG). */
export function stickerUrl(sticker: Pick<GuildSticker, 'id' | 'format_type'>): string {
  return `/media/stickers/${sticker.id}.${sticker.format_type === 4 ? 'gif' : 'png'}`;
}

/** An incoming webhook as the API shows it; `token` and `url` only in the answer that created it. */
export interface Webhook {
  id: Snowflake;
  name: string | null;
  channel_id: Snowflake;
  /** The hash of its avatar (served as an avatar under the webhook's id), or null. */
  avatar?: string | null;
  user?: PartialUser;
  token?: string;
  url?: string;
}

export interface InviteMetadata {
  code: string;
  channel?: { id: Snowflake; name: string } | null;
  inviter?: PartialUser | null;
  uses: number;
  max_uses: number;
  max_age: number;
  created_at: string;
  expires_at?: string | null;
}

export interface Ban {
  user: PartialUser;
  reason: string | null;
}

export interface GuildAuditEntry {
  id: Snowflake;
  action_type: number;
  user_id: Snowflake | null;
  target_id: Snowflake | null;
  reason?: string | null;
  changes?: { key: string; old_value?: unknown; new_value?: unknown }[];
}

export interface GuildAuditLog {
  audit_log_entries: GuildAuditEntry[];
  users: PartialUser[];
}

export type RoleBody = Partial<Pick<Role, 'name' | 'color' | 'hoist' | 'mentionable' | 'permissions'>>;

export interface ChannelBody {
  name?: string;
  type?: number;
  topic?: string | null;
  rate_limit_per_user?: number;
  parent_id?: Snowflake | null;
}

function reasonHeader(reason?: string): Record<string, string> {
  return reason ? { 'X-Audit-Log-Reason': enc(reason) } : {};
}

/** The guild-management routes the server settings call (docs/chat.md). */
export class GuildAdminApi {
  constructor(private readonly http: HttpClient) {}

  guild(guildId: Snowflake): Promise<GuildSettings> {
    return this.http.request('GET', `/guilds/${guildId}`);
  }
  editGuild(guildId: Snowflake, body: Record<string, unknown>): Promise<GuildSettings> {
    return this.http.request('PATCH', `/guilds/${guildId}`, { body });
  }

  createRole(guildId: Snowflake, body: RoleBody): Promise<Role> {
    return this.http.request('POST', `/guilds/${guildId}/roles`, { body });
  }
  editRole(guildId: Snowflake, roleId: Snowflake, body: RoleBody): Promise<Role> {
    return this.http.request('PATCH', `/guilds/${guildId}/roles/${roleId}`, { body });
  }
  deleteRole(guildId: Snowflake, roleId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/guilds/${guildId}/roles/${roleId}`);
  }
  moveRoles(guildId: Snowflake, positions: { id: Snowflake; position: number }[]): Promise<Role[]> {
    return this.http.request('PATCH', `/guilds/${guildId}/roles`, { body: positions });
  }
  setMemberRole(guildId: Snowflake, userId: Snowflake, roleId: Snowflake, on: boolean): Promise<void> {
    return this.http.request(on ? 'PUT' : 'DELETE', `/guilds/${guildId}/members/${userId}/roles/${roleId}`);
  }

  createChannel(guildId: Snowflake, body: ChannelBody): Promise<Channel> {
    return this.http.request('POST', `/guilds/${guildId}/channels`, { body });
  }
  editChannel(channelId: Snowflake, body: ChannelBody): Promise<Channel> {
    return this.http.request('PATCH', `/channels/${channelId}`, { body });
  }
  deleteChannel(channelId: Snowflake): Promise<Channel> {
    return this.http.request('DELETE', `/channels/${channelId}`);
  }
  putOverwrite(channelId: Snowflake, overwrite: PermissionOverwrite): Promise<void> {
    return this.http.request('PUT', `/channels/${channelId}/permissions/${overwrite.id}`, {
      body: { type: overwrite.type, allow: overwrite.allow, deny: overwrite.deny },
    });
  }
  deleteOverwrite(channelId: Snowflake, overwriteId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/channels/${channelId}/permissions/${overwriteId}`);
  }

  webhooks(guildId: Snowflake): Promise<Webhook[]> {
    return this.http.request('GET', `/guilds/${guildId}/webhooks`);
  }
  /** The answer carries the token and URL; they are never shown again. */
  createWebhook(channelId: Snowflake, name: string): Promise<Webhook> {
    return this.http.request('POST', `/channels/${channelId}/webhooks`, { body: { name } });
  }
  /** Renames it, moves it to another text channel of the guild, sets (a data URI) or removes (null) its avatar. */
  editWebhook(
    webhookId: Snowflake,
    body: { name?: string; channel_id?: Snowflake; avatar?: string | null },
  ): Promise<Webhook> {
    return this.http.request('PATCH', `/webhooks/${webhookId}`, { body });
  }

  deleteWebhook(webhookId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/webhooks/${webhookId}`);
  }

  invites(guildId: Snowflake): Promise<InviteMetadata[]> {
    return this.http.request('GET', `/guilds/${guildId}/invites`);
  }
  revokeInvite(code: string): Promise<void> {
    return this.http.request('DELETE', `/invites/${enc(code)}`);
  }

  bans(guildId: Snowflake): Promise<Ban[]> {
    return this.http.request('GET', `/guilds/${guildId}/bans`);
  }
  ban(guildId: Snowflake, userId: Snowflake, reason?: string): Promise<void> {
    return this.http.request('PUT', `/guilds/${guildId}/bans/${userId}`, {
      body: reason ? { reason } : {},
    });
  }
  unban(guildId: Snowflake, userId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/guilds/${guildId}/bans/${userId}`);
  }
  editMember(
    guildId: Snowflake,
    userId: Snowflake,
    body: {
      nick?: string | null;
      communication_disabled_until?: string | null;
      /** Server mute / deafen and voice move or disconnect (`channel_id: null`), docs/voice.md. */
      mute?: boolean;
      deaf?: boolean;
      channel_id?: string | null;
    },
    reason?: string,
  ): Promise<unknown> {
    return this.http.request('PATCH', `/guilds/${guildId}/members/${userId}`, { body, headers: reasonHeader(reason) });
  }
  /** The caller's own per-guild profile (`PATCH /guilds/{id}/members/@me`). */
  editMyProfile(
    guildId: Snowflake,
    body: { nick?: string | null; avatar?: string | null; banner?: string | null; bio?: string | null },
  ): Promise<Member> {
    return this.http.request('PATCH', `/guilds/${guildId}/members/@me`, { body });
  }
  myMember(guildId: Snowflake): Promise<Member> {
    return this.http.request('GET', `/guilds/${guildId}/members/@me`);
  }
  kick(guildId: Snowflake, userId: Snowflake, reason?: string): Promise<void> {
    return this.http.request('DELETE', `/guilds/${guildId}/members/${userId}`, { headers: reasonHeader(reason) });
  }

  emojis(guildId: Snowflake): Promise<GuildEmoji[]> {
    return this.http.request('GET', `/guilds/${guildId}/emojis`);
  }
  createEmoji(guildId: Snowflake, name: string, image: string): Promise<GuildEmoji> {
    return this.http.request('POST', `/guilds/${guildId}/emojis`, { body: { name, image } });
  }
  renameEmoji(guildId: Snowflake, emojiId: Snowflake, name: string): Promise<GuildEmoji> {
    return this.http.request('PATCH', `/guilds/${guildId}/emojis/${emojiId}`, { body: { name } });
  }
  deleteEmoji(guildId: Snowflake, emojiId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/guilds/${guildId}/emojis/${emojiId}`);
  }
  stickers(guildId: Snowflake): Promise<GuildSticker[]> {
    return this.http.request('GET', `/guilds/${guildId}/stickers`);
  }
  /** Multipart: `name`, `tags`, `description?` and the `file` (the API takes a sticker as a form, not JSON). */
  createSticker(
    guildId: Snowflake,
    fields: { name: string; tags: string; description: string },
    file: File,
  ): Promise<GuildSticker> {
    const form = new FormData();
    form.append('name', fields.name);
    form.append('tags', fields.tags);
    if (fields.description) form.append('description', fields.description);
    form.append('file', file);
    return this.http.upload('POST', `/guilds/${guildId}/stickers`, form, () => undefined);
  }
  deleteSticker(guildId: Snowflake, stickerId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/guilds/${guildId}/stickers/${stickerId}`);
  }

  auditLog(
    guildId: Snowflake,
    query: { user_id?: string | undefined; action_type?: string | undefined; before?: string | undefined },
  ): Promise<GuildAuditLog> {
    return this.http.request('GET', `/guilds/${guildId}/audit-logs`, { query: { ...query, limit: '50' } });
  }
}
