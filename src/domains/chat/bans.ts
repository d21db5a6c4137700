import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { pathId } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import { AUDIT_LOG_EVENTS, auditReason } from './guild-audit.ts';
import { PERMISSIONS } from './permissions.ts';
import { iso } from './rows.ts';

const banBody = z.object({
  delete_message_days: z.number().int().min(0).max(7).optional(),
  delete_message_seconds: z.number().int().min(0).max(604800).optional(),
  reason: z.string().max(512).nullish(),
});

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(1000),
  before: snowflake.optional(),
  after: snowflake.optional(),
});

interface BanRow {
  user_id: string;
  reason: string | null;
  banned_at: Date;
}

/** A ban (discord-api-types' APIBan, with when it was made); a user no longer loaded is `{id}`. */
type BanView = { user: PartialUser | { id: string }; reason: string | null; banned_at: string | null };

function banView(row: BanRow, user: UserRecord | undefined): BanView {
  return { user: user ? partialUser(user) : { id: row.user_id }, reason: row.reason, banned_at: iso(row.banned_at) };
}

export function banRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;
  const { db } = services;

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/bans',
      policy: 'user',
      rateLimit: limits.read('guilds:bans'),
      query: listQuery,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.BAN_MEMBERS);
        const params: unknown[] = [guildId];
        let filter = '';
        if (ctx.query.after) {
          params.push(ctx.query.after);
          filter += ` AND user_id > $${params.length}`;
        }
        if (ctx.query.before) {
          params.push(ctx.query.before);
          filter += ` AND user_id < $${params.length}`;
        }
        params.push(ctx.query.limit);
        const rows = await db.query<BanRow>(
          `SELECT user_id, reason, banned_at FROM bans WHERE guild_id = $1${filter} ORDER BY user_id LIMIT $${params.length}`,
          params,
        );
        const users = await store.usersByIds(rows.map((r) => r.user_id));
        return rows.map((row) => banView(row, users.get(row.user_id)));
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/bans/:userId',
      policy: 'user',
      rateLimit: limits.read('guilds:bans'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.BAN_MEMBERS);
        const userId = pathId(ctx.params.userId, 'UNKNOWN_BAN');
        const [row] = await db.query<BanRow>(
          'SELECT user_id, reason, banned_at FROM bans WHERE guild_id = $1 AND user_id = $2',
          [guildId, userId],
        );
        if (!row) throw new ApiError('UNKNOWN_BAN');
        return banView(row, await store.user(userId));
      },
    }),

    route({
      method: 'PUT',
      path: '/guilds/:guildId/bans/:userId',
      policy: 'user',
      rateLimit: limits.write('guilds:bans'),
      body: banBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.BAN_MEMBERS);
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        const user = await store.user(userId);
        if (!user) throw new ApiError('UNKNOWN_USER');
        const member = userId === guild.userId ? guild.member : await store.member(guildId, userId);
        if (member) guild.requireOutranks(member);
        const reason = ctx.body.reason ?? auditReason(ctx.request.headers);
        const seconds = ctx.body.delete_message_seconds ?? (ctx.body.delete_message_days ?? 0) * 86400;
        const deleted = await db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO bans (guild_id, user_id, reason, banned_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (guild_id, user_id) DO UPDATE SET reason = EXCLUDED.reason`,
            [guildId, userId, reason, new Date(ctx.now)],
          );
          if (member) await tx.query('DELETE FROM members WHERE guild_id = $1 AND user_id = $2', [guildId, userId]);
          if (seconds === 0) return [];
          return tx.query<{ id: string; channel_id: string }>(
            'DELETE FROM messages WHERE guild_id = $1 AND author_id = $2 AND id >= $3 RETURNING id, channel_id',
            [guildId, userId, SnowflakeGenerator.atTime(ctx.now - seconds * 1000)],
          );
        });
        // The database queued the purged messages' files: a bounded number go now, the janitor takes the rest.
        await services.attachments.deleteDiscarded(deleted.map((m) => m.id));
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.MEMBER_BAN_ADD,
          userId: ctx.user.id,
          targetId: userId,
          reason,
        });
        if (member) {
          await events.invalidate({ guildId, userId });
          await events.guild('GUILD_MEMBER_REMOVE', guildId, { user: partialUser(user) });
          await events.users('GUILD_DELETE', [userId], { id: guildId });
        }
        await events.guild('GUILD_BAN_ADD', guildId, { user: partialUser(user) });
        const byChannel = new Map<string, string[]>();
        for (const m of deleted) byChannel.set(m.channel_id, [...(byChannel.get(m.channel_id) ?? []), m.id]);
        for (const [channelId, messageIds] of byChannel) {
          await events.channelViewers('MESSAGE_DELETE_BULK', guildId, channelId, {
            ids: messageIds,
            channel_id: channelId,
            guild_id: guildId,
          });
        }
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/guilds/:guildId/bans/:userId',
      policy: 'user',
      rateLimit: limits.write('guilds:bans'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.BAN_MEMBERS);
        const userId = pathId(ctx.params.userId, 'UNKNOWN_BAN');
        const rows = await db.query('DELETE FROM bans WHERE guild_id = $1 AND user_id = $2 RETURNING user_id', [
          guildId,
          userId,
        ]);
        if (rows.length === 0) throw new ApiError('UNKNOWN_BAN');
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.MEMBER_BAN_REMOVE,
          userId: ctx.user.id,
          targetId: userId,
          reason: auditReason(ctx.request.headers),
        });
        const user = await store.user(userId);
        await events.guild('GUILD_BAN_REMOVE', guildId, { user: user ? partialUser(user) : { id: userId } });
        return undefined;
      },
    }),
  ];
}
