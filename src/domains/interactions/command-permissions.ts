import { z } from 'zod';
import { has, PERMISSIONS } from '../chat/permissions.ts';
import type { CommandRow } from './commands.ts';

/** One override of a command's guild permissions: a role (1), user (2) or channel (3) allowed or denied. */
export const commandPermissionSchema = z
  .object({
    id: z.string().regex(/^\d{1,20}$/),
    type: z.union([z.literal(1), z.literal(2), z.literal(3)]),
    permission: z.boolean(),
  })
  .strict();
export type CommandPermission = z.infer<typeof commandPermissionSchema>;

/**
 * discord-api-types' APIGuildApplicationCommandPermissions: a command's (or, under the application's own id, the
 * application-wide default's) overrides in one guild, as the permissions routes and
 * APPLICATION_COMMAND_PERMISSIONS_UPDATE show them.
 */
export type CommandPermissionsView = {
  id: string;
  application_id: string;
  guild_id: string;
  permissions: CommandPermission[];
};

export function commandPermissionsView(
  applicationId: string,
  guildId: string,
  commandId: string,
  permissions: CommandPermission[],
): CommandPermissionsView {
  return { id: commandId, application_id: applicationId, guild_id: guildId, permissions };
}

/** Who asks to use a command in a guild: the inputs of Discord's command permission rules. */
export interface CommandUser {
  userId: string;
  guildId: string;
  roleIds: readonly string[];
  /** The channel the command would run in; null for the guild-wide view (channel entries then do not apply). */
  channelId: string | null;
  /** The member's guild-level permissions (not the channel's). */
  permissions: bigint;
  isOwner: boolean;
}

/**
 * The overrides that govern a command: its own list when it has one, else the application-wide default
 * (stored under the application's id), else none.
 */
export function governingOverrides(
  command: Pick<CommandRow, 'id' | 'application_id'>,
  lists: ReadonlyMap<string, readonly CommandPermission[]>,
): readonly CommandPermission[] {
  return lists.get(command.id) ?? lists.get(command.application_id) ?? [];
}

/**
 * Whether a person may use a guild command (docs/bots.md): a user entry decides alone; else role entries
 * (the guild id is @everyone) allow when one of them allows; else a channel entry may deny; else
 * `default_member_permissions` must be held (the owner and administrators pass). Invocation and the command
 * index both ask this.
 */
export function mayUseGuildCommand(
  command: Pick<CommandRow, 'body'>,
  overrides: readonly CommandPermission[],
  user: CommandUser,
): boolean {
  const entry = (id: string) => overrides.find((o) => o.id === id);
  const forUser = entry(user.userId);
  if (forUser) return forUser.permission !== false;
  const roleEntries = [user.guildId, ...user.roleIds].map(entry).filter((e) => e !== undefined);
  if (roleEntries.length > 0) return roleEntries.some((e) => e.permission === true);
  if (user.channelId !== null && entry(user.channelId)?.permission === false) return false;
  const required = command.body.default_member_permissions;
  if (typeof required === 'string' && !user.isOwner) {
    const bits = BigInt(required);
    if (!has(user.permissions, PERMISSIONS.ADMINISTRATOR) && (user.permissions & bits) !== bits) return false;
  }
  return true;
}

/** A global command in a DM: `dm_permission: false` keeps it out. */
export function mayUseDmCommand(command: Pick<CommandRow, 'body'>): boolean {
  return command.body.dm_permission !== false;
}
