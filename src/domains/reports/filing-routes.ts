import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { snowflakeField } from '../../http/fields.ts';
import { type AnyRoute, type RateLimitSpec, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import { PERMISSIONS } from '../chat/permissions.ts';
import { REPORT_CATEGORIES, REPORT_TEXT_MAX, type ReportSnapshot, type ReportStore } from './report-store.ts';
import { reporterReportView } from './report-views.ts';

/** One bucket for every kind of report: filing is rare, and a flood of them is abuse of its own. */
const FILING_LIMIT: RateLimitSpec = { bucket: 'reports:create', limit: 10, windowSeconds: 60 };

const common = {
  // A string first, so a missing category is BASE_TYPE_REQUIRED and only a wrong one INVALID_FORMAT.
  category: z.string().pipe(z.enum(REPORT_CATEGORIES)),
  description: z
    .string()
    .max(REPORT_TEXT_MAX)
    .nullish()
    .transform((v) => (v === '' || v === undefined ? null : v)),
};

/** What `reportFilingRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type ReportFilingRoutesDeps = Pick<AppServices, 'chatCore' | 'db' | 'ids' | 'users'>;

/**
 * Reports to the instance's admins (issue 16, docs/safety.md): a message the reporter can read, another
 * user, or a guild the reporter belongs to. The target is snapshotted now, so deleting it later keeps the
 * evidence. A second report on a target the reporter already has an open report on answers that one.
 */
export function reportFilingRoutes(services: ReportFilingRoutesDeps, store: ReportStore): AnyRoute[] {
  const { db, ids, users } = services;
  const { access, messages } = services.chatCore;

  async function file(
    ctx: { user: { id: string }; now: number },
    target: {
      type: 'message' | 'user' | 'guild';
      id: string;
      channelId: string | null;
      guildId: string | null;
      snapshot: ReportSnapshot;
    },
    body: { category: (typeof REPORT_CATEGORIES)[number]; description: string | null },
  ) {
    const { row } = await store.create(db, {
      id: ids.next(),
      reporterId: ctx.user.id,
      targetType: target.type,
      targetId: target.id,
      channelId: target.channelId,
      guildId: target.guildId,
      category: body.category,
      description: body.description,
      snapshot: target.snapshot,
      now: ctx.now,
    });
    return reporterReportView(row);
  }

  return [
    route({
      method: 'POST',
      path: '/reports/message',
      policy: 'user-only',
      rateLimit: FILING_LIMIT,
      body: z.object({ channel_id: snowflakeField, message_id: snowflakeField, ...common }),
      async handler(ctx) {
        // Reporting needs what reading needs: the channel in view and its history.
        const channelAccess = await access.channelWith(
          ctx.body.channel_id,
          ctx.user.id,
          ctx.now,
          PERMISSIONS.READ_MESSAGE_HISTORY,
        );
        const message = await messages.require(channelAccess.channel.id, ctx.body.message_id);
        const [rendered] = await messages.render([message], ctx.user.id);
        // One message in, one view out: render never drops a message it is given.
        if (!rendered) throw new ApiError('UNKNOWN_MESSAGE');
        // Reactions (and their `me`) are the reporter's view of a moving count, not evidence.
        const { reactions: _reactions, ...snapshot } = rendered;
        const guildId = channelAccess.channel.guild_id;
        return file(
          ctx,
          {
            type: 'message',
            id: message.id,
            channelId: channelAccess.channel.id,
            guildId,
            snapshot: guildId ? { ...snapshot, guild_id: guildId } : snapshot,
          },
          ctx.body,
        );
      },
    }),

    route({
      method: 'POST',
      path: '/reports/user',
      policy: 'user-only',
      rateLimit: FILING_LIMIT,
      body: z.object({ user_id: snowflakeField, ...common }),
      async handler(ctx) {
        if (ctx.body.user_id === ctx.user.id) throw new ApiError('CANNOT_REPORT_YOURSELF');
        const target = await users.findById(ctx.body.user_id);
        if (!target) throw new ApiError('UNKNOWN_USER');
        return file(
          ctx,
          { type: 'user', id: target.id, channelId: null, guildId: null, snapshot: partialUser(target) },
          ctx.body,
        );
      },
    }),

    route({
      method: 'POST',
      path: '/reports/guild',
      policy: 'user-only',
      rateLimit: FILING_LIMIT,
      body: z.object({ guild_id: snowflakeField, ...common }),
      async handler(ctx) {
        // Members only: that is how the reporter has seen what they report.
        const { guild } = await access.guild(ctx.body.guild_id, ctx.user.id, ctx.now);
        const snapshot = { id: guild.id, name: guild.name, icon: guild.icon, owner_id: guild.owner_id };
        return file(ctx, { type: 'guild', id: guild.id, channelId: null, guildId: guild.id, snapshot }, ctx.body);
      },
    }),
  ];
}
