import type { Config } from '../../config/config.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { OAUTH_SCOPES } from './scopes.ts';

/**
 * OAuth 2.0 Authorization Server Metadata (RFC 8414) at `/.well-known/oauth-authorization-server`, so stock
 * client libraries configure themselves from the issuer alone (docs/oauth2.md). It announces exactly what
 * the server does today: the code grant with PKCE S256 and refresh rotation, client authentication by Basic
 * or body, revocation and introspection. OpenID Connect (ID tokens, userinfo claims, JWKS) is not offered yet,
 * so there is no `openid-configuration`.
 */
export function authorizationServerMetadata(config: Pick<Config, 'publicUrl' | 'webappUrl'>): Record<string, unknown> {
  const base = config.publicUrl.replace(/\/$/, '');
  return {
    issuer: base,
    authorization_endpoint: `${base}/v1/oauth2/authorize`,
    token_endpoint: `${base}/v1/oauth2/token`,
    revocation_endpoint: `${base}/v1/oauth2/token/revoke`,
    introspection_endpoint: `${base}/v1/oauth2/introspect`,
    // Not an RFC 8414 member, but what clients use to read the account (`sub`, `username`, `email`).
    userinfo_endpoint: `${base}/v1/oauth2/userinfo`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    service_documentation: `${base}/v1/openapi.json`,
  };
}

export function oauth2MetadataRoutes(config: Pick<Config, 'publicUrl' | 'webappUrl'>): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      root: true,
      policy: 'none',
      rateLimit: { bucket: 'discovery', limit: 60, windowSeconds: 60 },
      // Read per request: tests (and operators) settle the public URL after start.
      handler: () => authorizationServerMetadata(config),
    }),
  ];
}
