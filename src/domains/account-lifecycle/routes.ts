import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { accountStateRoutes } from './account-state.ts';
import { emailChangeRoutes } from './email-change.ts';
import { emailRevertRoutes } from './email-revert.ts';
import { emailVerificationRoutes } from './email-verification.ts';
import { ipAuthorizationRoutes } from './ip-authorization-routes.ts';
import { passwordRecoveryRoutes } from './password-recovery.ts';

/** Account lifecycle (docs/accounts.md): every flow that runs through an emailed link or code. */
export function accountLifecycleRoutes(services: AppServices): AnyRoute[] {
  return [
    ...emailVerificationRoutes(services),
    ...passwordRecoveryRoutes(services),
    ...emailRevertRoutes(services),
    ...ipAuthorizationRoutes(services),
    ...emailChangeRoutes(services),
    ...accountStateRoutes(services),
  ];
}
