import type { AppServices } from './app-services.ts';
import { emailTokenApplier } from './domains/account-lifecycle/email-change.ts';
import { accountLifecycleRoutes } from './domains/account-lifecycle/routes.ts';
import { adminRoutes } from './domains/admin/routes.ts';
import { applicationRoutes } from './domains/applications/routes.ts';
import { attachmentRoutes } from './domains/attachments/routes.ts';
import { handoffRoutes } from './domains/auth/handoff-routes.ts';
import { authRoutes } from './domains/auth/routes.ts';
import { chatRoutes } from './domains/chat/routes.ts';
import { discoveryRoutes } from './domains/discovery/routes.ts';
import { harvestRoutes } from './domains/harvest/routes.ts';
import { interactionRoutes } from './domains/interactions/routes.ts';
import { mediaRoutes } from './domains/media/routes.ts';
import { mfaRoutes } from './domains/mfa/routes.ts';
import { oauth2Routes } from './domains/oauth2/routes.ts';
import { reportRoutes } from './domains/reports/routes.ts';
import { ssoRoutes } from './domains/sso/routes.ts';
import { testHarnessRoutes } from './domains/test-harness/routes.ts';
import { userRoutes } from './domains/users/routes.ts';
import { callRoutes } from './domains/voice/routes.ts';
import { webhookRoutes } from './domains/webhooks/routes.ts';
import { openApiRoute } from './http/openapi.ts';
import type { AnyRoute } from './http/route.ts';

/**
 * The route table: every domain's routes, in one list, one module factory per domain, each handed the
 * services it declares in its deps type (docs/architecture.md#narrow-dependencies). A test walks it to check
 * that every route declares its policy and the metadata that policy needs.
 */
export function buildRoutes(services: AppServices): AnyRoute[] {
  const { roles } = services.config;
  // By role (docs/deployment.md#roles): discovery, health, readiness and metrics on every process; the media
  // proxy and upload relay with `media`; everything else below /v1 with `api`.
  const everywhere = discoveryRoutes(services);
  const media = mediaRoutes(services);
  const api: AnyRoute[] = [
    ...authRoutes(services),
    ...handoffRoutes(services),
    ...ssoRoutes(services),
    ...userRoutes(services, emailTokenApplier(services)),
    ...accountLifecycleRoutes(services),
    ...webhookRoutes(services),
    ...attachmentRoutes(services),
    ...mfaRoutes(services),
    ...adminRoutes(services),
    ...applicationRoutes(services),
    ...oauth2Routes(services),
    ...chatRoutes(services),
    ...reportRoutes(services),
    ...callRoutes(services),
    ...interactionRoutes(services.interactions),
    ...harvestRoutes({
      harvests: services.harvests,
      objects: services.objects,
      linkSecret: services.secrets.relay,
      now: () => services.clock.now(),
    }),
    ...testHarnessRoutes(services),
  ];
  // The API's own description, generated from the whole table whatever this process serves, itself included
  // (the list it is given is the one it joins; docs/api-reference.md).
  const described = [...everywhere, ...media, ...api];
  const description = openApiRoute(described, `${services.config.publicUrl}`);
  described.push(description);
  api.push(description);
  return [...everywhere, ...(roles.has('media') ? media : []), ...(roles.has('api') ? api : [])];
}
