import { z } from 'zod';
import type { Database } from '../../platform/db/database.ts';

/** The locales the platform's clients offer (Discord's list); `locale` settings must be one of them. */
export const LOCALES = [
  'id',
  'da',
  'de',
  'en-GB',
  'en-US',
  'es-ES',
  'es-419',
  'fr',
  'hr',
  'it',
  'lt',
  'hu',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'ro',
  'fi',
  'sv-SE',
  'vi',
  'tr',
  'cs',
  'el',
  'bg',
  'ru',
  'uk',
  'hi',
  'th',
  'zh-CN',
  'ja',
  'zh-TW',
  'ko',
] as const;

/**
 * Every member of the settings object READY and `GET /users/@me/settings` carry, with its default; only
 * what a user changed is stored. The platform's own web client stops on its splash screen when one is
 * missing (restricted_guilds, for one), so none may be.
 */
export const DEFAULT_SETTINGS: Omit<UserSettingsView, 'locale'> = {
  status: 'online',
  custom_status: null,
  status_resets_at: null,
  status_resets_to: null,
  theme: 'dark',
  guild_positions: [],
  guild_folders: [],
  restricted_guilds: [],
  default_guilds_restricted: false,
  friend_source_flags: { all: true },
  friend_discovery_flags: 0,
  incoming_call_flags: 0,
  group_dm_add_permission_flags: 0,
  time_format: 0,
  afk_timeout: 600,
  timezone_offset: 0,
  developer_mode: false,
  message_display_compact: false,
  inline_attachment_media: true,
  inline_embed_media: true,
  render_embeds: true,
  render_reactions: true,
  animate_emoji: true,
  animate_stickers: 0,
  gif_auto_play: true,
  enable_tts_command: true,
  convert_emoticons: true,
  explicit_content_filter: 1,
  show_current_game: true,
  detect_platform_accounts: true,
  disable_games_tab: false,
  native_phone_integration_enabled: true,
  contact_sync_upsell_shown: false,
  view_nsfw_guilds: false,
  view_nsfw_commands: false,
  passwordless: false,
  flags: 0,
};

const snowflakeList = z.array(z.string().regex(/^\d{1,20}$/)).max(200);

/** `PATCH /users/@me/settings`: typed members; unknown members are ignored, as the platform does. */
export const settingsPatchSchema = z
  .object({
    locale: z.enum(LOCALES).optional(),
    status: z.enum(['online', 'idle', 'dnd', 'invisible']).optional(),
    custom_status: z
      .object({
        text: z.string().max(128).nullish(),
        emoji_id: z
          .string()
          .regex(/^\d{1,20}$/)
          .nullish(),
        emoji_name: z.string().max(64).nullish(),
        expires_at: z.string().max(40).nullish(),
      })
      .strip()
      .nullable()
      .optional(),
    status_resets_at: z.string().max(40).nullable().optional(),
    status_resets_to: z.enum(['online', 'idle', 'dnd', 'invisible']).nullable().optional(),
    theme: z.enum(['dark', 'light']).optional(),
    guild_positions: snowflakeList.optional(),
    guild_folders: z
      .array(
        z
          .object({
            id: z.union([z.number().int(), z.string().max(20)]).nullish(),
            name: z.string().max(100).nullish(),
            color: z.number().int().min(0).max(0xffffff).nullish(),
            guild_ids: snowflakeList,
          })
          .strip(),
      )
      .max(200)
      .optional(),
    restricted_guilds: snowflakeList.optional(),
    default_guilds_restricted: z.boolean().optional(),
    // Who may send a friend request: `{all: true}`, or any of `mutual_friends` / `mutual_guilds`, or `{}` for
    // nobody (docs/accounts.md#privacy). Other members are dropped.
    friend_source_flags: z
      .object({
        all: z.boolean().optional(),
        mutual_friends: z.boolean().optional(),
        mutual_guilds: z.boolean().optional(),
      })
      .strip()
      .optional(),
    friend_discovery_flags: z.number().int().min(0).max(255).optional(),
    incoming_call_flags: z.number().int().min(0).max(255).optional(),
    group_dm_add_permission_flags: z.number().int().min(0).max(255).optional(),
    time_format: z.number().int().min(0).max(2).optional(),
    afk_timeout: z.number().int().min(60).max(600).optional(),
    timezone_offset: z.number().int().min(-840).max(840).optional(),
    developer_mode: z.boolean().optional(),
    message_display_compact: z.boolean().optional(),
    inline_attachment_media: z.boolean().optional(),
    inline_embed_media: z.boolean().optional(),
    render_embeds: z.boolean().optional(),
    render_reactions: z.boolean().optional(),
    animate_emoji: z.boolean().optional(),
    animate_stickers: z.number().int().min(0).max(2).optional(),
    gif_auto_play: z.boolean().optional(),
    enable_tts_command: z.boolean().optional(),
    convert_emoticons: z.boolean().optional(),
    explicit_content_filter: z.number().int().min(0).max(2).optional(),
    show_current_game: z.boolean().optional(),
    detect_platform_accounts: z.boolean().optional(),
    disable_games_tab: z.boolean().optional(),
    native_phone_integration_enabled: z.boolean().optional(),
    contact_sync_upsell_shown: z.boolean().optional(),
    view_nsfw_guilds: z.boolean().optional(),
    view_nsfw_commands: z.boolean().optional(),
  })
  .strip();

