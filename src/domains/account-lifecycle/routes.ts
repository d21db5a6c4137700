import type { AnyRoute } from '../../http/route.ts';
import { type AccountStateRoutesDeps, accountStateRoutes } from './account-state.ts';
import { type EmailChangeRoutesDeps, emailChangeRoutes } from './email-change.ts';
import { type EmailRevertRoutesDeps, emailRevertRoutes } from './email-revert.ts';
import { type EmailVerificationRoutesDeps, emailVerificationRoutes } from './email-verification.ts';
import { type IpAuthorizationRoutesDeps, ipAuthorizationRoutes } from './ip-authorization-routes.ts';
import { type PasswordRecoveryRoutesDeps, passwordRecoveryRoutes } from './password-recovery.ts';

/** What `accountLifecycleRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AccountLifecycleRoutesDeps = EmailVerificationRoutesDeps &
  PasswordRecoveryRoutesDeps &
  EmailRevertRoutesDeps &
  IpAuthorizationRoutesDeps &
  EmailChangeRoutesDeps &
  AccountStateRoutesDeps;

/** Account lifecycle (docs/accounts.md): every flow that runs through an emailed link or code. */
export function accountLifecycleRoutes(services: AccountLifecycleRoutesDeps): AnyRoute[] {
  return [
    ...emailVerificationRoutes(services),
    ...passwordRecoveryRoutes(services),
    ...emailRevertRoutes(services),
    ...ipAuthorizationRoutes(services),
    ...emailChangeRoutes(services),
    ...accountStateRoutes(services),
  ];
}
