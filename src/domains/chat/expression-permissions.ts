import { ApiError } from '../../http/errors.ts';
import type { GuildContext } from './access.ts';
import { PERMISSIONS } from './permissions.ts';

/**
 * Who may change a guild's emojis and stickers (Discord's rule since 2023): CREATE_EXPRESSIONS creates and
 * changes one's own, MANAGE_EXPRESSIONS (Discord's MANAGE_GUILD_EXPRESSIONS) changes anyone's.
 */
export function requireCreateExpressions(guild: GuildContext): void {
  if (!guild.can(PERMISSIONS.MANAGE_EXPRESSIONS) && !guild.can(PERMISSIONS.CREATE_EXPRESSIONS))
    throw new ApiError('MISSING_PERMISSIONS');
}

export function requireManageExpression(guild: GuildContext, uploaderId: string | null): void {
  if (guild.can(PERMISSIONS.MANAGE_EXPRESSIONS)) return;
  if (guild.can(PERMISSIONS.CREATE_EXPRESSIONS) && uploaderId === guild.userId) return;
  throw new ApiError('MISSING_PERMISSIONS');
}

/** Who sees `user` (the uploader) on emojis and stickers: holders of either expression permission. */
export function seesUploaders(guild: GuildContext): boolean {
  return guild.can(PERMISSIONS.MANAGE_EXPRESSIONS) || guild.can(PERMISSIONS.CREATE_EXPRESSIONS);
}
