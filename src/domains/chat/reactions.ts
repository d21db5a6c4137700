import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import { type ChannelAccess, pathId, requireChannel } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import { emojiById } from './emoji-store.ts';
import { has, PERMISSIONS } from './permissions.ts';
import type { MessageRow } from './rows.ts';
import { memberView } from './views.ts';

/** Distinct emojis per message. */
export const MAX_REACTIONS = 20;

export interface ParsedEmoji {
  key: string;
  id: string | null;
  name: string;
  animated: boolean;
}

const CUSTOM_EMOJI = /^(a:)?([A-Za-z0-9_~-]{1,32}):(\d{1,20})$/;

/** `{emoji}` in the path: URL-encoded unicode, or `name:id` (`a:name:id` animated) for a custom emoji. */
export function parseEmoji(raw: string | undefined): ParsedEmoji {
  const text = raw ?? '';
  const custom = CUSTOM_EMOJI.exec(text);
  if (custom) {
    if (!isSnowflake(custom[3] as string)) throw new ApiError('UNKNOWN_EMOJI');
    const id = BigInt(custom[3] as string).toString();
    return { key: id, id, name: custom[2] as string, animated: custom[1] !== undefined };
  }
  // Unicode emoji: short, no whitespace or control characters, and not plain ASCII text.
  if (text.length === 0 || text.length > 32 || /[\s\p{Cc}:]/u.test(text) || /^[\x20-\x7e]+$/.test(text))
    throw new ApiError('UNKNOWN_EMOJI');
  return { key: text, id: null, name: text, animated: false };
}

/** A reaction event's `emoji`: a custom emoji with its id and `animated`, a Unicode one with `id: null`. */
export type ReactionEmojiView = { id: string; name: string; animated: boolean } | { id: null; name: string };

function emojiView(emoji: ParsedEmoji): ReactionEmojiView {
  return emoji.id ? { id: emoji.id, name: emoji.name, animated: emoji.animated } : { id: null, name: emoji.name };
}

const usersQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  after: snowflake.optional(),
});

