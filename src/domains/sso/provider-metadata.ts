import type { SsoSettings } from '../instance/instance-settings.ts';
import { IdpUnreachable, idpRequest } from './idp-http.ts';

/** The endpoints one SSO flow talks to: discovered from the issuer, explicit overrides win. */
export interface ProviderEndpoints {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string | null;
  jwksUrl: string;
  tokenAuthMethods: string[];
}

interface Discovered {
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
  token_endpoint_auth_methods_supported?: string[];
}

const DISCOVERY_TTL_MS = 60 * 60_000;

/**
 * Caches `<issuer>/.well-known/openid-configuration` per issuer. A changed issuer is a new key, so a
 * settings change never serves stale endpoints; failures are not cached, so a fixed IdP works at once.
 */
export class ProviderMetadata {
  private readonly cache = new Map<string, { value: Discovered; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  async endpoints(sso: SsoSettings): Promise<ProviderEndpoints> {
    const issuer = sso.issuer;
    if (!issuer) throw new IdpUnreachable('bad_url');
    const needsDiscovery = !sso.authorization_url || !sso.token_url || !sso.jwks_url || !sso.userinfo_url;
    // userinfo is optional: when only it is missing, a failed discovery must not block the flow.
    const onlyUserinfoMissing = sso.authorization_url && sso.token_url && sso.jwks_url;
    let discovered: Discovered = {};
    if (needsDiscovery) {
      try {
        discovered = await this.discover(issuer, sso.allow_private_issuer);
      } catch (error) {
        if (!onlyUserinfoMissing) throw error;
      }
    }
    const authorizationUrl = sso.authorization_url ?? discovered.authorization_endpoint;
    const tokenUrl = sso.token_url ?? discovered.token_endpoint;
    const jwksUrl = sso.jwks_url ?? discovered.jwks_uri;
    if (!authorizationUrl || !tokenUrl || !jwksUrl) throw new IdpUnreachable('not_json');
    return {
      issuer,
      authorizationUrl,
      tokenUrl,
      jwksUrl,
      userinfoUrl: sso.userinfo_url ?? discovered.userinfo_endpoint ?? null,
      tokenAuthMethods: discovered.token_endpoint_auth_methods_supported ?? ['client_secret_basic'],
    };
  }

  private async discover(issuer: string, allowPrivate: boolean): Promise<Discovered> {
    const key = `${allowPrivate ? 'p' : 'n'}|${issuer}`;
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await idpRequest(url, { allowPrivate });
    const doc = res.json as Record<string, unknown> | undefined;
    // OpenID Connect Discovery §4.3: the document must name exactly the issuer it was fetched for.
    if (res.status !== 200 || !doc || typeof doc !== 'object' || doc.issuer !== issuer)
      throw new IdpUnreachable('not_json');
    const text = (name: string) => (typeof doc[name] === 'string' ? (doc[name] as string) : undefined);
    const methods = doc.token_endpoint_auth_methods_supported;
    const value: Discovered = {
      authorization_endpoint: text('authorization_endpoint'),
      token_endpoint: text('token_endpoint'),
      userinfo_endpoint: text('userinfo_endpoint'),
      jwks_uri: text('jwks_uri'),
      token_endpoint_auth_methods_supported: Array.isArray(methods)
        ? methods.filter((m): m is string => typeof m === 'string')
        : undefined,
    };
    this.cache.set(key, { value, expiresAt: this.now() + DISCOVERY_TTL_MS });
    return value;
  }
}
