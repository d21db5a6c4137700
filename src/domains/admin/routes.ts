import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { AdminApiKeys } from './admin-api-keys.ts';
import { AuditLog } from './audit-log.ts';
import { banRoutes } from './ban-routes.ts';
import { configRoutes } from './config-routes.ts';
import { keyRoutes } from './key-routes.ts';
import { userRoutes } from './user-routes.ts';

/** The Admin API (api.md §3.6): every route has policy `admin`, an ACL, and audits its writes. */
export function adminRoutes(services: AppServices): AnyRoute[] {
  const audit = new AuditLog(services.ids);
  return [
    ...userRoutes(services, { audit }),
    ...keyRoutes(services, { keys: new AdminApiKeys(services.ids), audit }),
    ...banRoutes(services, { manualBans: services.manualIpBans, audit }),
    ...configRoutes(services, { audit }),
  ];
}
