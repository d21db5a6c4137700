import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';

/** A row of `guild_emojis` (migration 0120). */
export interface EmojiRow {
  id: string;
  guild_id: string;
  name: string;
  /** Role ids allowed to use the emoji; empty = everyone. */
  roles: string[];
  user_id: string | null;
  animated: boolean;
  available: boolean;
}

/** Discord's level-0 limits: 50 static and 50 animated emojis per guild. */
export const MAX_STATIC_EMOJIS = 50;
export const MAX_ANIMATED_EMOJIS = 50;
/** Discord's cap on an emoji image. */
export const MAX_EMOJI_BYTES = 256 * 1024;
/** Larger pictures are shrunk to fit this square at upload (Discord's emoji size). */
export const EMOJI_BOX = 128;

export const EMOJI_COLUMNS =
  'e.id::text AS id, e.guild_id::text AS guild_id, e.name, e.roles::text[] AS roles, e.user_id::text AS user_id, ' +
  'e.animated, e.available';

/** Object-store key of an emoji's image. */
export function emojiObjectKey(emojiId: string): string {
  return `emojis/${emojiId}`;
}

export function guildEmojis(db: Queryable, guildId: string): Promise<EmojiRow[]> {
  return db.query<EmojiRow>(`SELECT ${EMOJI_COLUMNS} FROM guild_emojis e WHERE e.guild_id = $1 ORDER BY e.id`, [
    guildId,
  ]);
}

/** The emoji `emojiId` of the guild, if it is one of its. */
export async function guildEmoji(db: Queryable, guildId: string, emojiId: string): Promise<EmojiRow | undefined> {
  const [row] = await db.query<EmojiRow>(
    `SELECT ${EMOJI_COLUMNS} FROM guild_emojis e WHERE e.id = $1 AND e.guild_id = $2`,
    [emojiId, guildId],
  );
  return row;
}

/** Deletes the emoji's row; false when it was already gone. */
export async function deleteEmoji(db: Queryable, emojiId: string): Promise<boolean> {
  const removed = await db.query('DELETE FROM guild_emojis WHERE id = $1 RETURNING id', [emojiId]);
  return removed.length > 0;
}

export async function emojiById(db: Queryable, emojiId: string): Promise<EmojiRow | undefined> {
  const [row] = await db.query<EmojiRow>(`SELECT ${EMOJI_COLUMNS} FROM guild_emojis e WHERE e.id = $1`, [emojiId]);
  return row;
}

/**
 * Discord's emoji object. `user` (the uploader) only when given: REST answers to callers who manage
 * expressions carry it, gateway payloads do not.
 */
/** A guild emoji (`emojiView`); `user` only where the caller may see uploaders (REST). */
export type EmojiView = {
  id: string;
  name: string;
  roles: string[];
  require_colons: true;
  managed: false;
  animated: boolean;
  available: boolean;
  user?: PartialUser;
};

export function emojiView(row: EmojiRow, user?: UserRecord | null): EmojiView {
  const view: EmojiView = {
    id: row.id,
    name: row.name,
    roles: row.roles,
    require_colons: true,
    managed: false,
    animated: row.animated,
    available: row.available,
  };
  if (user) view.user = partialUser(user);
  return view;
}
