import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import type { ChannelAccess } from './access.ts';
import { pathId } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { has, PERMISSIONS } from './permissions.ts';
import { iso, MESSAGE_COLUMNS, type MessageRow } from './rows.ts';
import type { MessageView } from './views.ts';

/** Saved messages per user. */
export const MAX_SAVED_MESSAGES = 1000;

const saveBody = z.object({
  notes: z.string().max(1000).nullish(),
  due_at: z.iso.datetime({ offset: true }).nullish(),
});

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  /** Saves older than this time (ISO 8601), for paging. */
  before: z.iso.datetime({ offset: true }).optional(),
});

interface SavedRow {
  message_id: string;
  channel_id: string;
  guild_id: string | null;
  saved_at: Date;
  notes: string | null;
  due_at: Date | null;
}

type SaveData = {
  channel_id: string;
  message_id: string;
  guild_id?: string;
  saved_at: string | null;
  notes: string | null;
  due_at: string | null;
};

/** A saved message as its routes and SAVED_MESSAGE_CREATE show it; `message` only while the saver can read it. */
export type SavedMessageView = { save_data: SaveData; message?: MessageView & { guild_id?: string } };

function saveData(row: SavedRow): SaveData {
  return {
    channel_id: row.channel_id,
    message_id: row.message_id,
    ...(row.guild_id ? { guild_id: row.guild_id } : {}),
    saved_at: iso(row.saved_at),
    notes: row.notes,
    due_at: iso(row.due_at),
  };
}

/**
 * Saved messages ("save for later"): `{save_data: {channel_id, message_id, guild_id?, saved_at, notes, due_at},
 * message?}` per save; `message` is left out while the saver cannot read the channel.
 */
export function savedMessageRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, access, events, messages } = deps;
  const { db } = services;

  /** The channel as the caller may read it (view + history), or null. */
  async function readable(channelId: string, userId: string, now: number): Promise<ChannelAccess | null> {
    try {
      const channelAccess = await access.channel(channelId, userId, now);
      return has(channelAccess.permissions, PERMISSIONS.READ_MESSAGE_HISTORY) ? channelAccess : null;
    } catch (error) {
      if (error instanceof ApiError) return null;
      throw error;
    }
  }

  async function withMessages(rows: SavedRow[], userId: string, now: number): Promise<SavedMessageView[]> {
    if (rows.length === 0) return [];
    const channels = [...new Set(rows.map((r) => r.channel_id))];
    const allowed = new Set(
      (await Promise.all(channels.map(async (id) => ((await readable(id, userId, now)) ? id : null)))).filter(
        (id): id is string => id !== null,
      ),
    );
    const visibleIds = rows.filter((r) => allowed.has(r.channel_id)).map((r) => r.message_id);
    const found = visibleIds.length
      ? await db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages msg WHERE msg.id = ANY($1::bigint[])`, [
          visibleIds,
        ])
      : [];
    const views = await messages.render(found, userId);
    const byId = new Map(views.map((view) => [view.id as string, view]));
    return rows.map((row) => {
      const message = byId.get(row.message_id);
      return {
        save_data: saveData(row),
        ...(message ? { message: row.guild_id ? { ...message, guild_id: row.guild_id } : message } : {}),
      };
    });
  }

  return [
    route({
      method: 'GET',
      path: '/users/@me/saved-messages',
      policy: 'user-only',
      rateLimit: limits.read('users:saved-messages'),
      query: listQuery,
      async handler(ctx) {
        const rows = await db.query<SavedRow>(
          `SELECT message_id::text, channel_id::text, guild_id::text, saved_at, notes, due_at FROM saved_messages
            WHERE user_id = $1 AND ($2::timestamptz IS NULL OR saved_at < $2::timestamptz)
            ORDER BY saved_at DESC, message_id DESC LIMIT $3`,
          [ctx.user.id, ctx.query.before ?? null, ctx.query.limit],
        );
        return { results: await withMessages(rows, ctx.user.id, ctx.now) };
      },
    }),

    route({
      method: 'PUT',
      path: '/users/@me/saved-messages/:channelId/:messageId',
      policy: 'user-only',
      rateLimit: limits.write('users:saved-messages'),
      body: saveBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        const message = await messages.require(
          channelAccess.channel.id,
          pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'),
        );
        // Insert (under the cap) or update in one statement; a re-save keeps its time, changes notes and due_at.
        const [row] = await db.query<SavedRow>(
          `INSERT INTO saved_messages (user_id, message_id, channel_id, guild_id, saved_at, notes, due_at)
           SELECT $1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::timestamptz, $6::text, $7::timestamptz
            WHERE EXISTS (SELECT 1 FROM saved_messages WHERE user_id = $1 AND message_id = $2)
               OR (SELECT count(*) FROM saved_messages WHERE user_id = $1) < $8::int
           ON CONFLICT (user_id, message_id) DO UPDATE SET notes = EXCLUDED.notes, due_at = EXCLUDED.due_at
           RETURNING message_id::text, channel_id::text, guild_id::text, saved_at, notes, due_at`,
          [
            ctx.user.id,
            message.id,
            message.channel_id,
            channelAccess.channel.guild_id,
            new Date(ctx.now),
            ctx.body.notes ?? null,
            ctx.body.due_at ? new Date(ctx.body.due_at) : null,
            MAX_SAVED_MESSAGES,
          ],
        );
        if (!row) throw new ApiError('MAX_SAVED_MESSAGES');
        const [saved] = await withMessages([row], ctx.user.id, ctx.now);
        if (saved) await events.users('SAVED_MESSAGE_CREATE', [ctx.user.id], saved);
        return saved;
      },
    }),

    route({
      method: 'DELETE',
      path: '/users/@me/saved-messages/:channelId/:messageId',
      policy: 'user-only',
      rateLimit: limits.write('users:saved-messages'),
      async handler(ctx) {
        // Unsaving needs no access to the channel any more (a save outlives the saver's access); idempotent.
        const channelId = pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL');
        const messageId = pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE');
        const removed = await db.query(
          'DELETE FROM saved_messages WHERE user_id = $1 AND message_id = $2 AND channel_id = $3 RETURNING 1',
          [ctx.user.id, messageId, channelId],
        );
        if (removed.length > 0)
          await events.users('SAVED_MESSAGE_DELETE', [ctx.user.id], { channel_id: channelId, message_id: messageId });
        return undefined;
      },
    }),
  ];
}
