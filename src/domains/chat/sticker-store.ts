import { ApiError } from '../../http/errors.ts';
import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { type ChannelAccess, requireChannel } from './access.ts';
import { PERMISSIONS } from './permissions.ts';

/** A row of `guild_stickers` (migration 0121). */
export interface StickerRow {
  id: string;
  guild_id: string;
  name: string;
  description: string | null;
  tags: string;
  /** 1 PNG, 2 APNG, 4 GIF. */
  format_type: number;
  available: boolean;
  user_id: string | null;
}

export const STICKER_FORMAT = { PNG: 1, APNG: 2, LOTTIE: 3, GIF: 4 } as const;
/** Discord's level-0 allowance. */
export const MAX_GUILD_STICKERS = 5;
/** Discord's cap on a sticker file. */
export const MAX_STICKER_BYTES = 512 * 1024;
/** Larger pictures are shrunk to fit this square at upload (Discord's sticker size). */
export const STICKER_BOX = 320;
/** Stickers per message. */
export const MAX_MESSAGE_STICKERS = 3;

export const STICKER_COLUMNS =
  's.id::text AS id, s.guild_id::text AS guild_id, s.name, s.description, s.tags, s.format_type, s.available, ' +
  's.user_id::text AS user_id';

export function stickerObjectKey(stickerId: string): string {
  return `stickers/${stickerId}`;
}

export function guildStickers(db: Queryable, guildId: string): Promise<StickerRow[]> {
  return db.query<StickerRow>(`SELECT ${STICKER_COLUMNS} FROM guild_stickers s WHERE s.guild_id = $1 ORDER BY s.id`, [
    guildId,
  ]);
}

/** The sticker `stickerId` of the guild, if it is one of its. */
export async function guildSticker(db: Queryable, guildId: string, stickerId: string): Promise<StickerRow | undefined> {
  const [row] = await db.query<StickerRow>(
    `SELECT ${STICKER_COLUMNS} FROM guild_stickers s WHERE s.id = $1 AND s.guild_id = $2`,
    [stickerId, guildId],
  );
  return row;
}

/** Deletes the sticker's row; false when it was already gone. */
export async function deleteSticker(db: Queryable, stickerId: string): Promise<boolean> {
  const removed = await db.query('DELETE FROM guild_stickers WHERE id = $1 RETURNING id', [stickerId]);
  return removed.length > 0;
}

export function stickersByIds(db: Queryable, ids: readonly string[]): Promise<StickerRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.query<StickerRow>(`SELECT ${STICKER_COLUMNS} FROM guild_stickers s WHERE s.id = ANY($1::bigint[])`, [
    [...new Set(ids)],
  ]);
}

/** Discord's sticker object (type 2, guild). `user` only where the caller may see uploaders (REST). */
export type StickerView = {
  id: string;
  name: string;
  description: string | null;
  tags: string;
  type: 2;
  format_type: number;
  available: boolean;
  guild_id: string;
  user?: PartialUser;
};

/** A message's `sticker_items` entry. */
export type StickerItemView = { id: string; name: string; format_type: number };

export function stickerView(row: StickerRow, user?: UserRecord | null): StickerView {
  const view: StickerView = {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    type: 2,
    format_type: row.format_type,
    available: row.available,
    guild_id: row.guild_id,
  };
  if (user) view.user = partialUser(user);
  return view;
}

export function stickerItemView(row: StickerRow): StickerItemView {
  return { id: row.id, name: row.name, format_type: row.format_type };
}

/**
 * Checks a message's `sticker_ids` (Discord's rule): each must be an available sticker of the channel's guild,
 * or of another guild the sender is a member of with USE_EXTERNAL_STICKERS in the channel (DMs included).
 * Unknown, unavailable or out-of-reach stickers → 400 `INVALID_STICKER_SENT`. Returns the ids, deduplicated.
 */
export async function checkMessageStickers(
  db: Queryable,
  channelAccess: ChannelAccess,
  userId: string,
  ids: readonly string[],
): Promise<string[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const rows = await stickersByIds(db, wanted);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const external = new Set<string>();
  for (const id of wanted) {
    const sticker = byId.get(id);
    if (!sticker?.available) throw new ApiError('INVALID_STICKER_SENT');
    if (sticker.guild_id !== channelAccess.channel.guild_id) external.add(sticker.guild_id);
  }
  if (external.size > 0) {
    const member = await db.query<{ guild_id: string }>(
      'SELECT guild_id::text AS guild_id FROM members WHERE user_id = $1 AND guild_id = ANY($2::bigint[])',
      [userId, [...external]],
    );
    if (member.length !== external.size) throw new ApiError('INVALID_STICKER_SENT');
    requireChannel(channelAccess, PERMISSIONS.USE_EXTERNAL_STICKERS);
  }
  return wanted;
}
