import * as oidc from 'openid-client';
import type { SsoSettings } from '../instance/instance-settings.ts';
import { failureReason, IdpUnreachable, idpFetch } from './idp-http.ts';

/** The endpoints one SSO flow talks to: discovered from the issuer, explicit overrides win. */
export interface ProviderEndpoints {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string | null;
  jwksUrl: string;
  tokenAuthMethods: string[];
  /** The provider's advertised ID token algorithms, asymmetric ones only; unset = RS256 (OpenID default). */
  idTokenAlgorithms: string[] | undefined;
}

/** Asymmetric only: the provider's published keys are the trust anchor (no `none`, no shared-secret HS*). */
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

const DISCOVERY_TTL_MS = 60 * 60_000;

/**
 * Caches the discovery document (`<issuer>/.well-known/openid-configuration`, read and checked by
 * openid-client) per issuer. A changed issuer is a new key, so a settings change never serves stale
 * endpoints; failures are not cached, so a fixed IdP works at once.
 */
export class ProviderMetadata {
  private readonly cache = new Map<string, { value: oidc.ServerMetadata; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  async endpoints(sso: SsoSettings): Promise<ProviderEndpoints> {
    const issuer = sso.issuer;
    if (!issuer) throw new IdpUnreachable('bad_url');
    const needsDiscovery = !sso.authorization_url || !sso.token_url || !sso.jwks_url || !sso.userinfo_url;
    // userinfo is optional: when only it is missing, a failed discovery must not block the flow.
    const onlyUserinfoMissing = sso.authorization_url && sso.token_url && sso.jwks_url;
    let discovered: Partial<oidc.ServerMetadata> = {};
    if (needsDiscovery) {
      try {
        discovered = await this.discover(issuer, sso);
      } catch (error) {
        if (!onlyUserinfoMissing) throw error;
      }
    }
    const authorizationUrl = sso.authorization_url ?? discovered.authorization_endpoint;
    const tokenUrl = sso.token_url ?? discovered.token_endpoint;
    const jwksUrl = sso.jwks_url ?? discovered.jwks_uri;
    if (!authorizationUrl || !tokenUrl || !jwksUrl) throw new IdpUnreachable('not_json');
    const algorithms = discovered.id_token_signing_alg_values_supported?.filter((alg) => ASYMMETRIC.has(alg));
    return {
      issuer,
      authorizationUrl,
      tokenUrl,
      jwksUrl,
      userinfoUrl: sso.userinfo_url ?? discovered.userinfo_endpoint ?? null,
      tokenAuthMethods: discovered.token_endpoint_auth_methods_supported ?? ['client_secret_basic'],
      idTokenAlgorithms: algorithms && algorithms.length > 0 ? algorithms : undefined,
    };
  }

  private async discover(issuer: string, sso: SsoSettings): Promise<oidc.ServerMetadata> {
    const allowPrivate = sso.allow_private_issuer;
    const key = `${allowPrivate ? 'p' : 'n'}|${issuer}`;
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    if (!URL.canParse(issuer)) throw new IdpUnreachable('bad_url');
    let value: oidc.ServerMetadata;
    try {
      // openid-client checks that the document names exactly the issuer it was fetched for (Discovery §4.3).
      const configuration = await oidc.discovery(new URL(issuer), sso.client_id ?? 'hearth', undefined, oidc.None(), {
        [oidc.customFetch]: idpFetch(allowPrivate),
        execute: allowPrivate ? [oidc.allowInsecureRequests] : [],
      });
      value = configuration.serverMetadata();
    } catch (error) {
      // A failure of the request itself keeps its reason; an unusable document is `not_json`.
      throw new IdpUnreachable(failureReason(error) ?? 'not_json');
    }
    this.cache.set(key, { value, expiresAt: this.now() + DISCOVERY_TTL_MS });
    return value;
  }
}
