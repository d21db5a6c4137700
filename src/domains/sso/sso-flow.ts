import * as oidc from 'openid-client';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { constantTimeEqual, hmacSha256 } from '../../platform/crypto/tokens.ts';
import { assertNotSuspended } from '../auth/account-rules.ts';
import { reactivate } from '../auth/reactivation.ts';
import { ssoRedirectUri } from '../discovery/sso-status.ts';
import { type SsoSettings, ssoConfigured } from '../instance/instance-settings.ts';
import { resolveAccount } from './account-resolution.ts';
import { failureReason, IdpUnreachable, idpFetch } from './idp-http.ts';
import { type ProviderEndpoints, ProviderMetadata } from './provider-metadata.ts';
import { SsoIdentities } from './sso-identities.ts';

export const SSO_STATE_TTL_MS = 10 * 60_000;

/** What the state row remembers; the state is stored only as its digest, the nonce and verifier not at all. */
interface StateData {
  redirect_to: string | null;
  redirect_uri: string;
  issuer: string;
  client_id: string;
}

type Deps = Pick<
  AppServices,
  'config' | 'secrets' | 'clock' | 'db' | 'ids' | 'users' | 'settings' | 'tokens' | 'credentials' | 'log'
>;

const invalidState = () => fieldError('state', 'INVALID_OR_EXPIRED_SSO_STATE', 'Invalid or expired SSO state');
const invalidToken = () => fieldError('code', 'INVALID_SSO_TOKEN', 'The identity provider response was not valid');
const mismatch = (message: string) => fieldError('code', 'SSO_IDENTITY_MISMATCH', message);
const providerDown = () =>
  new ApiError('SERVICE_UNAVAILABLE', { message: 'The identity provider could not be reached' });

const CLOCK_TOLERANCE_S = 60;

/**
 * The OpenID Connect authorization-code flow with PKCE (S256) and a nonce, from `start` (which builds the
 * provider URL) to `complete` (which turns the returned code into a verified identity and an account). The
 * relying party's protocol work (authorization URL, code exchange, ID token validation against the JWKS,
 * userinfo) is openid-client's, over the outbound client with the private-address rule (docs/sso.md#flow).
 */
export class SsoFlow {
  private readonly metadata: ProviderMetadata;
  /** The provider's keys per JWKS URL, carried from one flow's configuration to the next. */
  private readonly jwksCaches = new Map<string, oidc.ExportedJWKSCache>();
  readonly identities: SsoIdentities;

  constructor(private readonly deps: Deps) {
    this.metadata = new ProviderMetadata(() => deps.clock.now());
    this.identities = new SsoIdentities(deps.db);
  }

  private active(): SsoSettings {
    const sso = this.deps.settings.get().sso;
    if (!sso.enabled || !ssoConfigured(sso)) throw new ApiError('FEATURE_TEMPORARILY_DISABLED');
    return sso;
  }

  private async endpoints(sso: SsoSettings): Promise<ProviderEndpoints> {
    try {
      return await this.metadata.endpoints(sso);
    } catch (error) {
      this.logProviderFailure('discovery', error);
      throw providerDown();
    }
  }

  /**
   * A client configuration for one call: explicit endpoints over discovered ones, asymmetric ID token algorithms
   * only, the service clock, and the JWKS cache of earlier calls (openid-client refetches it once when a token
   * names an unknown key).
   */
  private async configuration(sso: SsoSettings): Promise<oidc.Configuration> {
    const endpoints = await this.endpoints(sso);
    const clientId = sso.client_id as string;
    const secret = sso.client_secret;
    const clientAuth = !secret
      ? oidc.None()
      : endpoints.tokenAuthMethods.includes('client_secret_basic')
        ? oidc.ClientSecretBasic(secret)
        : oidc.ClientSecretPost(secret);
    const server: oidc.ServerMetadata = {
      issuer: endpoints.issuer,
      authorization_endpoint: endpoints.authorizationUrl,
      token_endpoint: endpoints.tokenUrl,
      jwks_uri: endpoints.jwksUrl,
      ...(endpoints.userinfoUrl ? { userinfo_endpoint: endpoints.userinfoUrl } : {}),
      ...(endpoints.idTokenAlgorithms ? { id_token_signing_alg_values_supported: endpoints.idTokenAlgorithms } : {}),
    };
    const config = new oidc.Configuration(
      server,
      clientId,
      {
        [oidc.clockTolerance]: CLOCK_TOLERANCE_S,
        [oidc.clockSkew]: Math.round((this.deps.clock.now() - Date.now()) / 1000),
      },
      clientAuth,
    );
    config[oidc.customFetch] = idpFetch(sso.allow_private_issuer);
    // The ID token's signature is checked against the provider's keys even though it comes straight from the
    // token endpoint: an opted-in private issuer may speak plain http, and a stored token must stand on its own.
    oidc.enableNonRepudiationChecks(config);
    if (sso.allow_private_issuer) oidc.allowInsecureRequests(config);
    const jwks = this.jwksCaches.get(this.jwksKey(sso, endpoints.jwksUrl));
    if (jwks) oidc.setJwksCache(config, jwks);
    return config;
  }

  private jwksKey(sso: SsoSettings, jwksUrl: string): string {
    return `${sso.allow_private_issuer ? 'p' : 'n'}|${jwksUrl}`;
  }

  private keepJwks(sso: SsoSettings, config: oidc.Configuration): void {
    const jwks = oidc.getJwksCache(config);
    const jwksUrl = config.serverMetadata().jwks_uri;
    if (jwks && jwksUrl) this.jwksCaches.set(this.jwksKey(sso, jwksUrl), jwks);
  }

