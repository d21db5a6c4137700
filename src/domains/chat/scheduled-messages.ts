import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import type { Logger } from '../../platform/log.ts';
import { PeriodicTask } from '../../platform/periodic-task.ts';
import { type Access, type ChannelAccess, pathId, requireChannel } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { createMessageSchema } from './message-body.ts';
import { holdsMessages, type MessageService } from './message-service.ts';
import { has, PERMISSIONS } from './permissions.ts';
import { iso } from './rows.ts';
import type { ScheduledMessageRow, ScheduledMessageStore, ScheduledPayload } from './scheduled-message-store.ts';
import type { ChatStore } from './store.ts';

/** Messages one user may have waiting, all channels together. */
export const MAX_SCHEDULED_MESSAGES = 100;
/** How far ahead a message may be scheduled. */
export const MAX_SCHEDULE_AHEAD_MS = 365 * 24 * 3600_000;
/** Due messages one delivery run posts; the rest wait for the next run. */
const DELIVERY_BATCH = 50;
/** How long a delivery holds the messages it claimed; a process that died lets another take them after this. */
const CLAIM_MS = 60_000;

/** The body of a message kept for later: JSON only (no files), what a plain message takes besides. */
const payloadSchema = createMessageSchema.pick({
  content: true,
  embeds: true,
  allowed_mentions: true,
  message_reference: true,
  flags: true,
  tts: true,
});
const scheduledAt = z.iso.datetime({ offset: true });
const createBody = payloadSchema.extend({ scheduled_at: scheduledAt });
const editBody = payloadSchema.extend({ scheduled_at: scheduledAt.optional() });

/** A scheduled message as its routes show it to its author. */
export interface ScheduledMessageView {
  id: string;
  channel_id: string;
  scheduled_at: string;
  created_at: string;
  content: string;
  embeds: unknown[];
  allowed_mentions: unknown;
  message_reference: unknown;
  flags: number;
  tts: boolean;
  /** Why the delivery did not post it (an error code of docs/errors.md); null while it waits. */
  failure: string | null;
}

function view(row: ScheduledMessageRow): ScheduledMessageView {
  const p = row.payload;
  return {
    id: row.id,
    channel_id: row.channel_id,
    scheduled_at: iso(row.scheduled_at) as string,
    created_at: iso(row.created_at) as string,
    content: p.content ?? '',
    embeds: p.embeds ?? [],
    allowed_mentions: p.allowed_mentions ?? null,
    message_reference: p.message_reference ?? null,
    flags: p.flags ?? 0,
    tts: p.tts === true,
    failure: row.failure,
  };
}

/** The checks a message gets when it is posted, made early so a schedule that cannot be posted is refused now. */
function checkPostable(channelAccess: ChannelAccess, payload: ScheduledPayload): void {
  if (!holdsMessages(channelAccess.channel)) throw new ApiError('CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL');
  if ((payload.content ?? '').trim() === '' && (payload.embeds ?? []).length === 0)
    throw new ApiError('CANNOT_SEND_EMPTY_MESSAGE');
  if ((payload.embeds ?? []).length > 0) requireChannel(channelAccess, PERMISSIONS.EMBED_LINKS);
  if (payload.message_reference) requireChannel(channelAccess, PERMISSIONS.READ_MESSAGE_HISTORY);
}

function payloadOf(body: z.infer<typeof payloadSchema>): ScheduledPayload {
  return {
    content: body.content ?? null,
    embeds: body.embeds ?? null,
    allowed_mentions: body.allowed_mentions ?? null,
    message_reference: body.message_reference ?? null,
    flags: body.flags ?? null,
    tts: body.tts ?? null,
  };
}

/** A time in the future and within `MAX_SCHEDULE_AHEAD_MS`, or a 400 on `scheduled_at`. */
function checkTime(value: string, now: number): Date {
  const at = new Date(value);
  if (at.getTime() <= now || at.getTime() - now > MAX_SCHEDULE_AHEAD_MS)
    throw fieldError('scheduled_at', 'INVALID_FORMAT', 'The time must be in the future and at most 365 days ahead');
  return at;
}

