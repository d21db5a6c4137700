import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { snowflakeField } from '../../http/fields.ts';
import { type AnyRoute, type RequestContext, route } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { partialUser } from '../../identity/user-record.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import { readMessageRequest } from '../attachments/message-request.ts';
import { pathId } from '../chat/access.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from '../chat/guild-audit.ts';
import { createMessageSchema, editMessageSchema } from '../chat/message-body.ts';
import { PERMISSIONS } from '../chat/permissions.ts';
import { type ChannelRow, isThread } from '../chat/rows.ts';
import type { InteractionRow } from '../interactions/store.ts';
import { InteractionWebhooks } from '../interactions/webhook-tokens.ts';
import { MAX_WEBHOOKS_PER_CHANNEL, type WebhookRow, WebhookStore } from './webhook-store.ts';

const nameField = z.string().trim().min(1).max(80);
const createBody = z.object({
  name: nameField,
  avatar: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
});
const patchBody = z.object({
  name: nameField.optional(),
  avatar: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  channel_id: snowflakeField.optional(),
});
const tokenPatchBody = patchBody.omit({ channel_id: true });
const executeExtras = z.object({
  username: z.string().trim().min(1).max(80).optional(),
  avatar_url: z.string().max(2048).optional(),
});
const executeQuery = z.object({
  wait: z.enum(['true', 'false', '1', '0']).optional(),
  thread_id: z.string().optional(),
});

/** The execution URL is the secret: keep it out of caches and referrers of whatever the client shows next. */
function secretHeaders(ctx: RequestContext): void {
  ctx.reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
}

/** A webhook's fields as its guild audit log entries show them (Discord's keys). */
type WebhookAuditFields = { type: 1; name: string; channel_id: string; avatar_hash: string | null };

function webhookAuditFields(row: WebhookRow): WebhookAuditFields {
  return { type: 1, name: row.name, channel_id: row.channel_id, avatar_hash: row.avatar };
}
const WEBHOOK_AUDIT_KEYS = [
  'type',
  'name',
  'channel_id',
  'avatar_hash',
] as const satisfies readonly (keyof WebhookAuditFields)[];

/**
 * Who changed a webhook through the management routes, for the guild audit log; the token routes carry no
 * identity and are not logged (Discord's way).
 */
interface WebhookActor {
  userId: string;
  reason: string | null;
}

function actorOf(ctx: RequestContext): WebhookActor {
  return { userId: ctx.user.id, reason: auditReason(ctx.request.headers) };
}

