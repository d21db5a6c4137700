import { PERMISSION_BITS, type PermissionName } from '../../../lib/permissions.ts';

export type SectionId =
  | 'overview'
  | 'roles'
  | 'channels'
  | 'emojis'
  | 'invites'
  | 'webhooks'
  | 'bots'
  | 'members'
  | 'bans'
  | 'audit'
  | 'profile';

/** Which permission (any of) opens each section of the server settings; the server stays the judge. */
export const SECTIONS: [SectionId, PermissionName[]][] = [
  ['overview', ['MANAGE_GUILD']],
  ['roles', ['MANAGE_ROLES']],
  ['channels', ['MANAGE_CHANNELS']],
  ['emojis', ['CREATE_EXPRESSIONS', 'MANAGE_EXPRESSIONS']],
  ['invites', ['MANAGE_GUILD']],
  ['webhooks', ['MANAGE_WEBHOOKS']],
  ['bots', ['MANAGE_GUILD']],
  ['members', ['MANAGE_ROLES', 'MANAGE_NICKNAMES', 'MODERATE_MEMBERS', 'KICK_MEMBERS', 'BAN_MEMBERS']],
  ['bans', ['BAN_MEMBERS']],
  ['audit', ['VIEW_AUDIT_LOG']],
  // One's own server profile: every member (no permission listed = open to all).
  ['profile', []],
];

/** The sections the viewer's guild-level permissions open (the own profile always: the settings link shows for all). */
export function allowedSections(perms: bigint): SectionId[] {
  return SECTIONS.filter(
    ([, needs]) => needs.length === 0 || needs.some((name) => (perms & (1n << PERMISSION_BITS[name])) !== 0n),
  ).map(([id]) => id);
}
