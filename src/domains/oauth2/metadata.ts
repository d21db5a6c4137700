import type { Config } from '../../config/config.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { OIDC_CLAIMS } from './oidc-claims.ts';
import { OAUTH_SCOPES } from './scopes.ts';
import { ID_TOKEN_ALG, type SigningKeys } from './signing-keys.ts';

/** The issuer identifier (`iss` of ID tokens): the public URL without a trailing slash. */
export function issuerOf(config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl.replace(/\/$/, '');
}

/** RFC 8414's metadata as `authorizationServerMetadata` sends it (its member names, as the RFC spells them). */
export type AuthorizationServerMetadata = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string;
  introspection_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  scopes_supported: string[];
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  introspection_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  service_documentation: string;
};

/** OpenID Connect Discovery 1.0 §3's provider metadata as `openIdConfiguration` sends it. */
export type OpenIdConfiguration = AuthorizationServerMetadata & {
  end_session_endpoint: string;
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  claims_supported: string[];
  prompt_values_supported: string[];
  claims_parameter_supported: boolean;
  request_parameter_supported: boolean;
  request_uri_parameter_supported: boolean;
};

/**
 * OAuth 2.0 Authorization Server Metadata (RFC 8414) at `/.well-known/oauth-authorization-server`, so stock
 * client libraries configure themselves from the issuer alone (docs/oauth2.md). It announces exactly what
 * the server does: the code grant with PKCE S256 and refresh rotation, client authentication by Basic or
 * body, revocation and introspection, and the ID-token keys.
 */
export function authorizationServerMetadata(config: Pick<Config, 'publicUrl'>): AuthorizationServerMetadata {
  const base = issuerOf(config);
  return {
    issuer: base,
    authorization_endpoint: `${base}/v1/oauth2/authorize`,
    token_endpoint: `${base}/v1/oauth2/token`,
    revocation_endpoint: `${base}/v1/oauth2/token/revoke`,
    introspection_endpoint: `${base}/v1/oauth2/introspect`,
    // Not an RFC 8414 member, but what clients use to read the account (`sub`, `username`, `email`).
    userinfo_endpoint: `${base}/v1/oauth2/userinfo`,
    jwks_uri: `${base}/v1/oauth2/jwks`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    // `none`: public clients (`public_client: true`), which must use PKCE.
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    service_documentation: `${base}/v1/openapi.json`,
  };
}

/**
 * OpenID Provider Metadata (OpenID Connect Discovery 1.0 §3) at `/.well-known/openid-configuration`: the
 * RFC 8414 document (same issuer and endpoints) plus what a relying party needs for ID tokens.
 */
export function openIdConfiguration(config: Pick<Config, 'publicUrl'>): OpenIdConfiguration {
  return {
    ...authorizationServerMetadata(config),
    // RP-initiated logout (docs/oauth2.md#rp-initiated-logout).
    end_session_endpoint: `${issuerOf(config)}/v1/oauth2/logout`,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [ID_TOKEN_ALG],
    claims_supported: [...OIDC_CLAIMS],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

const DISCOVERY = { bucket: 'discovery', limit: 60, windowSeconds: 60 };

export function oauth2MetadataRoutes(config: Pick<Config, 'publicUrl'>, keys: SigningKeys): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      root: true,
      policy: 'none',
      rateLimit: DISCOVERY,
      // Read per request: tests (and operators) settle the public URL after start.
      handler: () => authorizationServerMetadata(config),
    }),
    route({
      method: 'GET',
      path: '/.well-known/openid-configuration',
      root: true,
      policy: 'none',
      rateLimit: DISCOVERY,
      handler: () => openIdConfiguration(config),
    }),
    route({
      method: 'GET',
      path: '/oauth2/jwks',
      policy: 'none',
      rateLimit: { bucket: 'oauth2:jwks', limit: 120, windowSeconds: 60 },
      async handler(ctx) {
        ctx.reply.header('Cache-Control', 'public, max-age=300');
        return keys.jwks(ctx.now);
      },
    }),
  ];
}
