import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type ChannelAccess, pathId } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { AUDIT_LOG_EVENTS, auditReason } from './guild-audit.ts';
import { has, PERMISSIONS } from './permissions.ts';
import { iso, MESSAGE_COLUMNS, type MessageRow } from './rows.ts';

/** Pinned messages per channel (Discord's limit). */
export const MAX_PINS = 50;

const pinsQuery = z.object({
  before: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(50).default(50),
});

export function pinRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, access, events, messages, audit } = deps;
  const { db } = services;

  /** MESSAGE_PIN / MESSAGE_UNPIN in a guild: the target is the message's author (Discord's way). */
  async function auditPin(
    action: number,
    channelAccess: ChannelAccess,
    message: MessageRow,
    ctx: { user: { id: string }; request: { headers: Record<string, string | string[] | undefined> } },
  ): Promise<void> {
    const guildId = channelAccess.channel.guild_id;
    if (guildId === null) return;
    await audit.record({
      guildId,
      action,
      userId: ctx.user.id,
      targetId: message.author_id ?? message.webhook_id,
      options: { channel_id: channelAccess.channel.id, message_id: message.id },
      reason: auditReason(ctx.request.headers),
    });
  }

  /** Keeps `last_pin_timestamp` in step with the pins and tells the channel. */
  async function pinsChanged(channelAccess: ChannelAccess): Promise<void> {
    const [row] = await db.query<{ last_pin_timestamp: Date | null }>(
      `UPDATE channels SET last_pin_timestamp =
         (SELECT max(pinned_at) FROM messages WHERE channel_id = $1 AND pinned_at IS NOT NULL)
        WHERE id = $1 RETURNING last_pin_timestamp`,
      [channelAccess.channel.id],
    );
    await events.channel('CHANNEL_PINS_UPDATE', channelAccess, { last_pin_timestamp: iso(row?.last_pin_timestamp) });
  }

  async function pinnable(ctx: { params: Record<string, string>; user: { id: string }; now: number }) {
    const channelAccess = await access.channelOf(ctx, PERMISSIONS.PIN_MESSAGES);
    const message = await messages.require(channelAccess.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
    // A blocked pair cannot pin (or unpin) in their 1:1 DM, as they cannot message there.
    await access.refuseBlockedDm(channelAccess, ctx.user.id);
    return { channelAccess, message };
  }

  async function pinned(channelId: string, before: string | undefined, limit: number) {
    return db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages msg
        WHERE msg.channel_id = $1 AND msg.pinned_at IS NOT NULL AND ($2::timestamptz IS NULL OR msg.pinned_at < $2::timestamptz)
        ORDER BY msg.pinned_at DESC, msg.id DESC LIMIT $3`,
      [channelId, before ?? null, limit],
    );
  }

  return [
    ...['/channels/:channelId/pins/:messageId', '/channels/:channelId/messages/pins/:messageId'].flatMap((path) => [
      route({
        method: 'PUT',
        path,
        policy: 'user',
        rateLimit: limits.write('channels:pins'),
        async handler(ctx) {
          const { channelAccess, message } = await pinnable(ctx);
          if (message.pinned_at !== null) return undefined;
          const [count] = await db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM messages WHERE channel_id = $1 AND pinned_at IS NOT NULL',
            [channelAccess.channel.id],
          );
          if ((count?.n ?? 0) >= MAX_PINS) throw new ApiError('MAX_PINS');
          const pinnedNow = await db.query(
            'UPDATE messages SET pinned_at = $2 WHERE id = $1 AND pinned_at IS NULL RETURNING id',
            [message.id, new Date(ctx.now)],
          );
          if (pinnedNow.length > 0) await auditPin(AUDIT_LOG_EVENTS.MESSAGE_PIN, channelAccess, message, ctx);
          await pinsChanged(channelAccess);
          return undefined;
        },
      }),

      route({
        method: 'DELETE',
        path,
        policy: 'user',
        rateLimit: limits.write('channels:pins'),
        async handler(ctx) {
          const { channelAccess, message } = await pinnable(ctx);
          if (message.pinned_at === null) return undefined;
          const unpinned = await db.query(
            'UPDATE messages SET pinned_at = NULL WHERE id = $1 AND pinned_at IS NOT NULL RETURNING id',
            [message.id],
          );
          if (unpinned.length > 0) await auditPin(AUDIT_LOG_EVENTS.MESSAGE_UNPIN, channelAccess, message, ctx);
          await pinsChanged(channelAccess);
          return undefined;
        },
      }),
    ]),

    route({
      method: 'GET',
      path: '/channels/:channelId/messages/pins',
      policy: 'user',
      rateLimit: limits.read('channels:pins'),
      query: pinsQuery,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        // Without READ_MESSAGE_HISTORY the pins are there but not for this reader: an empty page, not a refusal.
        if (!has(channelAccess.permissions, PERMISSIONS.READ_MESSAGE_HISTORY)) return { items: [], has_more: false };
        const rows = await pinned(channelAccess.channel.id, ctx.query.before, ctx.query.limit + 1);
        const page = rows.slice(0, ctx.query.limit);
        const views = await messages.render(page, ctx.user.id);
        return {
          items: views.map((message, index) => ({ message, pinned_at: iso(page[index]?.pinned_at) })),
          has_more: rows.length > ctx.query.limit,
        };
      },
    }),

    // The older listing discord.js 14 still calls: the pinned messages as a plain array.
    route({
      method: 'GET',
      path: '/channels/:channelId/pins',
      policy: 'user',
      rateLimit: limits.read('channels:pins'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        if (!has(channelAccess.permissions, PERMISSIONS.READ_MESSAGE_HISTORY)) return [];
        return messages.render(await pinned(channelAccess.channel.id, undefined, MAX_PINS), ctx.user.id);
      },
    }),
  ];
}
