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
import { harvestRoutes } from './domains/harvest/routes.ts';
import { interactionRoutes } from './domains/interactions/routes.ts';
import { mediaRoutes } from './domains/media/routes.ts';
import { mfaLoginRoutes } from './domains/mfa/login-routes.ts';
import { mfaRoutes } from './domains/mfa/routes.ts';
import { oauth2Routes } from './domains/oauth2/routes.ts';
import { adminReportRoutes } from './domains/reports/admin-report-routes.ts';
import { reportFilingRoutes } from './domains/reports/filing-routes.ts';
import { ssoRoutes } from './domains/sso/routes.ts';
import { chatTestRoutes } from './domains/test-harness/chat.ts';
import { lifecycleTestRoutes } from './domains/test-harness/lifecycle.ts';
import { mfaTestRoutes } from './domains/test-harness/mfa.ts';
import { coreTestRoutes } from './domains/test-harness/routes.ts';
import { userRoutes } from './domains/users/routes.ts';
import { userSettingsRoutes } from './domains/users/settings-routes.ts';
import { callRoutes } from './domains/voice/routes.ts';
import { webhookRoutes } from './domains/webhooks/routes.ts';
import { openApiRoute } from './http/openapi.ts';
import type { AnyRoute } from './http/route.ts';

/**
 * The route table: every domain's routes, in one list. A test walks it to check that every route
 * declares its policy and the metadata that policy needs.
 */
export function buildRoutes(services: AppServices): AnyRoute[] {
  const { roles } = services.config;
  // By role (docs/deployment.md#roles): discovery, health, readiness and metrics on every process; the media
  // proxy and upload relay with `media`; everything else below /v1 with `api`.
  const everywhere = discoveryRoutes(services);
  const media = mediaRoutes(services);
  const api: AnyRoute[] = [
    ...authRoutes(services),
    ...ssoRoutes(services),
    ...userRoutes(services, emailTokenApplier(services)),
    ...accountLifecycleRoutes(services),
    ...lifecycleTestRoutes(services),
    ...webhookRoutes(services),
    ...attachmentRoutes(services),
    ...mfaRoutes(services),
    ...mfaLoginRoutes(services),
    ...mfaTestRoutes(services),
    ...adminRoutes(services),
    ...adminReportRoutes(services, { store: services.reports, audit: services.audit }),
    ...applicationRoutes(services),
    ...botRoutes(services),
    ...oauth2Routes(services),
    ...chatRoutes(services),
    ...reportFilingRoutes(services, services.reports),
    ...callRoutes(services),
    ...interactionRoutes(services.interactions),
    ...userSettingsRoutes(services),
    ...harvestRoutes({
      harvests: services.harvests,
      objects: services.objects,
      linkSecret: services.secrets.relay,
      now: () => services.clock.now(),
    }),
    ...chatTestRoutes(services),
    ...coreTestRoutes(services),
  ];
  // The API's own description, generated from the whole table whatever this process serves, itself included
  // (the list it is given is the one it joins; docs/api-reference.md).
  const described = [...everywhere, ...media, ...api];
  const description = openApiRoute(described, `${services.config.publicUrl}`);
  described.push(description);
  api.push(description);
  return [...everywhere, ...(roles.has('media') ? media : []), ...(roles.has('api') ? api : [])];
}
