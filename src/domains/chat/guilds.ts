import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { pathId } from './access.ts';
import { booleanQuery, type ChatDeps, cursorQuery, guildCounts, limits, nullableText, snowflake } from './deps.ts';
import { type EmojiRow, type EmojiView, emojiObjectKey, emojiView, guildEmojis } from './emoji-store.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from './guild-audit.ts';
import { buildGuildPayload } from './guild-payload.ts';
import { computeBasePermissions, DEFAULT_EVERYONE_PERMISSIONS, PERMISSIONS, parsePermissions } from './permissions.ts';
import { CHANNEL_TYPES, type GuildRow } from './rows.ts';
import { guildStickers, type StickerRow, type StickerView, stickerObjectKey, stickerView } from './sticker-store.ts';
import { type GuildView, guildView, type RoleView, roleView } from './views.ts';

/** Guilds a user may belong to at once. */
export const MAX_GUILDS_PER_USER = 200;

/** Refuses with `MAX_GUILDS` a user who is already in as many guilds as allowed (create, join). */
export async function requireRoomForAnotherGuild(db: Queryable, userId: string): Promise<void> {
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM members WHERE user_id = $1', [userId]);
  if ((count?.n ?? 0) >= MAX_GUILDS_PER_USER) throw new ApiError('MAX_GUILDS');
}

const createGuildBody = z.object({
  name: z.string().trim().min(1).max(100),
  icon: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
});

const patchGuildBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  icon: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  banner: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  splash: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  system_channel_id: snowflake.nullish(),
  system_channel_flags: z.number().int().min(0).max(0xff).optional(),
  rules_channel_id: snowflake.nullish(),
  afk_channel_id: snowflake.nullish(),
  afk_timeout: z.union([z.literal(60), z.literal(300), z.literal(900), z.literal(1800), z.literal(3600)]).optional(),
  verification_level: z.number().int().min(0).max(4).optional(),
  explicit_content_filter: z.number().int().min(0).max(2).optional(),
  default_message_notifications: z.number().int().min(0).max(1).optional(),
  description: nullableText(120),
});

const transferBody = z.object({ new_owner_id: snowflake });

/** A guild's settings as its GUILD_UPDATE audit entries show them (Discord's keys: images as `*_hash`). */
function guildAuditFields(g: GuildRow): Record<string, unknown> {
  return {
    name: g.name,
    icon_hash: g.icon,
    banner_hash: g.banner,
    splash_hash: g.splash,
    owner_id: g.owner_id,
    afk_channel_id: g.afk_channel_id,
    afk_timeout: g.afk_timeout,
    system_channel_id: g.system_channel_id,
    system_channel_flags: g.system_channel_flags,
    rules_channel_id: g.rules_channel_id,
    verification_level: g.verification_level,
    explicit_content_filter: g.explicit_content_filter,
    default_message_notifications: g.default_message_notifications,
  };
}
const GUILD_AUDIT_KEYS = [
  'name',
  'icon_hash',
  'banner_hash',
  'splash_hash',
  'owner_id',
  'afk_channel_id',
  'afk_timeout',
  'system_channel_id',
  'system_channel_flags',
  'rules_channel_id',
  'verification_level',
  'explicit_content_filter',
  'default_message_notifications',
] as const;

/** The guild object discord.js's guild fetch reads (`fullGuildView`). */
type FullGuildView = GuildView & { roles: RoleView[]; emojis: EmojiView[]; stickers: StickerView[] };

/** The guild object discord.js's guild fetch reads: guild fields plus roles, emojis and stickers. */
function fullGuildView(
  guild: GuildRow,
  roles: Parameters<typeof roleView>[0][],
  expressions: { emojis: readonly EmojiRow[]; stickers: readonly StickerRow[] },
): FullGuildView {
  return {
    ...guildView(guild),
    roles: roles.map(roleView),
    emojis: expressions.emojis.map((e) => emojiView(e)),
    stickers: expressions.stickers.map((s) => stickerView(s)),
  };
}

async function expressionsOf(db: Queryable, guildId: string) {
  const [emojis, stickers] = await Promise.all([guildEmojis(db, guildId), guildStickers(db, guildId)]);
  return { emojis, stickers };
}