/** What `webhookRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type WebhookRoutesDeps = Pick<
  AppServices,
  'attachments' | 'chatCore' | 'config' | 'db' | 'ids' | 'interactions' | 'media' | 'messages' | 'objects' | 'users'
>;

/** Webhooks (docs/media.md#webhooks-srcdomainswebhooks): management with MANAGE_WEBHOOKS; execution by the token in the URL only. */
export function webhookRoutes(services: WebhookRoutesDeps): AnyRoute[] {
  const { db, ids, chatCore, messages, attachments, media } = services;
  const interactionTokens = new InteractionWebhooks(services.interactions);
  const { access, events, store: chatStore, audit } = chatCore;

  /** `?thread_id=`: a thread of the webhook's channel (Discord's rule); anything else → UNKNOWN_CHANNEL. */
  async function threadOf(home: ChannelRow, raw: string): Promise<ChannelRow> {
    const thread = await chatStore.channel(pathId(raw, 'UNKNOWN_CHANNEL'));
    if (!thread || !isThread(thread) || thread.parent_id !== home.id) throw new ApiError('UNKNOWN_CHANNEL');
    return thread;
  }
  const webhooks = new WebhookStore(db);

  async function view(row: WebhookRow, options: { token?: string; withUser?: boolean } = {}) {
    const creator =
      options.withUser !== false && row.creator_id ? await services.users.findById(row.creator_id) : undefined;
    return {
      id: row.id,
      type: 1,
      guild_id: row.guild_id,
      channel_id: row.channel_id,
      ...(options.withUser !== false ? { user: creator ? partialUser(creator) : null } : {}),
      name: row.name,
      avatar: row.avatar,
      application_id: null,
      // The execute URL, like the token itself shown only when the token is known (the create response).
      ...(options.token
        ? { token: options.token, url: `${services.config.publicUrl}/v1/webhooks/${row.id}/${options.token}` }
        : {}),
    };
  }

  async function announce(row: Pick<WebhookRow, 'guild_id' | 'channel_id'>) {
    await events.channelViewers('WEBHOOKS_UPDATE', row.guild_id, row.channel_id, {
      guild_id: row.guild_id,
      channel_id: row.channel_id,
    });
  }

  /** MANAGE_WEBHOOKS in the webhook's channel, for the management routes. */
  async function managed(ctx: RequestContext): Promise<WebhookRow> {
    const row = await webhooks.byId(pathId(ctx.params.webhookId, 'UNKNOWN_WEBHOOK'));
    if (!row) throw new ApiError('UNKNOWN_WEBHOOK');
    await access.channelWith(row.channel_id, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_WEBHOOKS);
    return row;
  }

  async function byToken(ctx: RequestContext): Promise<WebhookRow> {
    secretHeaders(ctx);
    const id = pathId(ctx.params.webhookId, 'UNKNOWN_WEBHOOK');
    const token = ctx.params.token ?? '';
    if (token.length === 0 || token.length > 256) throw new ApiError('UNKNOWN_WEBHOOK');
    const row = await webhooks.byToken(id, token);
    if (!row) throw new ApiError('UNKNOWN_WEBHOOK');
    return row;
  }

  async function applyPatch(
    row: WebhookRow,
    body: { name?: string | undefined; avatar?: string | null | undefined; channel_id?: string | undefined },
    actor?: WebhookActor,
  ) {
    const name = body.name ?? row.name;
    const avatar =
      body.avatar === undefined ? row.avatar : await media.storeUserImage('avatars', row.id, body.avatar, 'avatar');
    const channelId = body.channel_id ?? row.channel_id;
    const [updated] = await db.query<WebhookRow>(
      'UPDATE webhooks SET name = $2, avatar = $3, channel_id = $4 WHERE id = $1 RETURNING id, guild_id, channel_id, creator_id, name, avatar, token_hash',
      [row.id, name, avatar, channelId],
    );
    if (!updated) throw new ApiError('UNKNOWN_WEBHOOK');
    const changes = auditChanges(webhookAuditFields(row), webhookAuditFields(updated), WEBHOOK_AUDIT_KEYS);
    if (actor && changes.length > 0)
      await audit.record({
        guildId: updated.guild_id,
        action: AUDIT_LOG_EVENTS.WEBHOOK_UPDATE,
        userId: actor.userId,
        targetId: updated.id,
        changes,
        reason: actor.reason,
      });
    await announce(updated);
    if (updated.channel_id !== row.channel_id) await announce(row);
    return updated;
  }

  async function remove(row: WebhookRow, actor?: WebhookActor) {
    const deleted = await db.query('DELETE FROM webhooks WHERE id = $1 RETURNING id', [row.id]);
    if (deleted.length === 0) throw new ApiError('UNKNOWN_WEBHOOK');
    if (actor)
      await audit.record({
        guildId: row.guild_id,
        action: AUDIT_LOG_EVENTS.WEBHOOK_DELETE,
        userId: actor.userId,
        targetId: row.id,
        changes: auditChanges(webhookAuditFields(row), undefined, WEBHOOK_AUDIT_KEYS),
        reason: actor.reason,
      });
    await announce(row);
  }

  async function webhookMessage(ctx: RequestContext, row: WebhookRow) {
    const message = await messages.find(row.channel_id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
    if (!message || message.webhook_id !== row.id) throw new ApiError('UNKNOWN_MESSAGE');
    const channel = await chatStore.channel(row.channel_id);
    if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
    return { message, channel };
  }

  // Token routes are limited per webhook (the id in the path): they carry no identity.
  const tokenLimit = { bucket: 'webhook:token::webhook_id', limit: 60, windowSeconds: 60, keyParams: ['webhookId'] };
  const executeLimit = {
    bucket: 'webhook:execute::webhook_id',
    limit: 60,
    windowSeconds: 60,
    keyParams: ['webhookId'],
    exemptFromGlobal: true,
  };

  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/webhooks',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:create', limit: 10, windowSeconds: 60 },
      body: createBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.MANAGE_WEBHOOKS);
        const channel = channelAccess.channel;
        if (channel.guild_id === null || channel.type !== 0) throw new ApiError('UNKNOWN_CHANNEL');
        const existing = await db.query<{ n: string }>('SELECT count(*) AS n FROM webhooks WHERE channel_id = $1', [
          channel.id,
        ]);
        if (Number(existing[0]?.n ?? 0) >= MAX_WEBHOOKS_PER_CHANNEL) throw new ApiError('MAX_WEBHOOKS_PER_CHANNEL');
        const id = ids.next();
        const token = randomBase62(64);
        const avatar = ctx.body.avatar ? await media.storeUserImage('avatars', id, ctx.body.avatar, 'avatar') : null;
        const [row] = await db.query<WebhookRow>(
          `INSERT INTO webhooks (id, guild_id, channel_id, creator_id, name, avatar, token_hash) VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, guild_id, channel_id, creator_id, name, avatar, token_hash`,
          [id, channel.guild_id, channel.id, ctx.user.id, ctx.body.name, avatar, digest(token)],
        );
        if (!row) throw new Error('webhook insert returned nothing');
        await audit.record({
          guildId: row.guild_id,
          action: AUDIT_LOG_EVENTS.WEBHOOK_CREATE,
          userId: ctx.user.id,
          targetId: row.id,
          changes: auditChanges(undefined, webhookAuditFields(row), WEBHOOK_AUDIT_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        await announce(row);
        return view(row, { token });
      },
    }),
    route({
      method: 'GET',
      path: '/channels/:channelId/webhooks',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:read', limit: 100, windowSeconds: 10 },
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.MANAGE_WEBHOOKS);
        return Promise.all((await webhooks.inChannel(channelAccess.channel.id)).map((row) => view(row)));
      },
    }),
    route({
      method: 'GET',
      path: '/guilds/:guildId/webhooks',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:read', limit: 100, windowSeconds: 10 },
      async handler(ctx) {
        const guild = await access.guildWith(
          pathId(ctx.params.guildId, 'UNKNOWN_GUILD'),
          ctx.user.id,
          ctx.now,
          PERMISSIONS.MANAGE_WEBHOOKS,
        );
        return Promise.all((await webhooks.inGuild(guild.guild.id)).map((row) => view(row)));
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:webhookId',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:read', limit: 100, windowSeconds: 10 },
      async handler(ctx) {
        return view(await managed(ctx));
      },
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:webhookId',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:write', limit: 20, windowSeconds: 10 },
      body: patchBody,
      async handler(ctx) {
        const row = await managed(ctx);
        if (ctx.body.channel_id && ctx.body.channel_id !== row.channel_id) {
          const target = await access.channelWith(
            pathId(ctx.body.channel_id, 'UNKNOWN_CHANNEL'),
            ctx.user.id,
            ctx.now,
            PERMISSIONS.MANAGE_WEBHOOKS,
          );
          if (target.channel.guild_id !== row.guild_id || target.channel.type !== 0)
            throw new ApiError('UNKNOWN_CHANNEL');
        }
        return view(await applyPatch(row, ctx.body, actorOf(ctx)));
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:webhookId',
      policy: 'user',
      rateLimit: { bucket: 'webhooks:write', limit: 20, windowSeconds: 10 },
      async handler(ctx) {
        await remove(await managed(ctx), actorOf(ctx));
        return undefined;
      },
    }),

    // Token routes: credential-free, the Authorization header is never read (docs/conventions.md#policies).
    route({
      method: 'GET',
      path: '/webhooks/:webhookId/:token',
      policy: 'credential-free',
      rateLimit: tokenLimit,
      async handler(ctx) {
        return view(await byToken(ctx), { withUser: false });
      },
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:webhookId/:token',
      policy: 'credential-free',
      rateLimit: tokenLimit,
      body: tokenPatchBody,
      async handler(ctx) {
        return view(await applyPatch(await byToken(ctx), ctx.body), { withUser: false });
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:webhookId/:token',
      policy: 'credential-free',
      rateLimit: tokenLimit,
      async handler(ctx) {
        await remove(await byToken(ctx));
        return undefined;
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:webhookId/:token',
      policy: 'credential-free',
      bodyKind: 'stream',
      bodyLimit: 11 * 25 * 1024 * 1024,
      rateLimit: executeLimit,
      query: executeQuery,
      // The token is checked before the (up to 275 MiB) body is read.
      preflight: (ctx) => (InteractionWebhooks.matches(ctx) ? interactionTokens.interaction(ctx) : byToken(ctx)),
      async handler(ctx) {
        if (InteractionWebhooks.matches(ctx)) return interactionTokens.followUp(ctx, ctx.preflight as InteractionRow);
        const row = ctx.preflight as WebhookRow;
        const request = await readMessageRequest(ctx, services.objects);
        const body = validate(createMessageSchema, request.payload);
        const extras = validate(executeExtras, request.payload);
        const home = await chatStore.channel(row.channel_id);
        if (!home) throw new ApiError('UNKNOWN_WEBHOOK');
        const channel = ctx.query.thread_id === undefined ? home : await threadOf(home, ctx.query.thread_id);
        const stored = await attachments.resolve(
          row.creator_id ?? row.id,
          channel.id,
          (body.attachments ?? []).filter((a) => a.upload_filename === undefined),
          request.files,
        );
        const message = await messages.create({
          channel,
          author: null,
          webhook: { id: row.id, name: extras.username ?? row.name, avatar: row.avatar },
          content: body.content,
          embeds: body.embeds,
          attachments: stored,
          tts: body.tts,
          flags: body.flags,
          nonce: body.nonce,
          allowedMentions: body.allowed_mentions,
          canMentionEveryone: true,
          ...(body.components ? { extras: { components: body.components } } : {}),
        });
        const wait = ctx.query.wait === 'true' || ctx.query.wait === '1';
        return wait ? message : undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:webhookId/:token/messages/:messageId',
      policy: 'credential-free',
      rateLimit: tokenLimit,
      async handler(ctx) {
        if (InteractionWebhooks.matches(ctx))
          return interactionTokens.get(ctx, await interactionTokens.interaction(ctx));
        const { message } = await webhookMessage(ctx, await byToken(ctx));
        const [rendered] = await messages.render([message], undefined);
        return rendered;
      },
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:webhookId/:token/messages/:messageId',
      policy: 'credential-free',
      bodyKind: 'stream',
      bodyLimit: 11 * 25 * 1024 * 1024,
      rateLimit: tokenLimit,
      preflight: (ctx) => (InteractionWebhooks.matches(ctx) ? interactionTokens.interaction(ctx) : byToken(ctx)),
      async handler(ctx) {
        if (InteractionWebhooks.matches(ctx)) return interactionTokens.edit(ctx, ctx.preflight as InteractionRow);
        const row = ctx.preflight as WebhookRow;
        const { message, channel } = await webhookMessage(ctx, row);
        const request = await readMessageRequest(ctx, services.objects);
        const body = validate(editMessageSchema, request.payload);
        // As a user's edit: `attachments` lists what stays (existing ids) and pairs new files by upload index.
        const refs = body.attachments ?? undefined;
        const kept =
          refs !== undefined || request.files.size > 0
            ? await attachments.resolve(
                row.creator_id ?? row.id,
                channel.id,
                (refs ?? []).filter((a) => a.upload_filename === undefined),
                request.files,
                message.attachments,
              )
            : undefined;
        const edited = await messages.edit(channel, message, {
          content: body.content,
          embeds: body.embeds,
          flags: body.flags,
          allowedMentions: body.allowed_mentions,
          canMentionEveryone: true,
          ...(body.components ? { extras: { components: body.components } } : {}),
          ...(kept ? { attachments: kept } : {}),
        });
        await attachments.discard(message.channel_id, message.id, messages.droppedAttachments(message, edited));
        return edited;
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:webhookId/:token/messages/:messageId',
      policy: 'credential-free',
      rateLimit: tokenLimit,
      async handler(ctx) {
        if (InteractionWebhooks.matches(ctx)) {
          await interactionTokens.delete(ctx, await interactionTokens.interaction(ctx));
          return undefined;
        }
        const { message, channel } = await webhookMessage(ctx, await byToken(ctx));
        await db.query('DELETE FROM messages WHERE id = $1', [message.id]);
        await attachments.deleteDiscarded([message.id]);
        await events.channel('MESSAGE_DELETE', { channel, recipients: undefined }, { id: message.id });
        return undefined;
      },
    }),
  ];
}