/** Scheduled messages (docs/chat.md#scheduled-messages): the author's own, per channel. */
export function scheduledMessageRoutes(deps: ChatDeps, scheduled: ScheduledMessageStore): AnyRoute[] {
  const { services, access } = deps;
  const unknown = () => new ApiError('UNKNOWN_SCHEDULED_MESSAGE');

  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/scheduled-messages',
      policy: 'user',
      body: createBody,
      rateLimit: limits.write('channels:scheduled-messages'),
      // Who may post here is known from the path and the credential: decided before the body is read.
      preflight: (ctx) => access.channelOf(ctx, PERMISSIONS.SEND_MESSAGES),
      async handler(ctx) {
        const channelAccess = ctx.preflight as ChannelAccess;
        const payload = payloadOf(ctx.body);
        checkPostable(channelAccess, payload);
        const at = checkTime(ctx.body.scheduled_at, ctx.now);
        if ((await scheduled.countPending(ctx.user.id)) >= MAX_SCHEDULED_MESSAGES)
          throw new ApiError('MAX_SCHEDULED_MESSAGES');
        const row = await scheduled.insert(
          {
            id: services.ids.next(),
            channel_id: channelAccess.channel.id,
            author_id: ctx.user.id,
            scheduled_at: at,
            payload,
          },
          new Date(ctx.now),
        );
        return view(row);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/scheduled-messages',
      policy: 'user',
      rateLimit: limits.read('channels:scheduled-messages'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        return (await scheduled.list(ctx.user.id, channelAccess.channel.id)).map(view);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/scheduled-messages/:scheduledId',
      policy: 'user',
      rateLimit: limits.read('channels:scheduled-messages'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const id = pathId(ctx.params.scheduledId, 'UNKNOWN_SCHEDULED_MESSAGE');
        const row = await scheduled.find(ctx.user.id, channelAccess.channel.id, id);
        if (!row) throw unknown();
        return view(row);
      },
    }),

    route({
      method: 'PATCH',
      path: '/channels/:channelId/scheduled-messages/:scheduledId',
      policy: 'user',
      body: editBody,
      rateLimit: limits.write('channels:scheduled-messages'),
      preflight: (ctx) => access.channelOf(ctx, PERMISSIONS.SEND_MESSAGES),
      async handler(ctx) {
        const channelAccess = ctx.preflight as ChannelAccess;
        const id = pathId(ctx.params.scheduledId, 'UNKNOWN_SCHEDULED_MESSAGE');
        const row = await scheduled.find(ctx.user.id, channelAccess.channel.id, id);
        if (!row) throw unknown();
        // Fields left out keep their value; `null` clears one.
        const given = ctx.body as Record<string, unknown>;
        const merged: ScheduledPayload = { ...row.payload };
        for (const key of Object.keys(payloadSchema.shape) as (keyof ScheduledPayload)[])
          if (key in given) (merged as Record<string, unknown>)[key] = given[key] ?? null;
        checkPostable(channelAccess, merged);
        const at = ctx.body.scheduled_at ? checkTime(ctx.body.scheduled_at, ctx.now) : row.scheduled_at;
        // A failed message edited waits again: it counts against the cap once more.
        if (row.failure !== null && (await scheduled.countPending(ctx.user.id)) >= MAX_SCHEDULED_MESSAGES)
          throw new ApiError('MAX_SCHEDULED_MESSAGES');
        const updated = await scheduled.update(row.id, { scheduled_at: at, payload: merged });
        if (!updated) throw unknown(); // delivered or cancelled in the meantime
        return view(updated);
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/scheduled-messages/:scheduledId',
      policy: 'user',
      rateLimit: limits.write('channels:scheduled-messages'),
      async handler(ctx) {
        // Cancelling needs no access to the channel any more: an author who lost it can still clear their own.
        pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL');
        const id = pathId(ctx.params.scheduledId, 'UNKNOWN_SCHEDULED_MESSAGE');
        if (!(await scheduled.delete(id, ctx.user.id))) throw unknown();
        return undefined;
      },
    }),
  ];
}

/**
 * Posts scheduled messages when their time comes, as their author, with the permissions the author holds then
 * (docs/chat.md#scheduled-messages). Every process may run it: each due message is taken by one. A message that
 * can no longer be posted (the channel is gone, the author lost SEND_MESSAGES, a block in a DM) stays listed with
 * the error code as `failure`, for its author to edit or cancel.
 */
export class ScheduledMessageDelivery {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: {
      scheduled: ScheduledMessageStore;
      store: ChatStore;
      access: Access;
      messages: MessageService;
      ids: SnowflakeGenerator;
      clock: Clock;
      log: Logger;
    },
    intervalMs: number,
  ) {
    this.task = new PeriodicTask({
      intervalMs,
      run: async () => {
        await this.deliverDue();
      },
      onError: (error) => deps.log.error('scheduled message delivery failed', { error: (error as Error).message }),
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Posts what is due now; answers how many were posted. */
  async deliverDue(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.scheduled.claimDue(new Date(now), new Date(now + CLAIM_MS), DELIVERY_BATCH);
    let posted = 0;
    for (const row of due) {
      const messageId = await this.deps.scheduled.messageIdFor(row.id, this.deps.ids.next());
      if (!messageId) continue; // cancelled between the claim and now
      try {
        await this.post(row, messageId, now);
        posted++;
      } catch (error) {
        // An earlier attempt posted it and died before removing the row: it is delivered.
        if (isUniqueViolation(error)) {
          await this.deps.scheduled.delivered(row.id);
          continue;
        }
        // An answer the route would give (no access, a block, the channel gone) is recorded for the author; anything
        // else is logged too, with no detail kept on the row.
        const code = error instanceof ApiError ? error.code : 'INTERNAL_SERVER_ERROR';
        if (!(error instanceof ApiError))
          this.deps.log.error('scheduled message not posted', { id: row.id, error: (error as Error).message });
        await this.deps.scheduled.recordFailure(row.id, code);
        continue;
      }
      await this.deps.scheduled.delivered(row.id);
    }
    return posted;
  }

  private async post(row: ScheduledMessageRow, messageId: string, now: number): Promise<void> {
    const { store, access, messages } = this.deps;
    const author = await store.user(row.author_id);
    if (!author) throw new ApiError('UNKNOWN_USER');
    const channelAccess = await access.channelWith(row.channel_id, author.id, now, PERMISSIONS.SEND_MESSAGES);
    const payload = row.payload;
    checkPostable(channelAccess, payload);
    await access.refuseBlockedDm(channelAccess, author.id);
    const { channel } = channelAccess;
    const body = payloadSchema.parse(payload);
    await messages.create({
      id: messageId,
      channel,
      recipients: channelAccess.recipients,
      author,
      content: body.content,
      embeds: body.embeds,
      tts: body.tts === true && has(channelAccess.permissions, PERMISSIONS.SEND_TTS_MESSAGES),
      flags: body.flags,
      messageReference: body.message_reference,
      allowedMentions: body.allowed_mentions,
      canMentionEveryone: has(channelAccess.permissions, PERMISSIONS.MENTION_EVERYONE),
      authorMember: channelAccess.guild?.member,
    });
  }
}
