import type { AppServices } from './app-services.ts';
import { authRoutes } from './domains/auth/routes.ts';
import { mediaRoutes } from './domains/media/routes.ts';
import { discoveryRoutes } from './domains/discovery/routes.ts';
import { ssoRoutes } from './domains/sso/routes.ts';
import { coreTestRoutes } from './domains/test-harness/routes.ts';
import { userRoutes } from './domains/users/routes.ts';
import { ApiError } from './http/errors.ts';
import type { AnyRoute } from './http/route.ts';

/**
 * The route table: every domain's routes, in one list. A test walks it to check that every route
 * declares its policy and the metadata that policy needs.
 */
export function buildRoutes(services: AppServices): AnyRoute[] {
  return [
    ...discoveryRoutes(services),
    ...authRoutes(services),
    ...ssoRoutes(services),
    ...userRoutes(services, async () => {
      throw new ApiError('BAD_REQUEST', { message: 'Email change is not available yet' });
    }),
    ...mediaRoutes(services),
    ...coreTestRoutes(services),
  ];
}
