import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import { adminRoute, snowflakeField } from '../admin/admin-route.ts';
import { type AuditLog, auditActor } from '../admin/audit-log.ts';
import {
  REPORT_STATUSES,
  REPORT_TARGET_TYPES,
  REPORT_TEXT_MAX,
  type ReportRow,
  type ReportStatus,
  type ReportStore,
} from './report-store.ts';
import { adminReportView } from './report-views.ts';

const listBody = z.object({
  status: z.enum(REPORT_STATUSES).optional(),
  target_type: z.enum(REPORT_TARGET_TYPES).optional(),
  target_id: snowflakeField.optional(),
  reporter_id: snowflakeField.optional(),
  before: snowflakeField.optional(),
  limit: z.number().int().min(1).max(100).default(50),
});

const closeBody = z.object({
  report_id: snowflakeField,
  note: z
    .string()
    .max(REPORT_TEXT_MAX)
    .nullish()
    .transform((v) => (v === '' || v === undefined ? null : v)),
});

/** What `adminReportRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AdminReportRoutesDeps = Pick<AppServices, 'chatCore' | 'db'>;

/**
 * The admins' review queue (docs/admin.md "Reports"): list and read with `report:view`, resolve or dismiss
 * an open report with `report:resolve`. Each close is one audit entry written with the change.
 */
export function adminReportRoutes(
  services: AdminReportRoutesDeps,
  deps: { store: ReportStore; audit: AuditLog },
): AnyRoute[] {
  const { db, chatCore } = services;
  const { store, audit } = deps;

  async function views(rows: ReportRow[]) {
    const reporters = await chatCore.store.usersByIds(rows.map((r) => r.reporter_id));
    return rows.map((row) => adminReportView(row, reporters.get(row.reporter_id)));
  }

  function closeRoute(path: string, status: Exclude<ReportStatus, 'open'>, action: string): AnyRoute {
    return adminRoute({
      method: 'POST',
      path,
      acl: 'report:resolve',
      kind: 'write',
      body: closeBody,
      async handler(ctx) {
        const actor = auditActor(ctx);
        const { report_id: id, note } = ctx.body;
        const closed = await db.transaction(async (tx) => {
          const row = await store.close(tx, id, { status, adminUserId: actor.adminUserId, note, now: ctx.now });
          if (!row) {
            // Not open: either there is no such report, or someone closed it first.
            if (await store.find(tx, id)) throw new ApiError('REPORT_ALREADY_CLOSED');
            throw new ApiError('UNKNOWN_REPORT');
          }
          await audit.record(tx, actor, {
            action,
            targetType: 'report',
            targetId: id,
            metadata: { target_type: row.target_type, target_id: row.target_id, category: row.category },
            before: { status: 'open' },
            after: { status, resolution_note: note },
          });
          return row;
        });
        const [view] = await views([closed]);
        return view;
      },
    });
  }

  return [
    adminRoute({
      method: 'POST',
      path: '/admin/reports/list',
      acl: 'report:view',
      kind: 'read',
      body: listBody,
      async handler(ctx) {
        const { rows, total } = await store.search(db, ctx.body);
        return { reports: await views(rows), total };
      },
    }),

    adminRoute({
      method: 'GET',
      path: '/admin/reports/:reportId',
      acl: 'report:view',
      kind: 'read',
      async handler(ctx) {
        const id = parseSnowflake(ctx.params.reportId);
        const row = id.ok ? await store.find(db, id.value) : undefined;
        if (!row) throw new ApiError('UNKNOWN_REPORT');
        const [view] = await views([row]);
        return view;
      },
    }),

    closeRoute('/admin/reports/resolve', 'resolved', 'report.resolve'),
    closeRoute('/admin/reports/dismiss', 'dismissed', 'report.dismiss'),
  ];
}
