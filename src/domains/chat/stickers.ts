import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route, StreamedBody } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { HEAD_BYTES, readStreamedMultipart } from '../attachments/streamed-multipart.ts';
import { readStickerFile } from '../media/expression-images.ts';
import { type GuildContext, pathId } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { requireCreateExpressions, seesUploaders } from './expression-permissions.ts';
import { expressionParts } from './expression-routes.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from './guild-audit.ts';
import {
  deleteSticker,
  guildSticker,
  guildStickers,
  MAX_GUILD_STICKERS,
  MAX_STICKER_BYTES,
  STICKER_BOX,
  STICKER_COLUMNS,
  type StickerRow,
  type StickerView,
  stickerObjectKey,
  stickerView,
} from './sticker-store.ts';

/** Discord's sticker fields: name 2–30, description empty or 2–100, tags (autocomplete words) 1–200. */
const stickerName = z.string().min(2).max(30);
const stickerDescription = z.union([z.literal(''), z.string().min(2).max(100)]).nullish();
const stickerTags = z.string().min(1).max(200);
const createStickerFields = z.object({ name: stickerName, description: stickerDescription, tags: stickerTags });
const patchStickerBody = z.object({
  name: stickerName.optional(),
  description: stickerDescription,
  tags: stickerTags.optional(),
});
/** The file plus the form fields and multipart framing. */
const STICKER_BODY_LIMIT = MAX_STICKER_BYTES + 64 * 1024;

/** A sticker's fields as its audit entries show them (Discord's keys). */
function stickerAuditFields(row: StickerRow): Record<string, unknown> {
  return {
    name: row.name,
    description: row.description,
    tags: row.tags,
    format_type: row.format_type,
    available: row.available,
  };
}
const STICKER_AUDIT_KEYS = ['name', 'description', 'tags', 'format_type', 'available'] as const;