export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** What a user may change of their settings and stores: the patch's members but `locale` (on the user row). */
type StoredSettings = Omit<SettingsPatch, 'locale'>;

/**
 * The settings object of READY `user_settings` and `GET`/`PATCH /users/@me/settings` (`UserSettingsStore.settings`):
 * every member a user may change, each present (its default when never changed), their `locale`, and the two
 * members only the platform sets.
 */
export type UserSettingsView = Required<StoredSettings> & { locale: string; passwordless: boolean; flags: number };

/** USER_SETTINGS_UPDATE: only the members that changed (a PATCH's, or `restricted_guilds` on a guild join). */
export type UserSettingsUpdateView = Partial<UserSettingsView>;

/** Stored settings and notes (SQL); `locale` lives on the user row. */
export class UserSettingsStore {
  constructor(private readonly db: Database) {}

  async settings(userId: string, locale: string): Promise<UserSettingsView> {
    const [row] = await this.db.query<{ settings: StoredSettings }>(
      'SELECT settings FROM user_settings WHERE user_id = $1',
      [userId],
    );
    return { ...DEFAULT_SETTINGS, ...(row?.settings ?? {}), locale };
  }

  /** Stores the changed members (not `locale`); returns them. */
  async update(userId: string, changes: StoredSettings): Promise<void> {
    await this.db.query(
      `INSERT INTO user_settings (user_id, settings) VALUES ($1, $2::jsonb)
       ON CONFLICT (user_id) DO UPDATE SET settings = user_settings.settings || EXCLUDED.settings`,
      [userId, JSON.stringify(changes)],
    );
  }

  async notes(userId: string): Promise<Record<string, string>> {
    const rows = await this.db.query<{ target_id: string; note: string }>(
      'SELECT target_id::text AS target_id, note FROM user_notes WHERE user_id = $1',
      [userId],
    );
    return Object.fromEntries(rows.map((r) => [r.target_id, r.note]));
  }

  async note(userId: string, targetId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ note: string }>(
      'SELECT note FROM user_notes WHERE user_id = $1 AND target_id = $2',
      [userId, targetId],
    );
    return row?.note;
  }

  /** An empty note deletes it. */
  async setNote(userId: string, targetId: string, note: string): Promise<void> {
    if (note === '') {
      await this.db.query('DELETE FROM user_notes WHERE user_id = $1 AND target_id = $2', [userId, targetId]);
      return;
    }
    await this.db.query(
      `INSERT INTO user_notes (user_id, target_id, note) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, target_id) DO UPDATE SET note = EXCLUDED.note`,
      [userId, targetId, note],
    );
  }
}
