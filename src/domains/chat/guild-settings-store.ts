import type { Database } from '../../platform/db/database.ts';
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

/**
 * One entry of READY `user_guild_settings` and the payload of USER_GUILD_SETTINGS_UPDATE: a guild's, or (with
 * `guild_id` null) the entry of the user's direct conversations, whose overrides are keyed by DM / group DM id.
 */
export interface GuildSettingsView {
  guild_id: string | null;
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
  guild_id: string | null;
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

const SETTINGS_COLUMNS = `muted, mute_end_time, mute_window, message_notifications, suppress_everyone,
  suppress_roles, mobile_push, hide_muted_channels, notify_highlights, flags, channel_overrides, version::text AS version`;
const COLUMNS = `guild_id::text AS guild_id, ${SETTINGS_COLUMNS}`;
const PRIVATE_COLUMNS = `NULL::text AS guild_id, ${SETTINGS_COLUMNS}`;

/**
 * Whose row a change goes to: a guild's (user_guild_settings, keyed by the membership) or the user's direct
 * conversations' (user_private_channel_settings, one row per user: the entry with `guild_id` null).
 */
type Target = { guildId: string } | { guildId: null };

function rowSql(target: Target): { table: string; where: string; columns: string; insert: string } {
  return target.guildId === null
    ? {
        table: 'user_private_channel_settings',
        where: 'user_id = $1',
        columns: PRIVATE_COLUMNS,
        insert: 'INSERT INTO user_private_channel_settings (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING',
      }
    : {
        table: 'user_guild_settings',
        where: 'user_id = $1 AND guild_id = $2',
        columns: COLUMNS,
        insert:
          'INSERT INTO user_guild_settings (user_id, guild_id) VALUES ($1, $2) ON CONFLICT (user_id, guild_id) DO NOTHING',
      };
}

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
 * The SQL of a user's notification settings (docs/chat.md#notification-settings). A guild's row exists only
 * once the user changed something in that guild; it goes with the membership (foreign key on `members`). The
 * direct conversations' entry is one row per user (`user_private_channel_settings`), made by its first PATCH.
 */
export class GuildSettingsStore {
  constructor(private readonly db: Database) {}

  /**
   * Applies `changes` to the user's settings of the guild and answers the new whole object. `channelIds` are the
   * guild's channels now (the caller checked the overrides' keys against them).
   */
  update(
    userId: string,
    guildId: string,
    changes: GuildSettingsChanges,
    channelIds: ReadonlySet<string>,
    now: number,
  ): Promise<GuildSettingsView> {
    return this.apply(userId, { guildId }, changes, channelIds, now);
  }

  /**
   * The same for the entry of the user's direct conversations (`guild_id` null): `channelIds` are the DMs and
   * group DMs the user is a recipient of now (`privateChannelIds`, which the caller checked the keys against).
   */
  updatePrivate(
    userId: string,
    changes: GuildSettingsChanges,
    channelIds: ReadonlySet<string>,
    now: number,
  ): Promise<GuildSettingsView> {
    return this.apply(userId, { guildId: null }, changes, channelIds, now);
  }

  /**
   * Of `userIds`, those whose settings of the guild suppress @everyone / @here pings and those that suppress role
   * pings: such a ping does not count in their mention count (docs/chat.md#notification-settings).
   */
  async suppressorsAmong(
    guildId: string,
    userIds: readonly string[],
  ): Promise<{ everyone: Set<string>; roles: Set<string> }> {
    const out = { everyone: new Set<string>(), roles: new Set<string>() };
    if (userIds.length === 0) return out;
    const rows = await this.db.query<{ user_id: string; suppress_everyone: boolean; suppress_roles: boolean }>(
      `SELECT user_id::text AS user_id, suppress_everyone, suppress_roles FROM user_guild_settings
        WHERE user_id = ANY($2::bigint[]) AND guild_id = $1 AND (suppress_everyone OR suppress_roles)`,
      [guildId, userIds],
    );
    for (const row of rows) {
      if (row.suppress_everyone) out.everyone.add(row.user_id);
      if (row.suppress_roles) out.roles.add(row.user_id);
    }
    return out;
  }

