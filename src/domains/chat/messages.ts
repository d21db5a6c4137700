import { z } from 'zod';
import { ApiError, type FieldError, fieldError, formError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import type { AttachmentRef } from '../attachments/attachment-service.ts';
import type { AttachmentView } from '../attachments/attachment-view.ts';
import type { StagedFile } from '../attachments/streamed-multipart.ts';
import { type ChannelAccess, pathId, requireChannel } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import { AUDIT_LOG_EVENTS, auditReason } from './guild-audit.ts';
import { MESSAGE_REFERENCE_TYPES, readCreateMessageBody, readEditMessageBody } from './message-body.ts';
import { isForward, isSystemMessage } from './message-service.ts';
import { has, PERMISSIONS } from './permissions.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './rows.ts';
import { checkMessageStickers } from './sticker-store.ts';

/** JSON bodies stay under 1 MiB by validation; multipart bodies carry up to 10 files of 25 MiB. */
const MESSAGE_BODY_LIMIT = 10 * 25 * 1024 * 1024 + 1024 * 1024;

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  before: snowflake.optional(),
  after: snowflake.optional(),
  around: snowflake.optional(),
});

const bulkDeleteBody = z
  .object({
    message_ids: z.array(snowflake).min(2).max(100).optional(),
    // discord.js sends Discord's field name.
    messages: z.array(snowflake).min(2).max(100).optional(),
  })
  .refine((b) => b.message_ids !== undefined || b.messages !== undefined, {
    path: ['message_ids'],
    params: { code: 'BASE_TYPE_REQUIRED' },
    message: 'This field is required',
  });

/** Members who moderate the channel are not slowed down. */
const SLOWMODE_EXEMPT = [PERMISSIONS.MANAGE_MESSAGES, PERMISSIONS.MANAGE_CHANNELS, PERMISSIONS.BYPASS_SLOWMODE];
/** In a thread, its moderators too (Discord's rule). */
const THREAD_SLOWMODE_EXEMPT = [...SLOWMODE_EXEMPT, PERMISSIONS.MANAGE_THREADS];

