import type { AppServices } from '../../app-services.ts';
import { ADMIN_AUTHENTICATE_ACL } from '../../http/auth/acl-names.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type BanRoutesDeps, banRoutes } from './ban-routes.ts';
import { type ConfigRoutesDeps, configRoutes } from './config-routes.ts';
import { type KeyRoutesDeps, keyRoutes } from './key-routes.ts';
import { type UserRoutesDeps, userRoutes } from './user-routes.ts';

/** What `adminRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AdminRoutesDeps = UserRoutesDeps &
  KeyRoutesDeps &
  BanRoutesDeps &
  ConfigRoutesDeps &
  Pick<AppServices, 'adminKeys' | 'audit' | 'manualIpBans'>;

/** The Admin API (docs/admin.md): every route has policy `admin`, an ACL, and audits its writes. */
export function adminRoutes(services: AdminRoutesDeps): AnyRoute[] {
  const { audit } = services;
  return [
    ...userRoutes(services, { audit }),
    ...keyRoutes(services, { keys: services.adminKeys, audit }),
    ...banRoutes(services, { manualBans: services.manualIpBans, audit }),
    ...configRoutes(services, { audit }),
    ...unknownAdminPaths(),
  ];
}

/**
 * Every other path and method below `/admin`: authenticated and authorised like any Admin API call before
 * the 404, so an outsider cannot map the Admin API (401 without a credential, 403 without
 * `admin:authenticate`, then 404). The router prefers every real route over this wildcard.
 */
function unknownAdminPaths(): AnyRoute[] {
  return (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).map((method) =>
    route({
      method,
      path: '/admin/*',
      policy: 'admin',
      acl: ADMIN_AUTHENTICATE_ACL,
      bodyKind: 'raw',
      handler() {
        throw new ApiError('NOT_FOUND');
      },
    }),
  );
}
