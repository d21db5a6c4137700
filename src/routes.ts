import type { AppServices } from './app-services.ts';
import { emailTokenApplier } from './domains/account-lifecycle/email-change.ts';
import { accountLifecycleRoutes } from './domains/account-lifecycle/routes.ts';
import { adminRoutes } from './domains/admin/routes.ts';
import { botRoutes } from './domains/applications/bot-routes.ts';
import { applicationRoutes } from './domains/applications/routes.ts';
import { attachmentRoutes } from './domains/attachments/routes.ts';
import { authRoutes } from './domains/auth/routes.ts';
import { chatRoutes } from './domains/chat/routes.ts';
import { discoveryRoutes } from './domains/discovery/routes.ts';
import { interactionRoutes } from './domains/interactions/routes.ts';
import { mediaRoutes } from './domains/media/routes.ts';
import { mfaLoginRoutes } from './domains/mfa/login-routes.ts';
import { mfaRoutes } from './domains/mfa/routes.ts';
import { oauth2Routes } from './domains/oauth2/routes.ts';
import { ssoRoutes } from './domains/sso/routes.ts';
import { chatTestRoutes } from './domains/test-harness/chat.ts';
import { lifecycleTestRoutes } from './domains/test-harness/lifecycle.ts';
import { mfaTestRoutes } from './domains/test-harness/mfa.ts';
import { coreTestRoutes } from './domains/test-harness/routes.ts';
import { userRoutes } from './domains/users/routes.ts';
import { userSettingsRoutes } from './domains/users/settings-routes.ts';
import { webhookRoutes } from './domains/webhooks/routes.ts';
import { openApiRoute } from './http/openapi.ts';
import type { AnyRoute } from './http/route.ts';

/**
 * The route table: every domain's routes, in one list. A test walks it to check that every route
 * declares its policy and the metadata that policy needs.
 */
export function buildRoutes(services: AppServices): AnyRoute[] {
  const table: AnyRoute[] = [
    ...discoveryRoutes(services),
    ...authRoutes(services),
    ...ssoRoutes(services),
    ...userRoutes(services, emailTokenApplier(services)),
    ...accountLifecycleRoutes(services),
    ...lifecycleTestRoutes(services),
    ...mediaRoutes(services),
    ...webhookRoutes(services),
    ...attachmentRoutes(services),
    ...mfaRoutes(services),
    ...mfaLoginRoutes(services),
    ...mfaTestRoutes(services),
    ...adminRoutes(services),
    ...applicationRoutes(services),
    ...botRoutes(services),
    ...oauth2Routes(services),
    ...chatRoutes(services),
    ...interactionRoutes(services.interactions),
    ...userSettingsRoutes(services),
    ...chatTestRoutes(services),
    ...coreTestRoutes(services),
  ];
  // The API's own description, generated from the finished table (docs/api-reference.md).
  table.push(openApiRoute(table, `${services.config.publicUrl}`));
  return table;
}