export function stickerRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, audit } = deps;
  const { db, ids } = services;

  /** STICKER_CREATE / _UPDATE / _DELETE entries (Discord's keys); an update lists what changed. */
  async function auditSticker(
    action: number,
    guild: GuildContext,
    before: StickerRow | undefined,
    after: StickerRow | undefined,
    reason: string | null,
  ): Promise<void> {
    const changes = auditChanges(
      before && stickerAuditFields(before),
      after && stickerAuditFields(after),
      before && after ? ['name', 'description', 'tags'] : STICKER_AUDIT_KEYS,
    );
    if (changes.length === 0) return;
    await audit.record({
      guildId: guild.guildId,
      action,
      userId: guild.userId,
      targetId: (after ?? before)?.id ?? null,
      changes,
      reason,
    });
  }

  const {
    requireItem: requireSticker,
    changeable,
    announce,
    insertWithObject,
    deleteRoute,
  } = expressionParts(deps, {
    itemPath: '/guilds/:guildId/stickers/:stickerId',
    idParam: 'stickerId',
    rateLimit: 'guilds:stickers',
    unknown: 'UNKNOWN_STICKER',
    find: guildSticker,
    remove: deleteSticker,
    objectKey: stickerObjectKey,
    announce: async (db, events, guildId) =>
      events.guild('GUILD_STICKERS_UPDATE', guildId, {
        stickers: (await guildStickers(db, guildId)).map((s) => stickerView(s)),
      }),
    auditDelete: (guild, sticker, reason) =>
      auditSticker(AUDIT_LOG_EVENTS.STICKER_DELETE, guild, sticker, undefined, reason),
  });

  async function withUploaders(guild: GuildContext, rows: StickerRow[]): Promise<StickerView[]> {
    if (!seesUploaders(guild)) return rows.map((row) => stickerView(row));
    const users = await store.usersByIds(rows.flatMap((r) => (r.user_id ? [r.user_id] : [])));
    return rows.map((row) => stickerView(row, row.user_id ? users.get(row.user_id) : null));
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/stickers',
      policy: 'user',
      rateLimit: limits.read('guilds:stickers'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        return withUploaders(guild, await guildStickers(db, guild.guildId));
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/stickers/:stickerId',
      policy: 'user',
      rateLimit: limits.read('guilds:stickers'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const [view] = await withUploaders(guild, [await requireSticker(guild.guildId, ctx.params.stickerId)]);
        return view;
      },
    }),

    route({
      method: 'GET',
      path: '/stickers/:stickerId',
      policy: 'user',
      rateLimit: limits.read('stickers'),
      async handler(ctx) {
        const stickerId = pathId(ctx.params.stickerId, 'UNKNOWN_STICKER');
        const [row] = await db.query<StickerRow>(`SELECT ${STICKER_COLUMNS} FROM guild_stickers s WHERE s.id = $1`, [
          stickerId,
        ]);
        if (!row) throw new ApiError('UNKNOWN_STICKER');
        return stickerView(row);
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/stickers',
      policy: 'user',
      bodyKind: 'stream',
      bodyLimit: STICKER_BODY_LIMIT,
      rateLimit: limits.create('guilds:stickers'),
      // Who may upload is known from the path and the credential: decided before the file is read.
      preflight: async (ctx) => {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        requireCreateExpressions(guild);
        return guild;
      },
      async handler(ctx) {
        const guild = ctx.preflight as GuildContext;
        const streamed = ctx.rawBody;
        if (!(streamed instanceof StreamedBody)) throw new Error('the sticker upload is a bodyKind: stream route');
        if (!streamed.contentType.toLowerCase().startsWith('multipart/form-data'))
          throw fieldError('body', 'INVALID_FORMAT', 'Expected multipart/form-data with a file');
        // Streamed to staging like an attachment (docs/media.md#uploads-in-flight), refused past 512 KiB as it
        // arrives; the staged file is removed when the exchange ends unless it was kept.
        const form = await readStreamedMultipart(streamed, services.objects, {
          maxFileBytes: MAX_STICKER_BYTES,
          tooLargeField: 'file',
          tooLargeMessage: `File cannot be larger than ${(MAX_STICKER_BYTES / 1024).toFixed(1)} kb.`,
        });
        const fields = validate(createStickerFields, Object.fromEntries(form.fields));
        const upload = form.files.find((f) => f.field === 'file') ?? form.files[0];
        if (!upload) throw fieldError('file', 'BASE_TYPE_REQUIRED', 'A sticker file is required');
        // Checked (sniffed, decoded by sharp) as before: from the head kept in memory when it is the whole file,
        // else from the staged object, which the cap bounds to 512 KiB.
        const sent = upload.size <= HEAD_BYTES ? upload.head : (await services.objects.get(upload.stagedKey))?.bytes;
        if (!sent) throw fieldError('file', 'BASE_TYPE_REQUIRED', 'A sticker file is required');
        const checked = await readStickerFile(sent, 'file', MAX_STICKER_BYTES, STICKER_BOX);
        // Kept byte for byte (it fits the box, or is an APNG): moved from staging, never written again.
        const file = checked.bytes === sent ? { ...checked, stagedKey: upload.stagedKey } : checked;
        const id = ids.next();
        const row = await insertWithObject(guild.guildId, id, file, async (tx) => {
          const [count] = await tx.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM guild_stickers WHERE guild_id = $1',
            [guild.guildId],
          );
          if ((count?.n ?? 0) >= MAX_GUILD_STICKERS) throw new ApiError('MAX_STICKERS');
          const [inserted] = await tx.query<StickerRow>(
            `INSERT INTO guild_stickers AS s (id, guild_id, name, description, tags, format_type, user_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${STICKER_COLUMNS}`,
            [
              id,
              guild.guildId,
              fields.name,
              fields.description || null,
              fields.tags,
              file.formatType,
              ctx.user.id,
              new Date(ctx.now),
            ],
          );
          return inserted as StickerRow;
        });
        await auditSticker(AUDIT_LOG_EVENTS.STICKER_CREATE, guild, undefined, row, auditReason(ctx.request.headers));
        await announce(guild.guildId);
        return stickerView(row, ctx.user);
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/stickers/:stickerId',
      policy: 'user',
      rateLimit: limits.write('guilds:stickers'),
      body: patchStickerBody,
      async handler(ctx) {
        const { guild, row: sticker } = await changeable(ctx);
        const description = ctx.body.description === undefined ? sticker.description : ctx.body.description || null;
        const [row] = await db.query<StickerRow>(
          `UPDATE guild_stickers s SET name = $2, description = $3, tags = $4 WHERE s.id = $1
           RETURNING ${STICKER_COLUMNS}`,
          [sticker.id, ctx.body.name ?? sticker.name, description, ctx.body.tags ?? sticker.tags],
        );
        if (!row) throw new ApiError('UNKNOWN_STICKER');
        await auditSticker(AUDIT_LOG_EVENTS.STICKER_UPDATE, guild, sticker, row, auditReason(ctx.request.headers));
        await announce(guild.guildId);
        return stickerView(row, row.user_id ? await store.user(row.user_id) : null);
      },
    }),

    deleteRoute,
  ];
}
