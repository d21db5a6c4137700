import type { ChannelAccess, GuildContext } from '../chat/access.ts';
import { governingOverrides, mayUseDmCommand, mayUseGuildCommand } from './command-permissions.ts';
import { type CommandRow, type CommandView, commandView } from './commands.ts';
import type { IndexedApplication, InteractionsStore } from './store.ts';

/** Discord's application command index: the applications and the commands a person may use there. */
export interface CommandIndex {
  applications: { id: string; name: string; icon: string | null; description: string; bot_id: string }[];
  application_commands: CommandView[];
  version: string;
}

function build(apps: IndexedApplication[], commands: CommandRow[]): CommandIndex {
  const used = new Set(commands.map((c) => c.application_id));
  // The index's version is the newest version among its commands (a snowflake, as Discord's).
  let version = 0n;
  for (const c of commands) if (BigInt(c.version) > version) version = BigInt(c.version);
  return {
    applications: apps
      .filter((a) => used.has(a.id))
      .map((a) => ({ id: a.id, name: a.name, icon: a.icon, description: a.description ?? '', bot_id: a.bot_user_id })),
    application_commands: commands.map(commandView),
    version: String(version),
  };
}

/**
 * The commands a member may use in a guild, or in one of its channels when `channelId` is given (the
 * channel's entries in the overrides then apply too): the applications whose bot is a member, filtered by
 * the same rule invocation applies.
 */
export async function guildCommandIndex(
  store: InteractionsStore,
  guild: GuildContext,
  channelId: string | null,
): Promise<CommandIndex> {
  const apps = await store.installedInGuild(guild.guildId);
  if (apps.length === 0) return build([], []);
  const ids = apps.map((a) => a.id);
  const [commands, lists] = await Promise.all([
    store.commandsIn(ids, guild.guildId),
    store.permissionLists(ids, guild.guildId),
  ]);
  const user = {
    userId: guild.userId,
    guildId: guild.guildId,
    roleIds: guild.member.roles,
    channelId,
    permissions: guild.permissions,
    isOwner: guild.isOwner,
  };
  return build(
    apps,
    commands.filter((c) => mayUseGuildCommand(c, governingOverrides(c, lists), user)),
  );
}

/** The commands usable in a DM or group DM: the global commands of the recipients' bots, `dm_permission` kept. */
export async function dmCommandIndex(store: InteractionsStore, access: ChannelAccess): Promise<CommandIndex> {
  const apps = await store.withBots(access.recipients ?? []);
  if (apps.length === 0) return build([], []);
  const commands = await store.commandsIn(
    apps.map((a) => a.id),
    null,
  );
  return build(apps, commands.filter(mayUseDmCommand));
}
