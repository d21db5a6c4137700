import { has, PERMISSIONS } from '../chat/permissions.ts';
import type { CommandRow } from './commands.ts';

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

type Override = { id?: unknown; permission?: unknown };

/**
 * The overrides that govern a command: its own list when it has one, else the application-wide default
 * (stored under the application's id), else none.
 */
export function governingOverrides(
  command: Pick<CommandRow, 'id' | 'application_id'>,
  lists: ReadonlyMap<string, readonly Record<string, unknown>[]>,
): readonly Record<string, unknown>[] {
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
  overrides: readonly Record<string, unknown>[],
  user: CommandUser,
): boolean {
  const entry = (id: string) => (overrides as readonly Override[]).find((o) => o.id === id);
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
