import type { Database, Queryable } from '../../platform/db/database.ts';
import { iso } from './rows.ts';

/** `message_notifications`: every message, only mentions, nothing, or (3) the guild's default / the guild's level. */
export const MESSAGE_NOTIFICATIONS = { ALL: 0, ONLY_MENTIONS: 1, NOTHING: 2, INHERIT: 3 } as const;

/** A timed mute: `end_time` null mutes until unmuted; `selected_time_window` is the client's choice in seconds (-1: forever). */
export interface MuteConfig {
  end_time: string | null;
  selected_time_window: number;
}

export interface ChannelOverrideView {
  channel_id: string;
  muted: boolean;
  mute_config: MuteConfig | null;
  message_notifications: number;
  collapsed: boolean;
}

/** One guild's entry of READY `user_guild_settings` and the payload of USER_GUILD_SETTINGS_UPDATE. */
export interface GuildSettingsView {
  guild_id: string;
  muted: boolean;
  mute_config: MuteConfig | null;
  message_notifications: number;
  suppress_everyone: boolean;
  suppress_roles: boolean;
  mobile_push: boolean;
  hide_muted_channels: boolean;
  notify_highlights: number;
  flags: number;
  channel_overrides: ChannelOverrideView[];
  version: number;
}

/** READY `user_guild_settings` (the established user-account shape; Hearth always sends the full set). */
export interface GuildSettingsPayload {
  version: number;
  partial: false;
  entries: GuildSettingsView[];
}

/** A channel override as stored (the view without its `channel_id`, which is the key). */
type StoredOverride = Omit<ChannelOverrideView, 'channel_id'>;

/** What a PATCH changes; absent members keep their value. */
export interface GuildSettingsChanges {
  muted?: boolean | undefined;
  mute_config?: MuteConfig | null | undefined;
  message_notifications?: number | undefined;
  suppress_everyone?: boolean | undefined;
  suppress_roles?: boolean | undefined;
  mobile_push?: boolean | undefined;
  hide_muted_channels?: boolean | undefined;
  notify_highlights?: number | undefined;
  flags?: number | undefined;
  channel_overrides?: Record<string, Partial<StoredOverride>> | undefined;
}

interface SettingsRow {
  guild_id: string;
  muted: boolean;
  mute_end_time: Date | string | null;
  mute_window: number | null;
  message_notifications: number;
  suppress_everyone: boolean;
  suppress_roles: boolean;
  mobile_push: boolean;
  hide_muted_channels: boolean;
  notify_highlights: number;
  flags: number;
  channel_overrides: Record<string, StoredOverride>;
  version: string;
}

const DEFAULT_OVERRIDE: StoredOverride = {
  muted: false,
  mute_config: null,
  message_notifications: MESSAGE_NOTIFICATIONS.INHERIT,
  collapsed: false,
};

const COLUMNS = `guild_id::text AS guild_id, muted, mute_end_time, mute_window, message_notifications, suppress_everyone,
  suppress_roles, mobile_push, hide_muted_channels, notify_highlights, flags, channel_overrides, version::text AS version`;

/** A mute whose end has passed reads as no mute, so nobody stays silenced by a stale row. */
function liveMute(
  muted: boolean,
  config: MuteConfig | null,
  now: number,
): { muted: boolean; config: MuteConfig | null } {
  if (muted && config?.end_time && Date.parse(config.end_time) <= now) return { muted: false, config: null };
  return { muted, config };
}

/** A row's view; overrides of channels that are no longer the guild's are left out. */
function toView(row: SettingsRow, channelIds: ReadonlySet<string>, now: number): GuildSettingsView {
  const config: MuteConfig | null =
    row.mute_window === null && row.mute_end_time === null
      ? null
      : { end_time: iso(row.mute_end_time), selected_time_window: row.mute_window ?? -1 };
  const guildMute = liveMute(row.muted, config, now);
  const overrides = Object.entries(row.channel_overrides)
    .filter(([id]) => channelIds.has(id))
    .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1))
    .map(([channelId, stored]): ChannelOverrideView => {
      const mute = liveMute(stored.muted, stored.mute_config, now);
      return {
        channel_id: channelId,
        muted: mute.muted,
        mute_config: mute.config,
        message_notifications: stored.message_notifications,
        collapsed: stored.collapsed,
      };
    });
  return {
    guild_id: row.guild_id,
    muted: guildMute.muted,
    mute_config: guildMute.config,
    message_notifications: row.message_notifications,
    suppress_everyone: row.suppress_everyone,
    suppress_roles: row.suppress_roles,
    mobile_push: row.mobile_push,
    hide_muted_channels: row.hide_muted_channels,
    notify_highlights: row.notify_highlights,
    flags: row.flags,
    channel_overrides: overrides,
    version: Number(row.version),
  };
}

function isDefault(override: StoredOverride): boolean {
  return (
    !override.muted &&
    override.mute_config === null &&
    override.message_notifications === MESSAGE_NOTIFICATIONS.INHERIT &&
    !override.collapsed
  );
}

