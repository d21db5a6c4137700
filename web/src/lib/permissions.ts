/**
 * Guild permission bits (the server's src/domains/chat/permissions.ts), in display order. Names shown to people
 * come from the locale files (`permissions.<NAME>`); part 2's role editor reuses this list.
 */
export const PERMISSION_BITS = {
  ADMINISTRATOR: 3n,
  VIEW_AUDIT_LOG: 7n,
  MANAGE_GUILD: 5n,
  MANAGE_ROLES: 28n,
  MANAGE_CHANNELS: 4n,
  KICK_MEMBERS: 1n,
  BAN_MEMBERS: 2n,
  MODERATE_MEMBERS: 40n,
  CREATE_INSTANT_INVITE: 0n,
  CHANGE_NICKNAME: 26n,
  MANAGE_NICKNAMES: 27n,
  MANAGE_EXPRESSIONS: 30n,
  CREATE_EXPRESSIONS: 43n,
  MANAGE_WEBHOOKS: 29n,
  VIEW_CHANNEL: 10n,
  SEND_MESSAGES: 11n,
  SEND_TTS_MESSAGES: 12n,
  MANAGE_MESSAGES: 13n,
  PIN_MESSAGES: 51n,
  BYPASS_SLOWMODE: 52n,
  CREATE_PUBLIC_THREADS: 35n,
  CREATE_PRIVATE_THREADS: 36n,
  SEND_MESSAGES_IN_THREADS: 38n,
  MANAGE_THREADS: 34n,
  EMBED_LINKS: 14n,
  ATTACH_FILES: 15n,
  READ_MESSAGE_HISTORY: 16n,
  MENTION_EVERYONE: 17n,
  USE_EXTERNAL_EMOJIS: 18n,
  USE_EXTERNAL_STICKERS: 37n,
  ADD_REACTIONS: 6n,
  CONNECT: 20n,
  SPEAK: 21n,
  STREAM: 9n,
  PRIORITY_SPEAKER: 8n,
  MUTE_MEMBERS: 22n,
  DEAFEN_MEMBERS: 23n,
  MOVE_MEMBERS: 24n,
  USE_VAD: 25n,
  UPDATE_RTC_REGION: 53n,
} as const;

export type PermissionName = keyof typeof PERMISSION_BITS;

/** The named permissions a decimal bitfield holds (unknown or malformed input: none). */
export function permissionNames(bitfield: string | null | undefined): PermissionName[] {
  if (!bitfield || !/^\d{1,20}$/.test(bitfield)) return [];
  const value = BigInt(bitfield);
  return (Object.entries(PERMISSION_BITS) as [PermissionName, bigint][])
    .filter(([, bit]) => (value & (1n << bit)) !== 0n)
    .map(([name]) => name);
}

export function hasPermission(bitfield: string, name: PermissionName): boolean {
  return /^\d+$/.test(bitfield) && (BigInt(bitfield) & (1n << PERMISSION_BITS[name])) !== 0n;
}
