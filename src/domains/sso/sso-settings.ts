import type { Config } from '../../config/config.ts';
import { type FieldError, type FormErrorCode, formError } from '../../http/errors.ts';
import { ssoRedirectUri } from '../discovery/sso-status.ts';
import { DEFAULT_SETTINGS, type SsoSettings } from '../instance/instance-settings.ts';
import { type HostResolver, hostAddresses, isNonPublicAddress } from './private-address.ts';

/**
 * Validation of the SSO part of `POST /admin/instance-config/update` (docs/admin.md).
 *
 * Error paths are `sso.<field>` (and `sso.allowed_domains.<index>` for one domain), because the admin
 * update body nests these settings under `sso`. Element codes: `INVALID_FORMAT` for a wrong type or shape,
 * `CONTENT_EXCEEDS_MAX_LENGTH`, `INVALID_SCOPE` (scope without `openid`), `PRIVATE_ADDRESS_NOT_ALLOWED`
 * (a provider URL on a private, loopback or link-local address, or plain http, without
 * `allow_private_issuer`).
 *
 * PATCH semantics (docs/conventions.md#requests): omitted = unchanged, `null` (or `""`) = back to the default.
 * Unknown members, including the read-only `redirect_uri` and `client_secret_set`, are ignored.
 */
export interface ValidateSsoOptions {
  /** DNS lookup used for the private-address rule; tests inject one. Defaults to the system resolver. */
  resolveHost?: HostResolver;
}

const BOOLEAN_FIELDS = ['enabled', 'enforced', 'auto_provision', 'link_by_email', 'allow_private_issuer'] as const;
const URL_FIELDS = ['issuer', 'authorization_url', 'token_url', 'userinfo_url', 'jwks_url'] as const;
const MAX_URL = 2048;
const MAX_DOMAINS = 100;