export function messageRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, access, events, messages, audit } = deps;
  const { db } = services;

  /**
   * An edit's `attachments` lists what stays, in order: existing attachments by id, new relay uploads by
   * `upload_filename`, new inline files by their upload index. Absent = unchanged; new files always need their
   * entry (the pairing is as strict as on create).
   */
  async function editedAttachments(
    userId: string,
    channelAccess: ChannelAccess,
    row: MessageRow,
    refs: AttachmentRef[] | null | undefined,
    files: ReadonlyMap<string, StagedFile>,
  ): Promise<AttachmentView[] | undefined> {
    if ((refs === undefined || refs === null) && files.size === 0) return undefined;
    const existing = row.attachments;
    const list = refs ?? [];
    const adds = list.some((r) => r.upload_filename !== undefined || files.has(r.id));
    if (adds || files.size > 0) requireChannel(channelAccess, PERMISSIONS.ATTACH_FILES);
    return services.attachments.resolve(userId, channelAccess.channel.id, list, files, existing);
  }

  /**
   * The message a forward copies: the sender must read it where it is (the answers a read of it gets: unknown
   * channel, missing access, missing READ_MESSAGE_HISTORY, unknown message), and it must not be a system message.
   */
  async function forwardSource(
    ctx: { user: { id: string }; now: number },
    here: string,
    reference: { message_id: string; channel_id?: string | undefined },
  ): Promise<{ source: MessageRow; snapshot: Record<string, unknown> }> {
    const sourceAccess = await access.channelWith(
      reference.channel_id ?? here,
      ctx.user.id,
      ctx.now,
      PERMISSIONS.READ_MESSAGE_HISTORY,
    );
    const source = await messages.require(sourceAccess.channel.id, reference.message_id);
    if (isSystemMessage(source)) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_SYSTEM_MESSAGE');
    return { source, snapshot: await messages.snapshotOf(source) };
  }

  return [
    route({
      method: 'GET',
      path: '/channels/:channelId/messages',
      policy: 'user',
      rateLimit: limits.read('channels:messages'),
      query: listQuery,
      async handler(ctx) {
        const query = ctx.query;
        const cursors = [query.before, query.after, query.around].filter((c) => c !== undefined);
        if (cursors.length > 1)
          throw fieldError('before', 'CANNOT_SPECIFY_BOTH_BEFORE_AND_AFTER', 'Only one of before, after and around');
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        const channelId = channelAccess.channel.id;
        const select = `SELECT ${MESSAGE_COLUMNS} FROM messages msg WHERE msg.channel_id = $1`;
        let rows: MessageRow[];
        if (query.around) {
          const older = Math.ceil(query.limit / 2);
          const newer = query.limit - older;
          const [a, b] = await Promise.all([
            db.query<MessageRow>(`${select} AND msg.id <= $2 ORDER BY msg.id DESC LIMIT $3`, [
              channelId,
              query.around,
              older,
            ]),
            newer > 0
              ? db.query<MessageRow>(`${select} AND msg.id > $2 ORDER BY msg.id ASC LIMIT $3`, [
                  channelId,
                  query.around,
                  newer,
                ])
              : Promise.resolve([]),
          ]);
          rows = [...b.reverse(), ...a];
        } else if (query.after) {
          rows = (
            await db.query<MessageRow>(`${select} AND msg.id > $2 ORDER BY msg.id ASC LIMIT $3`, [
              channelId,
              query.after,
              query.limit,
            ])
          ).reverse();
        } else if (query.before) {
          rows = await db.query<MessageRow>(`${select} AND msg.id < $2 ORDER BY msg.id DESC LIMIT $3`, [
            channelId,
            query.before,
            query.limit,
          ]);
        } else {
          rows = await db.query<MessageRow>(`${select} ORDER BY msg.id DESC LIMIT $2`, [channelId, query.limit]);
        }
        return messages.render(rows, ctx.user.id);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/messages/:messageId',
      policy: 'user',
      rateLimit: limits.read('channels:messages'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        const row = await messages.require(channelAccess.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
        const [view] = await messages.render([row], ctx.user.id);
        return view;
      },
    }),

    route({
      method: 'POST',
      path: '/channels/:channelId/messages',
      policy: 'user',
      bodyKind: 'stream',
      bodyLimit: MESSAGE_BODY_LIMIT,
      rateLimit: limits.write('channels:messages'),
      // Who may post here is known from the path and the credential: decided before the body is read.
      preflight: (ctx) => access.channelOf(ctx, PERMISSIONS.SEND_MESSAGES),
      async handler(ctx) {
        const { body, files } = await readCreateMessageBody(ctx, services.objects);
        const channelAccess = ctx.preflight as ChannelAccess;
        const { channel, permissions } = channelAccess;
        if (body.embeds?.length) requireChannel(channelAccess, PERMISSIONS.EMBED_LINKS);
        const attachmentRefs = body.attachments ?? [];
        if (attachmentRefs.length > 0 || files.size > 0) requireChannel(channelAccess, PERMISSIONS.ATTACH_FILES);
        const forward = body.message_reference?.type === MESSAGE_REFERENCE_TYPES.FORWARD;
        if (forward) refuseForwardContent(body, files.size);
        else if (body.message_reference) requireChannel(channelAccess, PERMISSIONS.READ_MESSAGE_HISTORY);
        await access.refuseBlockedDm(channelAccess, ctx.user.id);
        if (
          channel.guild_id !== null &&
          channel.rate_limit_per_user > 0 &&
          !(channelAccess.thread ? THREAD_SLOWMODE_EXEMPT : SLOWMODE_EXEMPT).some((bit) => has(permissions, bit))
        ) {
          const decision = await services.rateLimiter.consume(
            `slowmode:${channel.id}:${ctx.user.id}`,
            1,
            channel.rate_limit_per_user * 1000,
            ctx.now,
          );
          if (!decision.allowed)
            throw new ApiError('SLOWMODE_RATE_LIMITED', {
              extra: { retry_after: Math.round(decision.retryAfterMs) / 1000 },
            });
        }
        const forwarded =
          forward && body.message_reference ? await forwardSource(ctx, channel.id, body.message_reference) : undefined;
        const stickerIds = await checkMessageStickers(db, channelAccess, ctx.user.id, body.sticker_ids ?? []);
        const stored =
          attachmentRefs.length > 0 || files.size > 0
            ? await services.attachments.resolve(ctx.user.id, channel.id, attachmentRefs, files)
            : [];
        return messages.create({
          channel,
          recipients: channelAccess.recipients,
          author: ctx.user,
          attachments: stored,
          content: body.content,
          embeds: body.embeds,
          tts: body.tts === true && has(permissions, PERMISSIONS.SEND_TTS_MESSAGES),
          flags: body.flags,
          nonce: body.nonce,
          messageReference: body.message_reference,
          allowedMentions: body.allowed_mentions,
          stickerIds,
          canMentionEveryone: has(permissions, PERMISSIONS.MENTION_EVERYONE),
          authorMember: channelAccess.guild?.member,
          extras: componentsExtras(ctx.user, body.components),
          forward: forwarded,
        });
      },
    }),

    route({
      method: 'PATCH',
      path: '/channels/:channelId/messages/:messageId',
      policy: 'user',
      bodyKind: 'stream',
      bodyLimit: MESSAGE_BODY_LIMIT,
      rateLimit: limits.write('channels:messages'),
      preflight: (ctx) => access.channelOf(ctx),
      async handler(ctx) {
        const { body, files } = await readEditMessageBody(ctx, services.objects);
        const channelAccess = ctx.preflight as ChannelAccess;
        const row = await messages.require(channelAccess.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
        if (row.author_id !== ctx.user.id || row.webhook_id !== null)
          throw new ApiError('CANNOT_EDIT_OTHER_USER_MESSAGE');
        if (isForward(row)) refuseForwardContent(body, files.size);
        // An edit that changes nothing (an empty body, or the same text and nothing else) is refused rather than
        // marking the message edited; a flags-only edit (discord.js's suppressEmbeds) is a change.
        if (
          (body.content === undefined || body.content === row.content) &&
          body.embeds === undefined &&
          (body.attachments === undefined || body.attachments === null) &&
          files.size === 0 &&
          (body.flags === undefined || body.flags === null) &&
          body.allowed_mentions === undefined &&
          body.components === undefined
        )
          throw new ApiError('MESSAGE_EDIT_CHANGES_NOTHING');
        if (body.embeds?.length) requireChannel(channelAccess, PERMISSIONS.EMBED_LINKS);
        const attachments = await editedAttachments(ctx.user.id, channelAccess, row, body.attachments, files);
        const edited = await messages.edit(
          channelAccess.channel,
          row,
          {
            ...(attachments ? { attachments } : {}),
            content: body.content,
            embeds: body.embeds,
            flags: body.flags,
            allowedMentions: body.allowed_mentions,
            canMentionEveryone: has(channelAccess.permissions, PERMISSIONS.MENTION_EVERYONE),
            extras: componentsExtras(ctx.user, body.components),
          },
          channelAccess.recipients,
        );
        await services.attachments.discard(row.channel_id, row.id, messages.droppedAttachments(row, edited));
        return edited;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/messages/:messageId',
      policy: 'user',
      rateLimit: limits.write('channels:messages'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const row = await messages.require(channelAccess.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
        const own = row.author_id === ctx.user.id && row.webhook_id === null;
        if (!own) requireChannel(channelAccess, PERMISSIONS.MANAGE_MESSAGES);
        const deleted = await db.query('DELETE FROM messages WHERE id = $1 RETURNING id', [row.id]);
        if (deleted.length === 0) throw new ApiError('UNKNOWN_MESSAGE');
        // The database queued the message's files; they go now unless a forward still shows them, and those of the
        // message a deleted forward showed, when that forward was what kept them.
        await services.attachments.deleteDiscarded(withForwardSources([{ ...row, forward: isForward(row) }]));
        // Discord logs a deletion by someone other than the author only; the target is the author.
        const guildId = channelAccess.channel.guild_id;
        if (!own && guildId !== null)
          await audit.record({
            guildId,
            action: AUDIT_LOG_EVENTS.MESSAGE_DELETE,
            userId: ctx.user.id,
            targetId: row.author_id ?? row.webhook_id,
            options: { channel_id: channelAccess.channel.id, count: '1' },
            reason: auditReason(ctx.request.headers),
          });
        await events.channel('MESSAGE_DELETE', channelAccess, { id: row.id });
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/channels/:channelId/messages/bulk-delete',
      policy: 'user',
      rateLimit: limits.write('channels:messages:bulk'),
      body: bulkDeleteBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        if (!channelAccess.guild) throw new ApiError('MISSING_PERMISSIONS');
        requireChannel(channelAccess, PERMISSIONS.MANAGE_MESSAGES);
        const ids = [...new Set(ctx.body.message_ids ?? ctx.body.messages ?? [])];
        const deleted = await db.query<{ id: string; reference_message_id: string | null; forward: boolean }>(
          `DELETE FROM messages WHERE channel_id = $1 AND id = ANY($2::bigint[])
           RETURNING id, reference_message_id, extras -> 'message_snapshots' IS NOT NULL AS forward`,
          [channelAccess.channel.id, ids],
        );
        if (deleted.length > 0) {
          await services.attachments.deleteDiscarded(withForwardSources(deleted));
          await audit.record({
            guildId: channelAccess.guild.guildId,
            action: AUDIT_LOG_EVENTS.MESSAGE_BULK_DELETE,
            userId: ctx.user.id,
            targetId: channelAccess.channel.id,
            options: { count: String(deleted.length) },
            reason: auditReason(ctx.request.headers),
          });
          await events.channel('MESSAGE_DELETE_BULK', channelAccess, { ids: deleted.map((r) => r.id) });
        }
        return undefined;
      },
    }),
  ];
}

/**
 * The ids of deleted messages whose queued files may go now: theirs, and those of the messages the forwards among
 * them showed (files a source lost stay queued while a forward of it exists).
 */
function withForwardSources(
  deleted: readonly { id: string; reference_message_id: string | null; forward: boolean }[],
): string[] {
  const ids = new Set<string>();
  for (const message of deleted) {
    ids.add(message.id);
    if (message.forward && message.reference_message_id) ids.add(message.reference_message_id);
  }
  return [...ids];
}

/** A forward carries only its snapshot: words or files of its own go in a message of their own. */
function refuseForwardContent(
  body: {
    content?: string | null | undefined;
    embeds?: readonly unknown[] | null | undefined;
    attachments?: readonly unknown[] | null | undefined;
    sticker_ids?: readonly unknown[] | null | undefined;
    components?: readonly unknown[] | null | undefined;
  },
  fileCount: number,
): void {
  const errors: FieldError[] = [];
  const message = 'A forwarded message cannot have content of its own';
  if (body.content) errors.push({ path: 'content', code: 'FORWARDED_MESSAGE_HAS_CONTENT', message });
  for (const key of ['embeds', 'attachments', 'sticker_ids', 'components'] as const)
    if ((body[key]?.length ?? 0) > 0) errors.push({ path: key, code: 'FORWARDED_MESSAGE_HAS_CONTENT', message });
  if (fileCount > 0 && !errors.some((e) => e.path === 'attachments'))
    errors.push({ path: 'attachments', code: 'FORWARDED_MESSAGE_HAS_CONTENT', message });
  if (errors.length > 0) throw formError(errors);
}

/** Components ride on messages of bots (and webhooks, elsewhere); a person sending them gets a 400. */
function componentsExtras(
  author: { isBot: boolean },
  components: readonly unknown[] | null | undefined,
): Record<string, unknown> | undefined {
  if (components === undefined || components === null) return undefined;
  if (!author.isBot && components.length > 0)
    throw fieldError('components', 'INVALID_FORMAT', 'Only bots and webhooks can send components');
  return { components };
}