/**
 * The SQL of a user's per-guild notification settings (docs/chat.md#notification-settings). A row exists only
 * once the user changed something in that guild; it goes with the membership (foreign key on `members`).
 */
export class GuildSettingsStore {
  constructor(private readonly db: Database) {}

  /**
   * Applies `changes` to the user's settings of the guild and answers the new whole object. `channelIds` are the
   * guild's channels now (the caller checked the overrides' keys against them). One transaction: the row is
   * created if needed, then locked, so two concurrent PATCHes of one person both land.
   */
  async update(
    userId: string,
    guildId: string,
    changes: GuildSettingsChanges,
    channelIds: ReadonlySet<string>,
    now: number,
  ): Promise<GuildSettingsView> {
    return this.db.transaction(async (tx) => {
      await tx.query(
        'INSERT INTO user_guild_settings (user_id, guild_id) VALUES ($1, $2) ON CONFLICT (user_id, guild_id) DO NOTHING',
        [userId, guildId],
      );
      const current = await this.row(tx, userId, guildId);
      if (!current) throw new Error('guild settings row vanished inside its transaction');
      const overrides = { ...current.channel_overrides };
      for (const [channelId, change] of Object.entries(changes.channel_overrides ?? {})) {
        const merged: StoredOverride = { ...DEFAULT_OVERRIDE, ...overrides[channelId] };
        if (change.muted !== undefined) merged.muted = change.muted;
        if (change.mute_config !== undefined) merged.mute_config = change.mute_config;
        if (change.message_notifications !== undefined) merged.message_notifications = change.message_notifications;
        if (change.collapsed !== undefined) merged.collapsed = change.collapsed;
        // An override back at every default is no override: the list stays as short as the person's choices.
        if (isDefault(merged)) delete overrides[channelId];
        else overrides[channelId] = merged;
      }
      // Overrides of deleted channels are dropped on the way.
      for (const channelId of Object.keys(overrides)) if (!channelIds.has(channelId)) delete overrides[channelId];
      const config = changes.mute_config;
      const [row] = await tx.query<SettingsRow>(
        `UPDATE user_guild_settings SET
           muted = coalesce($3, muted),
           mute_end_time = CASE WHEN $4 THEN $5::timestamptz ELSE mute_end_time END,
           mute_window = CASE WHEN $4 THEN $6::integer ELSE mute_window END,
           message_notifications = coalesce($7, message_notifications),
           suppress_everyone = coalesce($8, suppress_everyone),
           suppress_roles = coalesce($9, suppress_roles),
           mobile_push = coalesce($10, mobile_push),
           hide_muted_channels = coalesce($11, hide_muted_channels),
           notify_highlights = coalesce($12, notify_highlights),
           flags = coalesce($13, flags),
           channel_overrides = $14::jsonb,
           version = version + 1
         WHERE user_id = $1 AND guild_id = $2
         RETURNING ${COLUMNS}`,
        [
          userId,
          guildId,
          changes.muted ?? null,
          config !== undefined,
          config?.end_time ?? null,
          config ? config.selected_time_window : null,
          changes.message_notifications ?? null,
          changes.suppress_everyone ?? null,
          changes.suppress_roles ?? null,
          changes.mobile_push ?? null,
          changes.hide_muted_channels ?? null,
          changes.notify_highlights ?? null,
          changes.flags ?? null,
          JSON.stringify(overrides),
        ],
      );
      if (!row) throw new Error('guild settings update returned nothing');
      return toView(row, channelIds, now);
    });
  }

  private async row(db: Queryable, userId: string, guildId: string): Promise<SettingsRow | undefined> {
    const [row] = await db.query<SettingsRow>(
      `SELECT ${COLUMNS} FROM user_guild_settings WHERE user_id = $1 AND guild_id = $2 FOR UPDATE`,
      [userId, guildId],
    );
    return row;
  }

  /**
   * READY's `user_guild_settings`: the user's rows (every one is of a guild they are in: the row goes with the
   * membership), with each guild's channel ids read in the same query to leave out overrides of deleted
   * channels. `version` is the highest entry version.
   */
  async readyState(userId: string, now: number): Promise<GuildSettingsPayload> {
    const rows = await this.db.query<SettingsRow & { channel_ids: string[] | null }>(
      `SELECT ${COLUMNS},
              (SELECT array_agg(c.id::text) FROM channels c
                WHERE c.guild_id = s.guild_id AND c.type NOT IN (10, 11, 12)) AS channel_ids
         FROM user_guild_settings s WHERE s.user_id = $1 ORDER BY s.guild_id`,
      [userId],
    );
    let version = 0;
    const entries = rows.map((row) => {
      version = Math.max(version, Number(row.version));
      return toView(row, new Set(row.channel_ids ?? []), now);
    });
    return { version, partial: false, entries };
  }
}
