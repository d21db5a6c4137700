import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { oauth2MeRoutes } from './me-routes.ts';
import { oauth2MetadataRoutes } from './metadata.ts';
import { oauth2ProviderRoutes } from './provider-routes.ts';
import { SigningKeys } from './signing-keys.ts';

/** The OAuth2 / OpenID Connect provider (docs/oauth2.md#oauth2-provider): authorisation, client endpoints, metadata and keys. */
export function oauth2Routes(services: AppServices): AnyRoute[] {
  // One per process: it caches the current ID-token signing key.
  const signingKeys = new SigningKeys(services.db, services.secrets.mfa);
  return [
    ...oauth2ProviderRoutes(services, signingKeys),
    ...oauth2MeRoutes(services),
    ...oauth2MetadataRoutes(services.config, signingKeys),
  ];
}