export function reactionRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, messages } = deps;
  const { db } = services;

  async function target(ctx: {
    params: Record<string, string>;
    user: { id: string };
    now: number;
  }): Promise<{ channelAccess: ChannelAccess; message: MessageRow }> {
    const channelAccess = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
    const message = await messages.require(channelAccess.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
    return { channelAccess, message };
  }

  /**
   * A custom emoji must exist and be one the caller may use: an emoji of the channel's guild (role-restricted
   * ones only with one of its roles), or of another guild the caller is a member of, with USE_EXTERNAL_EMOJIS
   * in the channel. The stored name and `animated` win over the path's.
   */
  async function usable(channelAccess: ChannelAccess, emoji: ParsedEmoji, userId: string): Promise<ParsedEmoji> {
    if (!emoji.id) return emoji;
    const row = await emojiById(db, emoji.id);
    if (!row?.available) throw new ApiError('UNKNOWN_EMOJI');
    let memberRoles: readonly string[];
    if (row.guild_id === channelAccess.channel.guild_id && channelAccess.guild) {
      memberRoles = channelAccess.guild.member.roles;
    } else {
      const member = await store.member(row.guild_id, userId);
      if (!member) throw new ApiError('UNKNOWN_EMOJI');
      requireChannel(channelAccess, PERMISSIONS.USE_EXTERNAL_EMOJIS);
      memberRoles = member.roles;
    }
    if (row.roles.length > 0 && !row.roles.some((roleId) => memberRoles.includes(roleId)))
      throw new ApiError('MISSING_PERMISSIONS');
    return { key: row.id, id: row.id, name: row.name, animated: row.animated };
  }

  async function removeFor(channelAccess: ChannelAccess, message: MessageRow, emoji: ParsedEmoji, userId: string) {
    const removed = await db.query(
      'DELETE FROM reactions WHERE message_id = $1 AND emoji_key = $2 AND user_id = $3 RETURNING user_id',
      [message.id, emoji.key, userId],
    );
    if (removed.length === 0) return;
    await events.channel('MESSAGE_REACTION_REMOVE', channelAccess, {
      user_id: userId,
      message_id: message.id,
      emoji: emojiView(emoji),
    });
  }

  return [
    route({
      method: 'PUT',
      path: '/channels/:channelId/messages/:messageId/reactions/:emoji/@me',
      policy: 'user',
      rateLimit: limits.reactions,
      async handler(ctx) {
        const { channelAccess, message } = await target(ctx);
        // A timed-out member cannot react, not even join a reaction (which needs only sight of the message).
        if (timedOut(channelAccess, ctx.now)) throw new ApiError('COMMUNICATION_DISABLED');
        const emoji = await usable(channelAccess, parseEmoji(ctx.params.emoji), ctx.user.id);
        const inserted = await db.transaction(async (tx) => {
          const [state] = await tx.query<{ exists: boolean; kinds: number }>(
            `SELECT bool_or(emoji_key = $2) AS exists, count(DISTINCT emoji_key)::int AS kinds
               FROM reactions WHERE message_id = $1`,
            [message.id, emoji.key],
          );
          if (!state?.exists) {
            // Adding a new emoji needs ADD_REACTIONS; joining an existing one only needs to read the message.
            requireChannel(channelAccess, PERMISSIONS.ADD_REACTIONS);
            if ((state?.kinds ?? 0) >= MAX_REACTIONS) throw new ApiError('MAX_REACTIONS');
          }
          const rows = await tx.query(
            `INSERT INTO reactions (message_id, emoji_key, user_id, emoji_id, emoji_name, animated, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING user_id`,
            [message.id, emoji.key, ctx.user.id, emoji.id, emoji.name, emoji.animated, new Date(ctx.now)],
          );
          return rows.length > 0;
        });
        if (inserted) {
          const member = channelAccess.guild?.member;
          const payload = {
            user_id: ctx.user.id,
            message_id: message.id,
            message_author_id: message.author_id,
            emoji: emojiView(emoji),
            ...(member ? { member: memberView(member, ctx.user) } : {}),
          };
          await events.channel('MESSAGE_REACTION_ADD', channelAccess, payload);
        }
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId/reactions/:emoji/@me',
      policy: 'user',
      rateLimit: limits.reactions,
      async handler(ctx) {
        const emoji = parseEmoji(ctx.params.emoji);
        const { channelAccess, message } = await target(ctx);
        await removeFor(channelAccess, message, emoji, ctx.user.id);
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId/reactions/:emoji/:userId',
      policy: 'user',
      rateLimit: limits.reactions,
      async handler(ctx) {
        const emoji = parseEmoji(ctx.params.emoji);
        const { channelAccess, message } = await target(ctx);
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        if (userId !== ctx.user.id) requireChannel(channelAccess, PERMISSIONS.MANAGE_MESSAGES);
        await removeFor(channelAccess, message, emoji, userId);
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId/reactions/:emoji',
      policy: 'user',
      rateLimit: limits.reactions,
      async handler(ctx) {
        const emoji = parseEmoji(ctx.params.emoji);
        const { channelAccess, message } = await target(ctx);
        requireChannel(channelAccess, PERMISSIONS.MANAGE_MESSAGES);
        const removed = await db.query(
          'DELETE FROM reactions WHERE message_id = $1 AND emoji_key = $2 RETURNING user_id',
          [message.id, emoji.key],
        );
        if (removed.length > 0)
          await events.channel('MESSAGE_REACTION_REMOVE_EMOJI', channelAccess, {
            message_id: message.id,
            emoji: emojiView(emoji),
          });
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId/reactions',
      policy: 'user',
      rateLimit: limits.reactions,
      async handler(ctx) {
        const { channelAccess, message } = await target(ctx);
        requireChannel(channelAccess, PERMISSIONS.MANAGE_MESSAGES);
        const removed = await db.query('DELETE FROM reactions WHERE message_id = $1 RETURNING user_id', [message.id]);
        if (removed.length > 0)
          await events.channel('MESSAGE_REACTION_REMOVE_ALL', channelAccess, { message_id: message.id });
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/messages/:messageId/reactions/:emoji',
      policy: 'user',
      rateLimit: limits.read('channels:reactions'),
      query: usersQuery,
      async handler(ctx) {
        const emoji = parseEmoji(ctx.params.emoji);
        const { message } = await target(ctx);
        const rows = await db.query<{ user_id: string }>(
          `SELECT user_id FROM reactions WHERE message_id = $1 AND emoji_key = $2 AND user_id > $3
            ORDER BY user_id LIMIT $4`,
          [message.id, emoji.key, ctx.query.after ?? '0', ctx.query.limit],
        );
        const users = await store.usersByIds(rows.map((r) => r.user_id));
        return rows.flatMap((r) => {
          const user = users.get(r.user_id);
          return user ? [partialUser(user)] : [];
        });
      },
    }),
  ];
}

/** A member whose timeout runs now; administrators and the owner are never timed out (docs/chat.md#permissions). */
function timedOut(channelAccess: ChannelAccess, now: number): boolean {
  const until = channelAccess.guild?.member.communication_disabled_until;
  return !!until && new Date(until).getTime() > now && !has(channelAccess.permissions, PERMISSIONS.ADMINISTRATOR);
}
