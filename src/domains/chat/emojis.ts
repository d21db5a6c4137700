import { z } from 'zod';
import { ApiError, toWireBody } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { type ExpressionImage, readExpressionImage } from '../media/expression-images.ts';
import { type GuildContext, pathId } from './access.ts';
import type { ChatDeps } from './deps.ts';
import { limits, snowflake } from './deps.ts';
import {
  deleteEmoji,
  EMOJI_BOX,
  EMOJI_COLUMNS,
  type EmojiRow,
  emojiObjectKey,
  emojiView,
  guildEmoji,
  guildEmojis,
  MAX_ANIMATED_EMOJIS,
  MAX_EMOJI_BYTES,
  MAX_STATIC_EMOJIS,
} from './emoji-store.ts';
import { requireCreateExpressions, seesUploaders } from './expression-permissions.ts';
import { expressionParts } from './expression-routes.ts';
import { AUDIT_LOG_EVENTS, auditReason } from './guild-audit.ts';

/** Discord's emoji name rule: 2–32 of `A-Z a-z 0-9 _`. */
const emojiName = z
  .string()
  .min(2)
  .max(32)
  .regex(/^[A-Za-z0-9_]+$/, 'Only letters, digits and underscores');
/** The body limit bounds `image`; its decoded size is checked (BINARY_TYPE_MAX_SIZE) by `readExpressionImage`. */
const imageField = z.string();
/** A 256 KiB image as base64 in a data URI, with room for the prefix. */
const MAX_IMAGE_FIELD = 4 * Math.ceil(MAX_EMOJI_BYTES / 3) + 128;
const rolesField = z.array(snowflake).max(250).nullish();

const createEmojiBody = z.object({ name: emojiName, image: imageField, roles: rolesField });
const patchEmojiBody = z.object({ name: emojiName.optional(), roles: rolesField });
/** Bulk upload: at most 50 at once (one kind's full allowance); each item is validated alone. */
const MAX_BULK_EMOJIS = 50;
const bulkBody = z.object({ emojis: z.array(z.unknown()).min(1).max(MAX_BULK_EMOJIS) });
const BULK_BODY_LIMIT = MAX_BULK_EMOJIS * (MAX_IMAGE_FIELD + 4096);

/** Role ids must name roles of the guild; duplicates are dropped. */
function checkRoles(guild: GuildContext, roles: readonly string[] | null | undefined): string[] {
  const out = [...new Set(roles ?? [])];
  for (const id of out) if (!guild.role(id)) throw new ApiError('UNKNOWN_ROLE');
  return out;
}

