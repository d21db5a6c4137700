import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { oauth2MeRoutes } from './me-routes.ts';
import { oauth2MetadataRoutes } from './metadata.ts';
import { oauth2ProviderRoutes } from './provider-routes.ts';

/** The OAuth2 provider (api.md §3.5): authorisation, client endpoints, and what tokens and users see. */
export function oauth2Routes(services: AppServices): AnyRoute[] {
  return [...oauth2ProviderRoutes(services), ...oauth2MeRoutes(services), ...oauth2MetadataRoutes(services.config)];
}
