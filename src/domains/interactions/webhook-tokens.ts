import { ApiError } from '../../http/errors.ts';
import type { RequestContext } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { readMessageRequest } from '../attachments/message-request.ts';
import type { MessageView } from '../chat/views.ts';
import type { InteractionsModule } from './module.ts';
import { isInteractionToken, responseMessageSchema } from './service.ts';
import type { InteractionRow } from './store.ts';

/**
 * The webhook-token routes (`/webhooks/{id}/{token}…`) when the token is an interaction's: follow-ups and
 * edits of an interaction's responses for 15 minutes, addressed by the application id (docs/bots.md).
 */
export class InteractionWebhooks {
  constructor(private readonly module: InteractionsModule) {}

  static matches(ctx: Pick<RequestContext, 'params'>): boolean {
    return isInteractionToken(ctx.params.token ?? '');
  }

  async interaction(ctx: RequestContext): Promise<InteractionRow> {
    const row = await this.module.service.byToken(ctx.params.token ?? '', undefined, ctx.now);
    if (row.application_id !== ctx.params.webhookId) throw new ApiError('UNKNOWN_WEBHOOK');
    return row;
  }

  async followUp(ctx: RequestContext, row: InteractionRow): Promise<MessageView> {
    const request = await readMessageRequest(ctx, this.module.objects);
    return this.module.service.followUp(row, validate(responseMessageSchema, request.payload), request.files);
  }

  get(ctx: RequestContext, row: InteractionRow): Promise<MessageView> {
    return this.module.service.getMessage(row, ctx.params.messageId ?? '');
  }

  async edit(ctx: RequestContext, row: InteractionRow): Promise<MessageView> {
    const request = await readMessageRequest(ctx, this.module.objects);
    return this.module.service.editMessage(row, ctx.params.messageId ?? '', request.payload, request.files);
  }

  delete(ctx: RequestContext, row: InteractionRow): Promise<void> {
    return this.module.service.deleteMessage(row, ctx.params.messageId ?? '');
  }
}
