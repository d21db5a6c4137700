import type { Channel, Guild, Member, Role } from '../../api/chat-types.ts';

/** The bits the chat view needs (docs/chat.md "Permissions"; the server stays the judge). */
export const P = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  MANAGE_MESSAGES: 1n << 13n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  CONNECT: 1n << 20n,
  MUTE_MEMBERS: 1n << 22n,
  DEAFEN_MEMBERS: 1n << 23n,
  MOVE_MEMBERS: 1n << 24n,
  USE_VAD: 1n << 25n,
  MANAGE_ROLES: 1n << 28n,
  PIN_MESSAGES: 1n << 51n,
} as const;

const ALL = (1n << 64n) - 1n;

/** The viewer's permissions in a guild channel, as the server computes them (owner, admin, overwrites). */
export function channelPermissions(
  guild: Guild,
  roles: Map<string, Role>,
  member: Member | undefined,
  userId: string,
  channel: Channel | undefined,
): bigint {
  if (guild.owner_id === userId) return ALL;
  if (!member) return 0n;
  let base = BigInt(roles.get(guild.id)?.permissions ?? '0');
  for (const roleId of member.roles) base |= BigInt(roles.get(roleId)?.permissions ?? '0');
  if (base & P.ADMINISTRATOR) return ALL;
  if (!channel) return base;
  let perms = base;
  const overwrites = channel.permission_overwrites ?? [];
  const everyone = overwrites.find((o) => o.id === guild.id);
  if (everyone) perms = (perms & ~BigInt(everyone.deny)) | BigInt(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites) {
    if (o.type === 0 && member.roles.includes(o.id)) {
      allow |= BigInt(o.allow);
      deny |= BigInt(o.deny);
    }
  }
  perms = (perms & ~deny) | allow;
  const own = overwrites.find((o) => o.type === 1 && o.id === userId);
  if (own) perms = (perms & ~BigInt(own.deny)) | BigInt(own.allow);
  if (!(perms & P.VIEW_CHANNEL)) return 0n;
  return perms;
}

export function has(perms: bigint, bit: bigint): boolean {
  return (perms & bit) === bit;
}
