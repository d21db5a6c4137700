import type { SsoSettings } from '../instance/instance-settings.ts';
import { failureReason, type IdpFailureReason, idpJson } from './idp-http.ts';
import { ProviderMetadata } from './provider-metadata.ts';

/** What an administrator's "Test the connection" learns (docs/sso.md#testing-the-connection). */
export type ProviderCheck =
  | {
      ok: true;
      issuer: string;
      authorization_endpoint: string;
      token_endpoint: string;
      userinfo_endpoint: string | null;
      jwks_keys: number;
    }
  | {
      ok: false;
      step: 'settings' | 'discovery' | 'jwks';
      reason: IdpFailureReason | 'missing_issuer' | 'no_keys';
    };

/**
 * Reaches the provider as a sign-in would, without signing anyone in: the discovery document (read fresh, not
 * from the flow's cache) with explicit endpoints winning, then the signing keys. Same SSRF rules as the flow:
 * the reasons never carry a URL, an address or a body.
 */
export async function checkProvider(sso: SsoSettings, now: () => number): Promise<ProviderCheck> {
  if (!sso.issuer) return { ok: false, step: 'settings', reason: 'missing_issuer' };
  let endpoints: Awaited<ReturnType<ProviderMetadata['endpoints']>>;
  try {
    endpoints = await new ProviderMetadata(now).endpoints(sso);
  } catch (error) {
    return { ok: false, step: 'discovery', reason: reasonOf(error) };
  }
  try {
    const res = await idpJson(endpoints.jwksUrl, sso.allow_private_issuer);
    const keys = (res.json as { keys?: unknown } | undefined)?.keys;
    if (res.status !== 200 || !Array.isArray(keys)) return { ok: false, step: 'jwks', reason: 'not_json' };
    if (keys.length === 0) return { ok: false, step: 'jwks', reason: 'no_keys' };
    return {
      ok: true,
      issuer: endpoints.issuer,
      authorization_endpoint: endpoints.authorizationUrl,
      token_endpoint: endpoints.tokenUrl,
      userinfo_endpoint: endpoints.userinfoUrl,
      jwks_keys: keys.length,
    };
  } catch (error) {
    return { ok: false, step: 'jwks', reason: reasonOf(error) };
  }
}

function reasonOf(error: unknown): IdpFailureReason {
  return failureReason(error) ?? 'network';
}
