/**
 * Permission bits and Discord's permission computation (docs/chat.md). Pure: no I/O, so the REST layer,
 * the gateway read model and the unit tests all run the same code.
 */
export const PERMISSIONS = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  KICK_MEMBERS: 1n << 1n,
  BAN_MEMBERS: 1n << 2n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_AUDIT_LOG: 1n << 7n,
  PRIORITY_SPEAKER: 1n << 8n,
  STREAM: 1n << 9n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  SEND_TTS_MESSAGES: 1n << 12n,
  MANAGE_MESSAGES: 1n << 13n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  USE_EXTERNAL_EMOJIS: 1n << 18n,
  CONNECT: 1n << 20n,
  SPEAK: 1n << 21n,
  MUTE_MEMBERS: 1n << 22n,
  DEAFEN_MEMBERS: 1n << 23n,
  MOVE_MEMBERS: 1n << 24n,
  USE_VAD: 1n << 25n,
  CHANGE_NICKNAME: 1n << 26n,
  MANAGE_NICKNAMES: 1n << 27n,
  MANAGE_ROLES: 1n << 28n,
  MANAGE_WEBHOOKS: 1n << 29n,
  MANAGE_EXPRESSIONS: 1n << 30n,
  MANAGE_THREADS: 1n << 34n,
  CREATE_PUBLIC_THREADS: 1n << 35n,
  CREATE_PRIVATE_THREADS: 1n << 36n,
  USE_EXTERNAL_STICKERS: 1n << 37n,
  SEND_MESSAGES_IN_THREADS: 1n << 38n,
  MODERATE_MEMBERS: 1n << 40n,
  CREATE_EXPRESSIONS: 1n << 43n,
  PIN_MESSAGES: 1n << 51n,
  BYPASS_SLOWMODE: 1n << 52n,
  UPDATE_RTC_REGION: 1n << 53n,
} as const;

/** Every bit Hearth knows; anything else in input is dropped. */
export const ALL_PERMISSIONS: bigint = Object.values(PERMISSIONS).reduce((a, b) => a | b, 0n);

/** What `@everyone` holds in a new guild. */
export const DEFAULT_EVERYONE_PERMISSIONS: bigint = [
  PERMISSIONS.CREATE_INSTANT_INVITE,
  PERMISSIONS.ADD_REACTIONS,
  PERMISSIONS.STREAM,
  PERMISSIONS.VIEW_CHANNEL,
  PERMISSIONS.SEND_MESSAGES,
  PERMISSIONS.EMBED_LINKS,
  PERMISSIONS.ATTACH_FILES,
  PERMISSIONS.READ_MESSAGE_HISTORY,
  PERMISSIONS.USE_EXTERNAL_EMOJIS,
  PERMISSIONS.CONNECT,
  PERMISSIONS.SPEAK,
  PERMISSIONS.USE_VAD,
  PERMISSIONS.CHANGE_NICKNAME,
  PERMISSIONS.USE_EXTERNAL_STICKERS,
  PERMISSIONS.CREATE_EXPRESSIONS,
  PERMISSIONS.CREATE_PUBLIC_THREADS,
  PERMISSIONS.CREATE_PRIVATE_THREADS,
  PERMISSIONS.SEND_MESSAGES_IN_THREADS,
].reduce((a, b) => a | b, 0n);

/** While timed out a member keeps only these (Discord's rule). */
const TIMEOUT_ALLOWED = PERMISSIONS.VIEW_CHANNEL | PERMISSIONS.READ_MESSAGE_HISTORY;

/** Bits that only make sense once a member can send messages in the channel. */
const SEND_DEPENDENT =
  PERMISSIONS.SEND_TTS_MESSAGES | PERMISSIONS.MENTION_EVERYONE | PERMISSIONS.ATTACH_FILES | PERMISSIONS.EMBED_LINKS;

export interface Overwrite {
  id: string;
  /** 0 role, 1 member */
  type: number;
  allow: bigint;
  deny: bigint;
}

export interface PermissionSubject {
  guildId: string;
  ownerId: string;
  userId: string;
  /** The member's role ids, without @everyone. */
  memberRoleIds: readonly string[];
  /** Every role of the guild by id, @everyone (id = guild id) included. */
  rolePermissions: ReadonlyMap<string, bigint>;
  /** When set and in the future, the member is timed out. */
  timedOutUntil?: number | null;
  now?: number;
}