export async function validateSsoUpdate(
  current: SsoSettings,
  patch: unknown,
  options: ValidateSsoOptions = {},
): Promise<SsoSettings> {
  const errors: FieldError[] = [];
  const fail = (field: string, code: FormErrorCode, message: string) =>
    errors.push({ path: `sso.${field}`, code, message });

  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw formError([{ path: 'sso', code: 'INVALID_FORMAT', message: 'Must be an object' }]);
  }
  const input = patch as Record<string, unknown>;
  const next: SsoSettings = { ...current, allowed_domains: [...current.allowed_domains] };
  const defaults = DEFAULT_SETTINGS.sso;
  const cleared = (value: unknown) => value === null || value === '';

  for (const field of BOOLEAN_FIELDS) {
    if (!(field in input)) continue;
    const value = input[field];
    if (value === null) next[field] = defaults[field];
    else if (typeof value === 'boolean') next[field] = value;
    else fail(field, 'INVALID_FORMAT', 'Must be a boolean');
  }

  if ('display_name' in input) {
    const value = input.display_name;
    if (cleared(value)) next.display_name = defaults.display_name;
    else if (typeof value !== 'string') fail('display_name', 'INVALID_FORMAT', 'Must be a string');
    else if (value.trim().length > 100) fail('display_name', 'CONTENT_EXCEEDS_MAX_LENGTH', 'Must be 1-100 characters');
    else next.display_name = value.trim();
  }

  for (const field of URL_FIELDS) {
    if (!(field in input)) continue;
    const value = input[field];
    if (cleared(value)) next[field] = null;
    else if (typeof value !== 'string') fail(field, 'INVALID_FORMAT', 'Must be an absolute URL');
    else {
      const problem = urlShapeProblem(value);
      if (problem) fail(field, 'INVALID_FORMAT', problem);
      else next[field] = value;
    }
  }

  for (const field of ['client_id', 'client_secret'] as const) {
    if (!(field in input)) continue;
    const value = input[field];
    if (cleared(value)) next[field] = null;
    else if (typeof value !== 'string') fail(field, 'INVALID_FORMAT', 'Must be a string');
    else if (value.length > 1024) fail(field, 'CONTENT_EXCEEDS_MAX_LENGTH', 'Must be at most 1024 characters');
    else if (/[\s\p{Cc}]/u.test(value)) fail(field, 'INVALID_FORMAT', 'Must not contain whitespace');
    else next[field] = value;
  }

  if ('scope' in input) {
    const value = input.scope;
    if (cleared(value)) next.scope = defaults.scope;
    else if (typeof value !== 'string') fail('scope', 'INVALID_FORMAT', 'Must be a space-separated string');
    else {
      const scopes = value.split(' ').filter(Boolean);
      if (value.length > 1024) fail('scope', 'CONTENT_EXCEEDS_MAX_LENGTH', 'Must be at most 1024 characters');
      else if (scopes.some((scope) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)))
        fail('scope', 'INVALID_FORMAT', 'Contains an invalid scope token');
      else if (!scopes.includes('openid')) fail('scope', 'INVALID_SCOPE', 'Must include openid');
      else next.scope = [...new Set(scopes)].join(' ');
    }
  }

  if ('allowed_domains' in input) {
    const value = input.allowed_domains;
    if (value === null) next.allowed_domains = [];
    else if (!Array.isArray(value)) fail('allowed_domains', 'INVALID_FORMAT', 'Must be a list of domains');
    else if (value.length > MAX_DOMAINS)
      fail('allowed_domains', 'CONTENT_EXCEEDS_MAX_LENGTH', `At most ${MAX_DOMAINS} domains`);
    else {
      const domains: string[] = [];
      value.forEach((item, index) => {
        const domain = typeof item === 'string' ? normaliseDomain(item) : undefined;
        if (domain === undefined) fail(`allowed_domains.${index}`, 'INVALID_FORMAT', 'Must be a domain name');
        else if (!domains.includes(domain)) domains.push(domain);
      });
      next.allowed_domains = domains;
    }
  }

  if (errors.length > 0) throw formError(errors);

  // The address rule depends on the merged result: turning `allow_private_issuer` off must re-check an
  // issuer configured earlier, and an issuer change must be checked against the flag as it ends up.
  if (!next.allow_private_issuer) {
    for (const field of URL_FIELDS) {
      const value = next[field];
      if (!value) continue;
      const problem = await privateProblem(value, options.resolveHost);
      if (problem) fail(field, 'PRIVATE_ADDRESS_NOT_ALLOWED', problem);
    }
    if (errors.length > 0) throw formError(errors);
  }
  return next;
}

function urlShapeProblem(value: string): string | undefined {
  if (value.length > MAX_URL) return `Must be at most ${MAX_URL} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'Must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Must be an https URL';
  if (url.username || url.password) return 'Must not contain credentials';
  if (url.hash) return 'Must not contain a fragment';
  return undefined;
}

async function privateProblem(value: string, resolver: HostResolver | undefined): Promise<string | undefined> {
  const url = new URL(value);
  if (url.protocol !== 'https:') return 'Must be an https URL unless allow_private_issuer is on';
  const addresses = await hostAddresses(url, resolver);
  // A name that does not resolve now is accepted (DNS may not be set up yet); the request-time guard
  // refuses it later if it then resolves to a non-public address.
  if (addresses?.some(isNonPublicAddress))
    return 'Resolves to a private, loopback or link-local address; set allow_private_issuer to allow it';
  return undefined;
}

function normaliseDomain(raw: string): string | undefined {
  const domain = raw.trim().toLowerCase().replace(/^@/, '').replace(/\.$/, '');
  if (domain.length === 0 || domain.length > 253) return undefined;
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((part) => label.test(part) || /^xn--[a-z0-9-]+$/.test(part))) return undefined;
  return domain;
}

/** What reads return: the secret is write-only, the redirect URI is derived from configuration. */
export function publicSsoSettings(settings: SsoSettings, config: Pick<Config, 'webappUrl'>) {
  const { client_secret, ...rest } = settings;
  return {
    ...rest,
    allowed_domains: [...rest.allowed_domains],
    client_secret_set: Boolean(client_secret),
    redirect_uri: ssoRedirectUri(config),
  };
}

export type PublicSsoSettings = ReturnType<typeof publicSsoSettings>;