  async start(input: { redirect_to?: string | null | undefined; redirect_uri?: string | null | undefined }) {
    const sso = this.active();
    const redirectUri = ssoRedirectUri(this.deps.config);
    if (input.redirect_uri && input.redirect_uri !== redirectUri)
      throw fieldError('redirect_uri', 'INVALID_REDIRECT_URI', 'Must equal the configured redirect URI');
    const config = await this.configuration(sso);

    const data: StateData = {
      redirect_to: input.redirect_to || null,
      redirect_uri: redirectUri,
      issuer: sso.issuer as string,
      client_id: sso.client_id as string,
    };
    const state = await this.deps.tokens.issue('sso_state', null, SSO_STATE_TTL_MS, { ...data });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: sso.scope,
      state,
      nonce: this.derived('nonce', state),
      code_challenge: await oidc.calculatePKCECodeChallenge(this.derived('pkce', state)),
      code_challenge_method: 'S256',
    });
    return { authorization_url: url.toString(), state, redirect_uri: redirectUri };
  }

  /**
   * The PKCE verifier and the nonce are derived from the state with a server key instead of being stored: the
   * database then holds no usable secret of an in-flight login (only the state's digest), and the verifier
   * never leaves the server.
   */
  private derived(purpose: 'pkce' | 'nonce', state: string): string {
    return hmacSha256(this.deps.secrets.sudo, `hearth-sso-${purpose}:${state}`).toString('base64url');
  }

  async complete(input: { code: string; state: string }, ctx: { ip: string; ipKey: string; now: number }) {
    const sso = this.active();
    const consumed = await this.deps.tokens.consume<StateData>('sso_state', input.state);
    if (!consumed) throw invalidState();
    const data = consumed.data;
    // A state minted for another provider configuration must not complete against the current one.
    if (
      !constantTimeEqual(data.issuer ?? '', sso.issuer ?? '') ||
      data.client_id !== sso.client_id ||
      data.redirect_uri !== ssoRedirectUri(this.deps.config)
    )
      throw invalidState();

    const config = await this.configuration(sso);
    const callback = new URL(data.redirect_uri);
    callback.searchParams.set('code', input.code);
    callback.searchParams.set('state', input.state);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: this.derived('pkce', input.state),
        expectedNonce: this.derived('nonce', input.state),
        expectedState: input.state,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.refusal('token', error);
    } finally {
      this.keepJwks(sso, config);
    }
    const claims = tokens.claims();
    if (!claims) throw invalidToken();
    const subject = claims.sub;
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > 255) throw invalidToken();
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== sso.client_id) throw invalidToken();
    const profile = await this.emailClaims(config, { ...claims }, tokens.access_token, subject);

    const email = typeof profile.email === 'string' ? profile.email.trim() : '';
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
      throw mismatch('The identity provider did not return an email address');
    if (profile.email_verified !== true && profile.email_verified !== 'true')
      throw mismatch('The identity provider has not verified this email address');
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (sso.allowed_domains.length > 0 && !sso.allowed_domains.includes(domain))
      throw mismatch('This email domain is not allowed to sign in');

    const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);
    const resolved = await resolveAccount(
      this.deps,
      this.identities,
      sso,
      {
        issuer: config.serverMetadata().issuer,
        subject,
        email,
        name: text(profile.name),
        preferredUsername: text(profile.preferred_username),
      },
      ctx,
    );
    assertNotSuspended(resolved, ctx.now);
    const user: UserRecord = await reactivate(this.deps, resolved);
    return { user, redirectTo: data.redirect_to };
  }

  /**
   * Email claims come from the ID token when the provider puts them there, otherwise from userinfo
   * (a conforming provider returns scope-requested claims only at userinfo in the code flow), which must be
   * for the same subject (OpenID Connect Core §5.3.2; openid-client checks it). The claims stay an open map: any
   * provider may add its own; only `email`, `email_verified`, `name` and `preferred_username` are read, each checked.
   */
  private async emailClaims(
    config: oidc.Configuration,
    claims: Record<string, unknown>,
    accessToken: string | undefined,
    subject: string,
  ): Promise<Record<string, unknown>> {
    if (typeof claims.email === 'string' || !config.serverMetadata().userinfo_endpoint || !accessToken) return claims;
    try {
      const info = await oidc.fetchUserInfo(config, accessToken, subject);
      return { ...claims, ...info, sub: subject };
    } catch (error) {
      throw this.refusal('userinfo', error);
    }
  }

  /**
   * A refused code or token (the provider's 4xx, a token that fails validation) is the caller's problem:
   * `INVALID_SSO_TOKEN`. A provider that cannot be reached or answers 5xx is ours: logged, 503.
   */
  private refusal(step: string, error: unknown): ApiError {
    const unreachable = failureReason(error);
    if (unreachable) {
      this.logProviderFailure(step, new IdpUnreachable(unreachable));
      return providerDown();
    }
    const status =
      error instanceof oidc.ResponseBodyError
        ? error.status
        : error instanceof oidc.ClientError && error.cause instanceof Response
          ? error.cause.status
          : undefined;
    if (status !== undefined && status >= 500) {
      this.logProviderFailure(step, new Error(`status ${status}`));
      return providerDown();
    }
    if (error instanceof oidc.ClientError || error instanceof oidc.ResponseBodyError) return invalidToken();
    this.logProviderFailure(step, error);
    return providerDown();
  }

  private logProviderFailure(step: string, error: unknown): void {
    const reason = error instanceof IdpUnreachable ? error.reason : error instanceof Error ? error.message : 'unknown';
    this.deps.log.warn('sso provider request failed', { step, reason });
  }
}