export function parsePermissions(value: string | number | bigint | null | undefined): bigint {
  if (value === null || value === undefined || value === '') return 0n;
  try {
    return BigInt(value) & ALL_PERMISSIONS;
  } catch {
    return 0n;
  }
}

export function has(permissions: bigint, bit: bigint): boolean {
  return (permissions & bit) === bit;
}

/** Guild-level permissions: owner and ADMINISTRATOR hold everything; else @everyone OR the member's roles. */
export function computeBasePermissions(subject: PermissionSubject): bigint {
  if (subject.userId === subject.ownerId) return ALL_PERMISSIONS;
  let permissions = subject.rolePermissions.get(subject.guildId) ?? 0n;
  for (const roleId of subject.memberRoleIds) permissions |= subject.rolePermissions.get(roleId) ?? 0n;
  permissions &= ALL_PERMISSIONS;
  if (has(permissions, PERMISSIONS.ADMINISTRATOR)) return ALL_PERMISSIONS;
  return applyTimeout(permissions, subject);
}

/**
 * Channel permissions: base, then the @everyone overwrite, then the member's role overwrites together,
 * then the member overwrite. Without VIEW_CHANNEL nothing else applies; without SEND_MESSAGES the
 * sending extras go too.
 */
export function computeChannelPermissions(subject: PermissionSubject, overwrites: readonly Overwrite[]): bigint {
  if (subject.userId === subject.ownerId) return ALL_PERMISSIONS;
  const base = computeBasePermissions(subject);
  if (has(base, PERMISSIONS.ADMINISTRATOR)) return ALL_PERMISSIONS;
  let permissions = base;
  const everyone = overwrites.find((o) => o.id === subject.guildId && o.type === 0);
  if (everyone) permissions = (permissions & ~everyone.deny) | everyone.allow;
  let allow = 0n;
  let deny = 0n;
  const roleSet = new Set(subject.memberRoleIds);
  for (const overwrite of overwrites) {
    if (overwrite.type === 0 && overwrite.id !== subject.guildId && roleSet.has(overwrite.id)) {
      allow |= overwrite.allow;
      deny |= overwrite.deny;
    }
  }
  permissions = (permissions & ~deny) | allow;
  const member = overwrites.find((o) => o.type === 1 && o.id === subject.userId);
  if (member) permissions = (permissions & ~member.deny) | member.allow;
  permissions &= ALL_PERMISSIONS;
  permissions = applyTimeout(permissions, subject);
  if (!has(permissions, PERMISSIONS.VIEW_CHANNEL)) return 0n;
  if (!has(permissions, PERMISSIONS.SEND_MESSAGES)) permissions &= ~SEND_DEPENDENT;
  return permissions;
}

function applyTimeout(permissions: bigint, subject: PermissionSubject): bigint {
  const until = subject.timedOutUntil;
  if (until && until > (subject.now ?? Date.now())) return permissions & TIMEOUT_ALLOWED;
  return permissions;
}

/** Position of the member's highest role (@everyone = 0); the owner outranks everyone. */
export function topRolePosition(
  subject: Pick<PermissionSubject, 'userId' | 'ownerId' | 'memberRoleIds'>,
  positions: ReadonlyMap<string, number>,
): number {
  if (subject.userId === subject.ownerId) return Number.POSITIVE_INFINITY;
  let top = 0;
  for (const roleId of subject.memberRoleIds) top = Math.max(top, positions.get(roleId) ?? 0);
  return top;
}

/**
 * What a member may do in a thread, from their permissions in its parent channel (threads have no overwrites
 * of their own): sending is SEND_MESSAGES_IN_THREADS, not SEND_MESSAGES, and the sending extras follow it.
 */
export function threadPermissions(parentPermissions: bigint): bigint {
  if (!has(parentPermissions, PERMISSIONS.VIEW_CHANNEL)) return 0n;
  let permissions = parentPermissions & ~PERMISSIONS.SEND_MESSAGES;
  if (has(parentPermissions, PERMISSIONS.SEND_MESSAGES_IN_THREADS)) permissions |= PERMISSIONS.SEND_MESSAGES;
  else permissions &= ~SEND_DEPENDENT;
  return permissions;
}