  /** The DMs and group DMs the user is a recipient of now. */
  async privateChannelIds(userId: string): Promise<Set<string>> {
    const rows = await this.db.query<{ id: string }>(
      'SELECT channel_id::text AS id FROM dm_recipients WHERE user_id = $1',
      [userId],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * One transaction: the row is created if needed, then locked, so two concurrent PATCHes of one person both
   * land.
   */
  private async apply(
    userId: string,
    target: Target,
    changes: GuildSettingsChanges,
    channelIds: ReadonlySet<string>,
    now: number,
  ): Promise<GuildSettingsView> {
    const sql = rowSql(target);
    const keys = target.guildId === null ? [userId] : [userId, target.guildId];
    return this.db.transaction(async (tx) => {
      await tx.query(sql.insert, keys);
      const [current] = await tx.query<SettingsRow>(
        `SELECT ${sql.columns} FROM ${sql.table} WHERE ${sql.where} FOR UPDATE`,
        keys,
      );
      if (!current) throw new Error('notification settings row vanished inside its transaction');
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
      // The values follow the row's key (one or two parameters).
      const $ = (n: number) => `$${keys.length + n}`;
      const [row] = await tx.query<SettingsRow>(
        `UPDATE ${sql.table} SET
           muted = coalesce(${$(1)}, muted),
           mute_end_time = CASE WHEN ${$(2)} THEN ${$(3)}::timestamptz ELSE mute_end_time END,
           mute_window = CASE WHEN ${$(2)} THEN ${$(4)}::integer ELSE mute_window END,
           message_notifications = coalesce(${$(5)}, message_notifications),
           suppress_everyone = coalesce(${$(6)}, suppress_everyone),
           suppress_roles = coalesce(${$(7)}, suppress_roles),
           mobile_push = coalesce(${$(8)}, mobile_push),
           hide_muted_channels = coalesce(${$(9)}, hide_muted_channels),
           notify_highlights = coalesce(${$(10)}, notify_highlights),
           flags = coalesce(${$(11)}, flags),
           channel_overrides = ${$(12)}::jsonb,
           version = version + 1
         WHERE ${sql.where}
         RETURNING ${sql.columns}`,
        [
          ...keys,
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
      if (!row) throw new Error('notification settings update returned nothing');
      return toView(row, channelIds, now);
    });
  }

  /**
   * READY's `user_guild_settings`: the user's guild rows (every one is of a guild they are in: the row goes with
   * the membership), then the direct conversations' entry (`guild_id` null) when there is one, its overrides those
   * of conversations the user is still in. Overrides of deleted guild channels are left out: `channelIdsOf` gives a
   * guild's channel ids from what READY already holds (the cached guild snapshots), so this reads no channel.
   * `version` is the highest entry version.
   */
  async readyState(
    userId: string,
    now: number,
    channelIdsOf: (guildId: string) => Promise<ReadonlySet<string>>,
  ): Promise<GuildSettingsPayload> {
    const [guildRows, privateRows] = await Promise.all([
      this.db.query<SettingsRow & { guild_id: string }>(
        `SELECT ${COLUMNS} FROM user_guild_settings s WHERE s.user_id = $1 ORDER BY s.guild_id`,
        [userId],
      ),
      // The direct conversations' entry, with the ones the user is still in.
      this.db.query<SettingsRow & { channel_ids: string[] | null }>(
        `SELECT ${PRIVATE_COLUMNS},
                (SELECT array_agg(d.channel_id::text) FROM dm_recipients d WHERE d.user_id = s.user_id) AS channel_ids
           FROM user_private_channel_settings s WHERE s.user_id = $1`,
        [userId],
      ),
    ]);
    const guildChannelIds = await Promise.all(guildRows.map((row) => channelIdsOf(row.guild_id)));
    let version = 0;
    const entries = [
      ...guildRows.map((row, i) => toView(row, guildChannelIds[i] ?? new Set(), now)),
      ...privateRows.map((row) => toView(row, new Set(row.channel_ids ?? []), now)),
    ];
    for (const row of [...guildRows, ...privateRows]) version = Math.max(version, Number(row.version));
    return { version, partial: false, entries };
  }
}
