import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, type RequestContext, route } from '../../http/route.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { type GuildContext, pathId } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import type { ChatEvents } from './events.ts';
import { requireManageExpression } from './expression-permissions.ts';
import { auditReason } from './guild-audit.ts';

/** What the parts emojis and stickers share need to know of one kind of guild expression. */
export interface ExpressionKind<Row extends { id: string; user_id: string | null }> {
  /** The route of one item (`/guilds/:guildId/emojis/:emojiId`) and the name of its id parameter. */
  itemPath: string;
  idParam: string;
  /** The rate-limit name of the kind's routes (`guilds:emojis`). */
  rateLimit: string;
  unknown: 'UNKNOWN_EMOJI' | 'UNKNOWN_STICKER';
  /** The item of the guild (store functions). */
  find(db: Queryable, guildId: string, id: string): Promise<Row | undefined>;
  /** Deletes the row; false when it was already gone. */
  remove(db: Queryable, id: string): Promise<boolean>;
  objectKey(id: string): string;
  /** Tells the guild its whole new list (GUILD_EMOJIS_UPDATE, GUILD_STICKERS_UPDATE). */
  announce(db: Queryable, events: ChatEvents, guildId: string): Promise<void>;
  /** Records the deletion in the guild's audit log (EMOJI_DELETE, STICKER_DELETE). */
  auditDelete(guild: GuildContext, row: Row, reason: string | null): Promise<void>;
}

/**
 * The route shape emojis and stickers share: find an item of the guild, check that the caller may change
 * it, store its object alongside its row, tell the guild the new list after a change, and the DELETE route.
 */
export function expressionParts<Row extends { id: string; user_id: string | null }>(
  deps: ChatDeps,
  kind: ExpressionKind<Row>,
) {
  const { services, access, events } = deps;
  const { db, objects } = services;

  async function requireItem(guildId: string, rawId: string | undefined): Promise<Row> {
    const row = await kind.find(db, guildId, pathId(rawId, kind.unknown));
    if (!row) throw new ApiError(kind.unknown);
    return row;
  }

  /** The guild and the item the path names, once the caller may change it (their own, or anyone's). */
  async function changeable(ctx: RequestContext<unknown, unknown>): Promise<{ guild: GuildContext; row: Row }> {
    const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
    const row = await requireItem(guild.guildId, ctx.params[kind.idParam]);
    requireManageExpression(guild, row.user_id);
    return { guild, row };
  }

  /** After a change: drop cached guild payloads and tell the guild the whole new list. */
  async function announce(guildId: string): Promise<void> {
    await events.invalidate({ guildId });
    await kind.announce(db, events, guildId);
  }

  /**
   * Stores the object, then runs `insert` while holding the guild row, so two uploads cannot both take the
   * last free slot. A refused insert removes the stored object again.
   */
  async function insertWithObject(
    guildId: string,
    id: string,
    file: { bytes: Buffer; contentType: string } | { stagedKey: string; contentType: string },
    insert: (tx: Queryable) => Promise<Row>,
  ): Promise<Row> {
    const key = kind.objectKey(id);
    // A streamed upload kept as sent is moved from staging (a rename on disk, a server-side copy on S3).
    if ('stagedKey' in file) await objects.move(file.stagedKey, key, file.contentType);
    else await objects.put(key, file.bytes, file.contentType);
    try {
      return await db.transaction(async (tx) => {
        await tx.query('SELECT id FROM guilds WHERE id = $1 FOR UPDATE', [guildId]);
        return insert(tx);
      });
    } catch (error) {
      await objects.delete(key).catch(() => {});
      throw error;
    }
  }

  const deleteRoute: AnyRoute = route({
    method: 'DELETE',
    path: kind.itemPath,
    policy: 'user',
    rateLimit: limits.write(kind.rateLimit),
    async handler(ctx) {
      const { guild, row } = await changeable(ctx);
      if (!(await kind.remove(db, row.id))) throw new ApiError(kind.unknown);
      await objects.delete(kind.objectKey(row.id));
      await kind.auditDelete(guild, row, auditReason(ctx.request.headers));
      await announce(guild.guildId);
      return undefined;
    },
  });

  return { requireItem, changeable, announce, insertWithObject, deleteRoute };
}