export function guildRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;

  async function auditGuildUpdate(before: GuildRow, after: GuildRow, userId: string, reason: string | null) {
    const changes = auditChanges(guildAuditFields(before), guildAuditFields(after), GUILD_AUDIT_KEYS);
    if (changes.length === 0) return;
    await audit.record({
      guildId: after.id,
      action: AUDIT_LOG_EVENTS.GUILD_UPDATE,
      userId,
      targetId: after.id,
      changes,
      reason,
    });
  }
  const { db, ids } = services;

  return [
    route({
      method: 'POST',
      path: '/guilds',
      policy: 'user-only',
      rateLimit: limits.create('guilds'),
      body: createGuildBody,
      async handler(ctx) {
        const userId = ctx.user.id;
        const guildId = ids.next();
        const channelId = ids.next();
        const icon = ctx.body.icon
          ? await services.media.storeUserImage('icons', guildId, ctx.body.icon, 'icon')
          : null;
        const restricted = await db.transaction(async (tx) => {
          await requireRoomForAnotherGuild(tx, userId);
          await tx.query(
            `INSERT INTO guilds (id, name, icon, owner_id, system_channel_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
            [guildId, ctx.body.name, icon, userId, channelId, new Date(ctx.now)],
          );
          await tx.query(
            `INSERT INTO roles (id, guild_id, name, position, permissions) VALUES ($1, $1, '@everyone', 0, $2)`,
            [guildId, DEFAULT_EVERYONE_PERMISSIONS.toString()],
          );
          await tx.query(
            `INSERT INTO channels (id, type, guild_id, name, position) VALUES ($1, $2, $3, 'general', 0)`,
            [channelId, CHANNEL_TYPES.GUILD_TEXT, guildId],
          );
          await tx.query('INSERT INTO members (guild_id, user_id, joined_at) VALUES ($1, $2, $3)', [
            guildId,
            userId,
            new Date(ctx.now),
          ]);
          // `default_guilds_restricted` covers the guilds one creates too (docs/chat.md#dm-rules).
          return store.restrictJoinedGuild(userId, guildId, tx);
        });
        if (restricted) await events.users('USER_SETTINGS_UPDATE', [userId], { restricted_guilds: restricted });
        const bundle = await store.guildBundle(guildId, userId);
        if (!bundle) throw new ApiError('UNKNOWN_GUILD');
        const payload = await buildGuildPayload(store, guildId, userId, ctx.now, { bundle });
        if (payload) await events.users('GUILD_CREATE', [userId], payload);
        return fullGuildView(bundle.guild, bundle.roles, { emojis: [], stickers: [] });
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId',
      policy: 'user',
      rateLimit: limits.read('guilds'),
      query: z.object({ with_counts: booleanQuery.optional() }),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const view = fullGuildView(guild.guild, guild.roles, await expressionsOf(db, guild.guildId));
        if (!ctx.query.with_counts) return view;
        const counts = await guildCounts(store, guild.guild.id);
        return { ...view, approximate_member_count: counts.members, approximate_presence_count: counts.presences };
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId',
      policy: 'user',
      rateLimit: limits.write('guilds'),
      body: patchGuildBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_GUILD);
        const body = ctx.body;
        const sets: string[] = [];
        const values: unknown[] = [guildId];
        const set = (column: string, value: unknown) => {
          values.push(value);
          sets.push(`${column} = $${values.length}`);
        };
        const channelOf = async (field: string, id: string | null | undefined, type: number) => {
          if (id === undefined) return;
          if (id !== null) {
            const channel = await store.channel(id);
            if (!channel || channel.guild_id !== guildId || channel.type !== type)
              throw fieldError(field, 'INVALID_FORMAT', 'Not a suitable channel of this guild');
          }
          set(field, id);
        };
        if (body.name !== undefined) set('name', body.name);
        for (const [field, kind] of [
          ['icon', 'icons'],
          ['banner', 'banners'],
          ['splash', 'splashes'],
        ] as const) {
          const value = body[field];
          if (value !== undefined) set(field, await services.media.storeUserImage(kind, guildId, value, field));
        }
        await channelOf('system_channel_id', body.system_channel_id, CHANNEL_TYPES.GUILD_TEXT);
        await channelOf('rules_channel_id', body.rules_channel_id, CHANNEL_TYPES.GUILD_TEXT);
        await channelOf('afk_channel_id', body.afk_channel_id, CHANNEL_TYPES.GUILD_VOICE);
        for (const field of [
          'system_channel_flags',
          'afk_timeout',
          'verification_level',
          'explicit_content_filter',
          'default_message_notifications',
        ] as const) {
          if (body[field] !== undefined) set(field, body[field]);
        }
        if (sets.length === 0) return fullGuildView(guild.guild, guild.roles, await expressionsOf(db, guild.guildId));
        const [row] = await db.query<GuildRow>(
          `UPDATE guilds SET ${sets.join(', ')} WHERE id = $1 RETURNING *`,
          values,
        );
        if (!row) throw new ApiError('UNKNOWN_GUILD');
        await auditGuildUpdate(guild.guild, row, ctx.user.id, auditReason(ctx.request.headers));
        await events.guild('GUILD_UPDATE', guildId, { ...guildView(row), roles: guild.roles.map(roleView) });
        return fullGuildView(row, guild.roles, await expressionsOf(db, guildId));
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/delete',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: limits.write('guilds'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guild(guildId, ctx.user.id, ctx.now);
        if (!guild.isOwner) throw new ApiError('MISSING_PERMISSIONS');
        const memberIds = await store.memberIds(guildId);
        const [emojis, stickers] = await Promise.all([guildEmojis(db, guildId), guildStickers(db, guildId)]);
        await db.query('DELETE FROM guilds WHERE id = $1', [guildId]);
        for (const emoji of emojis) await services.objects.delete(emojiObjectKey(emoji.id));
        for (const sticker of stickers) await services.objects.delete(stickerObjectKey(sticker.id));
        await events.invalidate({ guildId });
        await events.users('GUILD_DELETE', memberIds, { id: guildId });
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/transfer-ownership',
      policy: 'user-only',
      sudo: 'y',
      rateLimit: limits.write('guilds'),
      body: transferBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guild(guildId, ctx.user.id, ctx.now);
        if (!guild.isOwner) throw new ApiError('MISSING_PERMISSIONS');
        const target = await store.member(guildId, ctx.body.new_owner_id);
        if (!target) throw new ApiError('UNKNOWN_MEMBER');
        const [row] = await db.query<GuildRow>('UPDATE guilds SET owner_id = $2 WHERE id = $1 RETURNING *', [
          guildId,
          ctx.body.new_owner_id,
        ]);
        if (!row) throw new ApiError('UNKNOWN_GUILD');
        await events.invalidate({ guildId });
        await auditGuildUpdate(guild.guild, row, ctx.user.id, auditReason(ctx.request.headers));
        await events.guild('GUILD_UPDATE', guildId, { ...guildView(row), roles: guild.roles.map(roleView) });
        // The former owner may lose channels only an owner saw; the new one may gain some.
        if (guild.guild.owner_id !== row.owner_id) await events.visibility(guildId, { ownerId: guild.guild.owner_id });
        return fullGuildView(row, guild.roles, await expressionsOf(db, guildId));
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/guilds',
      policy: 'user',
      scope: 'guilds',
      rateLimit: limits.read('users:guilds'),
      query: cursorQuery(200, 200),
      async handler(ctx) {
        const { before, after, limit } = ctx.query;
        const params: unknown[] = [ctx.user.id];
        let filter = '';
        if (before) {
          params.push(before);
          filter += ` AND g.id < $${params.length}`;
        }
        if (after) {
          params.push(after);
          filter += ` AND g.id > $${params.length}`;
        }
        params.push(limit);
        // With only `before`, the page closest to the cursor is wanted: read descending, then restore order.
        const descending = before !== undefined && after === undefined;
        const rows = await db.query<
          GuildRow & { member_roles: string[]; timeout: Date | null; role_perms: { id: string; permissions: string }[] }
        >(
          `SELECT g.*, m.roles::text[] AS member_roles, m.communication_disabled_until AS timeout,
                  (SELECT json_agg(json_build_object('id', r.id::text, 'permissions', r.permissions::text))
                     FROM roles r WHERE r.guild_id = g.id) AS role_perms
             FROM members m JOIN guilds g ON g.id = m.guild_id
            WHERE m.user_id = $1${filter}
            ORDER BY g.id ${descending ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
          params,
        );
        if (descending) rows.reverse();
        return rows.map(({ member_roles, timeout, role_perms, ...guild }) => {
          const permissions = computeBasePermissions({
            guildId: guild.id,
            ownerId: guild.owner_id,
            userId: ctx.user.id,
            memberRoleIds: member_roles,
            rolePermissions: new Map((role_perms ?? []).map((r) => [r.id, parsePermissions(r.permissions)])),
            timedOutUntil: timeout ? new Date(timeout).getTime() : null,
            now: ctx.now,
          });
          return {
            ...guildView(guild as GuildRow),
            owner: guild.owner_id === ctx.user.id,
            permissions: permissions.toString(),
          };
        });
      },
    }),

    route({
      method: 'DELETE',
      path: '/users/@me/guilds/:guildId',
      policy: 'user',
      rateLimit: limits.write('users:guilds'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await store.guild(guildId);
        const member = guild ? await store.member(guildId, ctx.user.id) : undefined;
        if (!guild || !member) throw new ApiError('UNKNOWN_GUILD');
        if (guild.owner_id === ctx.user.id)
          throw fieldError('guild_id', 'CANNOT_LEAVE_GUILD_AS_OWNER', 'The owner cannot leave the guild');
        await db.query('DELETE FROM members WHERE guild_id = $1 AND user_id = $2', [guildId, ctx.user.id]);
        await events.invalidate({ guildId, userId: ctx.user.id });
        await events.guild('GUILD_MEMBER_REMOVE', guildId, { user: partialUser(ctx.user) });
        await events.users('GUILD_DELETE', [ctx.user.id], { id: guildId });
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/connections',
      policy: 'user',
      scope: 'connections',
      rateLimit: limits.read('users:connections'),
      handler: () => [],
    }),
  ];
}
