import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { type Oauth2MeRoutesDeps, oauth2MeRoutes } from './me-routes.ts';
import { oauth2MetadataRoutes } from './metadata.ts';
import { type Oauth2ProviderRoutesDeps, oauth2ProviderRoutes } from './provider-routes.ts';

/** What `oauth2Routes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type Oauth2RoutesDeps = Oauth2ProviderRoutesDeps & Oauth2MeRoutesDeps & Pick<AppServices, 'signingKeys'>;

/** The OAuth2 / OpenID Connect provider (docs/oauth2.md#oauth2-provider): authorisation, client endpoints, metadata and keys. */
export function oauth2Routes(services: Oauth2RoutesDeps): AnyRoute[] {
  // One per process (built by the composition root): it caches the current ID-token signing key.
  const { signingKeys } = services;
  return [
    ...oauth2ProviderRoutes(services, signingKeys),
    ...oauth2MeRoutes(services),
    ...oauth2MetadataRoutes(services.config, signingKeys),
  ];
}
