import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { requireChannel } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { PERMISSIONS } from './permissions.ts';
import { CHANNEL_TYPES } from './rows.ts';
import { memberView } from './views.ts';

export function typingRoutes(deps: ChatDeps): AnyRoute[] {
  const { access, events } = deps;
  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/typing',
      policy: 'user',
      rateLimit: limits.write('channels:typing'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        if (channel.type === CHANNEL_TYPES.GUILD_CATEGORY || channel.type === CHANNEL_TYPES.GUILD_VOICE)
          throw new ApiError('CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL');
        requireChannel(channelAccess, PERMISSIONS.SEND_MESSAGES);
        // TYPING_START is one of the few places with Unix seconds (docs/conventions.md#ids-and-time).
        const member = channelAccess.guild?.member;
        const payload = {
          user_id: ctx.user.id,
          timestamp: Math.floor(ctx.now / 1000),
          ...(member ? { member: memberView(member, ctx.user) } : {}),
        };
        await events.channel('TYPING_START', channelAccess, payload);
        return undefined;
      },
    }),
  ];
}
