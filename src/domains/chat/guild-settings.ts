import { z } from 'zod';
import { ApiError, type FieldError, formError } from '../../http/errors.ts';
import { snowflakeErrorCode } from '../../http/fields.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import { pathId } from './access.ts';
import { MAX_GUILD_CHANNELS } from './channels.ts';
import { type ChatDeps, limits } from './deps.ts';
import type { GuildSettingsStore } from './guild-settings-store.ts';

/** Discord's mute config: when the mute ends (null: until unmuted) and the window the client offered, in seconds. */
const muteConfig = z.object({
  end_time: z.iso.datetime({ offset: true }).nullable(),
  selected_time_window: z.number().int().min(-1).max(2_147_483_647),
});

const level = z.number().int().min(0).max(3);

const channelOverride = z.object({
  muted: z.boolean().optional(),
  mute_config: muteConfig.nullable().optional(),
  message_notifications: level.optional(),
  collapsed: z.boolean().optional(),
});

/**
 * Overrides name distinct channels of the guild, which holds at most `MAX_GUILD_CHANNELS`: a body with more
 * cannot be right and is refused before anything is looked up. The direct conversations' entry has the same bound
 * (a person's open conversations beyond it are not worth a second limit).
 */
const MAX_OVERRIDES = MAX_GUILD_CHANNELS;

/** The established client's body; unknown members are ignored, as on `PATCH /users/@me/settings`. */
const settingsBody = z.object({
  muted: z.boolean().optional(),
  mute_config: muteConfig.nullable().optional(),
  message_notifications: level.optional(),
  suppress_everyone: z.boolean().optional(),
  suppress_roles: z.boolean().optional(),
  mobile_push: z.boolean().optional(),
  hide_muted_channels: z.boolean().optional(),
  notify_highlights: z.number().int().min(0).max(2).optional(),
  flags: z.number().int().min(0).max(2_147_483_647).optional(),
  channel_overrides: z
    .record(z.string(), channelOverride)
    .refine((overrides) => Object.keys(overrides).length <= MAX_OVERRIDES, {
      error: `At most ${MAX_OVERRIDES} channel overrides`,
      params: { code: 'CONTENT_EXCEEDS_MAX_LENGTH' },
    })
    .optional(),
});

type Overrides = NonNullable<z.infer<typeof settingsBody>['channel_overrides']>;

/**
 * The overrides whose keys are snowflakes of `channelIds`, by parsed id, or the field errors of the others (at
 * `channel_overrides.<key>`: not a snowflake, or `unknown` when not one of those channels).
 */
function checkedOverrides(
  given: Overrides | undefined,
  channelIds: ReadonlySet<string>,
  unknown: { code: FieldError['code']; message: string },
): Overrides {
  const overrides: Overrides = {};
  const errors: FieldError[] = [];
  for (const [key, override] of Object.entries(given ?? {})) {
    const parsed = parseSnowflake(key);
    const path = `channel_overrides.${key}`;
    if (!parsed.ok)
      errors.push({
        path,
        code: snowflakeErrorCode(parsed.reason),
        message: 'Value is not a snowflake',
      });
    else if (!channelIds.has(parsed.value)) errors.push({ path, ...unknown });
    else overrides[parsed.value] = override;
  }
  if (errors.length > 0) throw formError(errors);
  return overrides;
}

/**
 * `PATCH /users/@me/guilds/{guild_id}/settings`: the caller's notification settings of one guild they are in, and
 * `PATCH /users/@me/guilds/@me/settings`: those of their direct conversations (the entry with `guild_id` null,
 * overrides keyed by DM / group DM id) (docs/chat.md#notification-settings). The answer and
 * USER_GUILD_SETTINGS_UPDATE (to the caller's sessions only) carry the whole object.
 */
export function guildSettingsRoutes(deps: ChatDeps, settings: GuildSettingsStore): AnyRoute[] {
  const { store, events } = deps;
  return [
    // Before the guild's route in the table; the router prefers the literal segment anyway.
    route({
      method: 'PATCH',
      path: '/users/@me/guilds/@me/settings',
      policy: 'user-only',
      rateLimit: limits.write('users:guild-settings'),
      body: settingsBody,
      async handler(ctx) {
        const channelIds = await settings.privateChannelIds(ctx.user.id);
        const { channel_overrides: given, ...rest } = ctx.body;
        const overrides = checkedOverrides(given, channelIds, {
          code: 'UNKNOWN_PRIVATE_CHANNEL',
          message: 'Not a direct conversation of yours',
        });
        const view = await settings.updatePrivate(
          ctx.user.id,
          { ...rest, ...(given ? { channel_overrides: overrides } : {}) },
          channelIds,
          ctx.now,
        );
        await events.users('USER_GUILD_SETTINGS_UPDATE', [ctx.user.id], view);
        return view;
      },
    }),
    route({
      method: 'PATCH',
      path: '/users/@me/guilds/:guildId/settings',
      policy: 'user-only',
      rateLimit: limits.write('users:guild-settings'),
      body: settingsBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        // Not a member reads as no such guild: the route says nothing of guilds the caller is not in.
        if (!(await store.member(guildId, ctx.user.id))) throw new ApiError('UNKNOWN_GUILD');
        const channelIds = new Set((await store.guildChannels(guildId)).map((c) => c.id));
        const { channel_overrides: given, ...rest } = ctx.body;
        const overrides = checkedOverrides(given, channelIds, {
          code: 'UNKNOWN_GUILD_CHANNEL',
          message: 'Not a channel of this guild',
        });
        const view = await settings.update(
          ctx.user.id,
          guildId,
          { ...rest, ...(given ? { channel_overrides: overrides } : {}) },
          channelIds,
          ctx.now,
        );
        await events.users('USER_GUILD_SETTINGS_UPDATE', [ctx.user.id], view);
        return view;
      },
    }),
  ];
}
