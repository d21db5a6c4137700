import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { snowflakeField } from '../../http/fields.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { pathId } from '../chat/access.ts';

const ringBody = z.object({ recipients: z.array(snowflakeField).max(50).nullish() }).nullish();

/** Discord's call routes for DM and group-DM channels (docs/voice.md, "DM and group-DM calls"). */
export function callRoutes(services: Pick<AppServices, 'calls'>): AnyRoute[] {
  const rateLimit = { bucket: 'channels:call:write', limit: 20, windowSeconds: 10 };
  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/call/ring',
      policy: 'user-only',
      rateLimit,
      body: ringBody,
      async handler(ctx) {
        const channelId = pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL');
        await services.calls.ring(channelId, ctx.user.id, ctx.body?.recipients);
        return undefined;
      },
    }),
    route({
      method: 'POST',
      path: '/channels/:channelId/call/stop-ringing',
      policy: 'user-only',
      rateLimit,
      body: ringBody,
      async handler(ctx) {
        const channelId = pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL');
        await services.calls.stopRinging(channelId, ctx.user.id, ctx.body?.recipients);
        return undefined;
      },
    }),
  ];
}