export function emojiRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, audit } = deps;
  const { db, ids } = services;

  /** EMOJI_CREATE / _UPDATE / _DELETE: Discord's emoji entries carry the `name` only. */
  async function auditEmoji(
    action: number,
    guild: GuildContext,
    emojiId: string,
    name: { old?: string; new?: string },
    reason: string | null,
  ): Promise<void> {
    if (name.old !== undefined && name.old === name.new) return;
    await audit.record({
      guildId: guild.guildId,
      action,
      userId: guild.userId,
      targetId: emojiId,
      changes: [
        {
          key: 'name',
          ...(name.old !== undefined ? { old_value: name.old } : {}),
          ...(name.new !== undefined ? { new_value: name.new } : {}),
        },
      ],
      reason,
    });
  }

  const {
    requireItem: requireEmoji,
    changeable,
    announce,
    insertWithObject,
    deleteRoute,
  } = expressionParts(deps, {
    itemPath: '/guilds/:guildId/emojis/:emojiId',
    idParam: 'emojiId',
    rateLimit: 'guilds:emojis',
    unknown: 'UNKNOWN_EMOJI',
    find: guildEmoji,
    remove: deleteEmoji,
    objectKey: emojiObjectKey,
    announce: async (db, events, guildId) =>
      events.guild('GUILD_EMOJIS_UPDATE', guildId, {
        emojis: (await guildEmojis(db, guildId)).map((e) => emojiView(e)),
      }),
    auditDelete: (guild, emoji, reason) =>
      auditEmoji(AUDIT_LOG_EVENTS.EMOJI_DELETE, guild, emoji.id, { old: emoji.name }, reason),
  });

  /** Stores the image and inserts the row, within the guild's allowance of static and of animated emojis. */
  function createOne(
    guild: GuildContext,
    input: { name: string; roles: string[]; image: ExpressionImage },
    now: number,
  ): Promise<EmojiRow> {
    const id = ids.next();
    return insertWithObject(guild.guildId, id, input.image, async (tx) => {
      const [count] = await tx.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM guild_emojis WHERE guild_id = $1 AND animated = $2',
        [guild.guildId, input.image.animated],
      );
      const n = count?.n ?? 0;
      if (input.image.animated && n >= MAX_ANIMATED_EMOJIS) throw new ApiError('MAX_ANIMATED_EMOJIS');
      if (!input.image.animated && n >= MAX_STATIC_EMOJIS) throw new ApiError('MAX_EMOJIS');
      const [row] = await tx.query<EmojiRow>(
        `INSERT INTO guild_emojis AS e (id, guild_id, name, roles, user_id, animated, created_at)
         VALUES ($1, $2, $3, $4::bigint[], $5, $6, $7) RETURNING ${EMOJI_COLUMNS}`,
        [id, guild.guildId, input.name, input.roles, guild.userId, input.image.animated, new Date(now)],
      );
      return row as EmojiRow;
    });
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/emojis',
      policy: 'user',
      rateLimit: limits.read('guilds:emojis'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const rows = await guildEmojis(db, guild.guildId);
        if (!seesUploaders(guild)) return rows.map((row) => emojiView(row));
        const users = await store.usersByIds(rows.flatMap((r) => (r.user_id ? [r.user_id] : [])));
        return rows.map((row) => emojiView(row, row.user_id ? users.get(row.user_id) : null));
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/emojis/:emojiId',
      policy: 'user',
      rateLimit: limits.read('guilds:emojis'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const row = await requireEmoji(guild.guildId, ctx.params.emojiId);
        const user = seesUploaders(guild) && row.user_id ? await store.user(row.user_id) : null;
        return emojiView(row, user);
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/emojis',
      policy: 'user',
      rateLimit: limits.create('guilds:emojis'),
      body: createEmojiBody,
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        requireCreateExpressions(guild);
        const roles = checkRoles(guild, ctx.body.roles);
        const image = await readExpressionImage(ctx.body.image, 'image', MAX_EMOJI_BYTES, EMOJI_BOX);
        const row = await createOne(guild, { name: ctx.body.name, roles, image }, ctx.now);
        await auditEmoji(
          AUDIT_LOG_EVENTS.EMOJI_CREATE,
          guild,
          row.id,
          { new: row.name },
          auditReason(ctx.request.headers),
        );
        await announce(guild.guildId);
        return emojiView(row, ctx.user);
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/emojis/bulk',
      policy: 'user',
      rateLimit: limits.create('guilds:emojis'),
      bodyLimit: BULK_BODY_LIMIT,
      body: bulkBody,
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        requireCreateExpressions(guild);
        const success: Record<string, unknown>[] = [];
        const failed: Record<string, unknown>[] = [];
        for (const item of ctx.body.emojis) {
          const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
          try {
            const body = validate(createEmojiBody, item);
            const roles = checkRoles(guild, body.roles);
            const image = await readExpressionImage(body.image, 'image', MAX_EMOJI_BYTES, EMOJI_BOX);
            const row = await createOne(guild, { name: body.name, roles, image }, ctx.now);
            await auditEmoji(
              AUDIT_LOG_EVENTS.EMOJI_CREATE,
              guild,
              row.id,
              { new: row.name },
              auditReason(ctx.request.headers),
            );
            success.push(emojiView(row, ctx.user));
          } catch (error) {
            if (!(error instanceof ApiError)) throw error;
            failed.push({ name: typeof name === 'string' ? name : null, ...toWireBody(error) });
          }
        }
        if (success.length > 0) await announce(guild.guildId);
        return { success, failed };
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/emojis/:emojiId',
      policy: 'user',
      rateLimit: limits.write('guilds:emojis'),
      body: patchEmojiBody,
      async handler(ctx) {
        const { guild, row: emoji } = await changeable(ctx);
        const roles = ctx.body.roles === undefined ? emoji.roles : checkRoles(guild, ctx.body.roles);
        const [row] = await db.query<EmojiRow>(
          `UPDATE guild_emojis e SET name = $2, roles = $3::bigint[] WHERE e.id = $1 RETURNING ${EMOJI_COLUMNS}`,
          [emoji.id, ctx.body.name ?? emoji.name, roles],
        );
        if (!row) throw new ApiError('UNKNOWN_EMOJI');
        await auditEmoji(
          AUDIT_LOG_EVENTS.EMOJI_UPDATE,
          guild,
          row.id,
          { old: emoji.name, new: row.name },
          auditReason(ctx.request.headers),
        );
        await announce(guild.guildId);
        const user = row.user_id ? await store.user(row.user_id) : null;
        return emojiView(row, user);
      },
    }),

    deleteRoute,
  ];
}
