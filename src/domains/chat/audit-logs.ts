import { z } from 'zod';
import { type AnyRoute, route } from '../../http/route.ts';
import { pathId } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import type { GuildAuditLog } from './guild-audit.ts';
import { PERMISSIONS } from './permissions.ts';

const auditLogQuery = z.object({
  user_id: snowflake.optional(),
  action_type: z.coerce.number().int().min(1).max(255).optional(),
  before: snowflake.optional(),
  after: snowflake.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** `GET /guilds/{id}/audit-logs` (Discord's Get Guild Audit Log), for holders of VIEW_AUDIT_LOG. */
export function auditLogRoutes(deps: ChatDeps, audit: GuildAuditLog): AnyRoute[] {
  const { access } = deps;
  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/audit-logs',
      policy: 'user',
      rateLimit: limits.read('guilds:audit-logs'),
      query: auditLogQuery,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.VIEW_AUDIT_LOG);
        return audit.page(guildId, {
          userId: ctx.query.user_id,
          actionType: ctx.query.action_type,
          before: ctx.query.before,
          after: ctx.query.after,
          limit: ctx.query.limit,
        });
      },
    }),
  ];
}
