import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { type AdminReportRoutesDeps, adminReportRoutes } from './admin-report-routes.ts';
import { type ReportFilingRoutesDeps, reportFilingRoutes } from './filing-routes.ts';

/**
 * What the reports domain's routes use of the composition root's services: the report store and the Admin API's
 * audit log are built once there (docs/architecture.md#narrow-dependencies).
 */
export type ReportRoutesDeps = ReportFilingRoutesDeps & AdminReportRoutesDeps & Pick<AppServices, 'audit' | 'reports'>;

/** Reports (docs/safety.md): users file them, admins review them through the Admin API (docs/admin.md). */
export function reportRoutes(services: ReportRoutesDeps): AnyRoute[] {
  return [
    ...reportFilingRoutes(services, services.reports),
    ...adminReportRoutes(services, { store: services.reports, audit: services.audit }),
  ];
}
