import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type ChannelAccess, isPrivateChannel, pathId } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import { has, PERMISSIONS } from './permissions.ts';
import type { PingSubject, ReadStateStore } from './read-state-store.ts';
import type { MessageRow } from './rows.ts';

/** The established client's ack body; `token` is a legacy field answered with `{token: null}`. */
const ackBody = z.object({
  token: z.string().max(2048).nullish(),
  /** Mark unread: the marker goes exactly where asked, even backwards. */
  manual: z.boolean().optional(),
  /** With `manual`: the mention count to keep (else it is recounted). */
  mention_count: z.number().int().min(0).max(1_000_000).optional(),
  last_viewed: z.number().int().min(0).nullish(),
});

const booleanQuery = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

const mentionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  before: snowflake.optional(),
  guild_id: snowflake.optional(),
  roles: booleanQuery.default(true),
  everyone: booleanQuery.default(true),
});

/** Candidate rounds of the mentions inbox before it answers with what it has. */
const MAX_INBOX_ROUNDS = 5;

function pingSubject(userId: string, channelAccess: ChannelAccess): PingSubject {
  return {
    userId,
    isPrivate: isPrivateChannel(channelAccess.channel),
    roleIds: channelAccess.guild?.member.roles ?? [],
  };
}

/**
 * Read states (acks, pins acks) and the mentions inbox: the user-account API of the established clients.
 * Every answer and event concerns the caller alone: MESSAGE_ACK and CHANNEL_PINS_ACK go to their sessions.
 */
export function readStateRoutes(deps: ChatDeps, readStates: ReadStateStore): AnyRoute[] {
  const { access, events, messages } = deps;

  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/messages/:messageId/ack',
      policy: 'user-only',
      rateLimit: limits.write('channels:messages:ack'),
      body: ackBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        const messageId = pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE');
        // Any id up to the channel's last message: one deleted while the reader saw it can still be acked
        // (as on Discord); an id the channel never reached is refused.
        if (channel.last_message_id === null || BigInt(messageId) > BigInt(channel.last_message_id))
          throw new ApiError('UNKNOWN_MESSAGE');
        const manual = ctx.body.manual === true;
        const state = await readStates.ack(pingSubject(ctx.user.id, channelAccess), channel.id, messageId, {
          manual,
          mentionCount: manual ? ctx.body.mention_count : undefined,
          now: ctx.now,
        });
        await events.users('MESSAGE_ACK', [ctx.user.id], {
          channel_id: channel.id,
          message_id: state.last_message_id,
          version: state.version,
          mention_count: state.mention_count,
          ...(manual ? { manual: true } : {}),
        });
        return { token: null };
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/ack',
      policy: 'user-only',
      rateLimit: limits.write('channels:messages:ack'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        await readStates.remove(ctx.user.id, channelAccess.channel.id);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/channels/:channelId/pins/ack',
      policy: 'user-only',
      rateLimit: limits.write('channels:pins:ack'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        const timestamp = channel.last_pin_timestamp ? new Date(channel.last_pin_timestamp) : new Date(ctx.now);
        const version = await readStates.ackPins(ctx.user.id, channel.id, timestamp, ctx.now);
        await events.users('CHANNEL_PINS_ACK', [ctx.user.id], {
          channel_id: channel.id,
          timestamp: timestamp.toISOString(),
          version,
        });
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/mentions',
      policy: 'user-only',
      rateLimit: limits.read('users:mentions'),
      query: mentionsQuery,
      async handler(ctx) {
        const { limit, before, guild_id: guildId, roles, everyone } = ctx.query;
        // Whether the caller may still read each channel (view + history), asked once per channel.
        const readable = new Map<string, Promise<boolean>>();
        const canRead = (channelId: string) => {
          let known = readable.get(channelId);
          if (!known) {
            known = access.channel(channelId, ctx.user.id, ctx.now).then(
              (a) => has(a.permissions, PERMISSIONS.READ_MESSAGE_HISTORY),
              (error: unknown) => {
                if (error instanceof ApiError) return false;
                throw error;
              },
            );
            readable.set(channelId, known);
          }
          return known;
        };
        const kept: MessageRow[] = [];
        let cursor = before;
        for (let round = 0; round < MAX_INBOX_ROUNDS && kept.length < limit; round++) {
          const batch = await readStates.mentionCandidates(ctx.user.id, {
            limit,
            before: cursor,
            guildId,
            roles,
            everyone,
          });
          const allowed = await Promise.all(batch.map((row) => canRead(row.channel_id)));
          for (const [i, row] of batch.entries()) if (allowed[i] && kept.length < limit) kept.push(row);
          if (batch.length < limit) break;
          cursor = batch[batch.length - 1]?.id;
        }
        const views = await messages.render(kept, ctx.user.id);
        return views.map((view, i) => {
          const guild = kept[i]?.guild_id;
          return guild ? { ...view, guild_id: guild } : view;
        });
      },
    }),
  ];
}
