import { createHash } from 'node:crypto';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { constantTimeEqual, digest, hmacSha256, randomBase62 } from '../../platform/crypto/tokens.ts';
import { assertNotSuspended } from '../auth/account-rules.ts';
import { reactivate } from '../auth/reactivation.ts';
import { ssoRedirectUri } from '../discovery/sso-status.ts';
import { type SsoSettings, ssoConfigured } from '../instance/instance-settings.ts';
import { resolveAccount } from './account-resolution.ts';
import { IdTokenVerifier, InvalidIdToken } from './id-token.ts';
import { IdpUnreachable, idpRequest } from './idp-http.ts';
import { type ProviderEndpoints, ProviderMetadata } from './provider-metadata.ts';
import { SsoIdentities } from './sso-identities.ts';

export const SSO_STATE_TTL_MS = 10 * 60_000;

/** What the state row remembers; the state itself and the nonce are stored only as digests. */
interface StateData {
  nonce_hash: string;
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

/**
 * The OpenID Connect authorization-code flow with PKCE (S256) and a nonce, from `start` (which builds the
 * provider URL) to `complete` (which turns the returned code into a verified identity and an account).
 */
export class SsoFlow {
  private readonly metadata: ProviderMetadata;
  private readonly verifier = new IdTokenVerifier();
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

  async start(input: { redirect_to?: string | null | undefined; redirect_uri?: string | null | undefined }) {
    const sso = this.active();
    const redirectUri = ssoRedirectUri(this.deps.config);
    if (input.redirect_uri && input.redirect_uri !== redirectUri)
      throw fieldError('redirect_uri', 'INVALID_REDIRECT_URI', 'Must equal the configured redirect URI');
    const endpoints = await this.endpoints(sso);

    const nonce = randomBase62(43);
    const data: StateData = {
      nonce_hash: digest(nonce),
      redirect_to: input.redirect_to || null,
      redirect_uri: redirectUri,
      issuer: sso.issuer as string,
      client_id: sso.client_id as string,
    };
    const state = await this.deps.tokens.issue('sso_state', null, SSO_STATE_TTL_MS, { ...data });

    const url = new URL(endpoints.authorizationUrl);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: data.client_id,
      redirect_uri: redirectUri,
      scope: sso.scope,
      state,
      nonce,
      code_challenge: createHash('sha256').update(this.codeVerifier(state)).digest('base64url'),
      code_challenge_method: 'S256',
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return { authorization_url: url.toString(), state, redirect_uri: redirectUri };
  }

  /**
   * The PKCE verifier is derived from the state with a server key instead of being stored: the database
   * then holds no usable secret of an in-flight login (only digests), and the verifier never leaves the server.
   */
  private codeVerifier(state: string): string {
    return hmacSha256(this.deps.secrets.sudo, `hearth-sso-pkce:${state}`).toString('base64url');
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

    const endpoints = await this.endpoints(sso);
    const tokens = await this.exchange(sso, endpoints, input.code, this.codeVerifier(input.state), data.redirect_uri);

    let claims: Record<string, unknown>;
    try {
      claims = await this.verifier.verify({
        idToken: tokens.idToken,
        issuer: endpoints.issuer,
        clientId: sso.client_id as string,
        jwksUrl: endpoints.jwksUrl,
        allowPrivate: sso.allow_private_issuer,
        nonceHash: data.nonce_hash,
        now: this.deps.clock.now(),
      });
    } catch (error) {
      if (error instanceof InvalidIdToken) throw invalidToken();
      this.logProviderFailure('jwks', error);
      throw providerDown();
    }
    const subject = claims.sub as string;
    const profile = await this.emailClaims(claims, endpoints, tokens.accessToken, sso.allow_private_issuer, subject);

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
        issuer: endpoints.issuer,
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

  private async exchange(
    sso: SsoSettings,
    endpoints: ProviderEndpoints,
    code: string,
    verifier: string,
    redirectUri: string,
  ): Promise<{ idToken: string; accessToken: string | null }> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    const headers: Record<string, string> = {};
    const clientId = sso.client_id as string;
    if (sso.client_secret && endpoints.tokenAuthMethods.includes('client_secret_basic')) {
      // RFC 6749 §2.3.1: both parts are form-urlencoded before the Basic encoding.
      const user = encodeURIComponent(clientId);
      const pass = encodeURIComponent(sso.client_secret);
      headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    } else {
      form.set('client_id', clientId);
      if (sso.client_secret) form.set('client_secret', sso.client_secret);
    }
    let res: Awaited<ReturnType<typeof idpRequest>>;
    try {
      res = await idpRequest(endpoints.tokenUrl, { form, headers, allowPrivate: sso.allow_private_issuer });
    } catch (error) {
      this.logProviderFailure('token', error);
      throw providerDown();
    }
    const body = (res.json ?? {}) as Record<string, unknown>;
    // A refused code (invalid_grant, wrong verifier, replay) is the caller's problem; anything else is ours.
    if (res.status !== 200) {
      if (res.status >= 400 && res.status < 500) throw invalidToken();
      this.logProviderFailure('token', new Error(`status ${res.status}`));
      throw providerDown();
    }
    if (typeof body.id_token !== 'string') throw invalidToken();
    return { idToken: body.id_token, accessToken: typeof body.access_token === 'string' ? body.access_token : null };
  }

  /**
   * Email claims come from the ID token when the provider puts them there, otherwise from userinfo
   * (a conforming provider returns scope-requested claims only at userinfo in the code flow).
   */
  private async emailClaims(
    claims: Record<string, unknown>,
    endpoints: ProviderEndpoints,
    accessToken: string | null,
    allowPrivate: boolean,
    subject: string,
  ): Promise<Record<string, unknown>> {
    if (typeof claims.email === 'string' || !endpoints.userinfoUrl || !accessToken) return claims;
    let res: Awaited<ReturnType<typeof idpRequest>>;
    try {
      res = await idpRequest(endpoints.userinfoUrl, {
        headers: { authorization: `Bearer ${accessToken}` },
        allowPrivate,
      });
    } catch (error) {
      this.logProviderFailure('userinfo', error);
      throw providerDown();
    }
    const info = res.json as Record<string, unknown> | undefined;
    if (res.status !== 200 || !info || typeof info !== 'object') throw invalidToken();
    // OpenID Connect Core §5.3.2: userinfo for another subject must not be used.
    if (info.sub !== subject) throw invalidToken();
    return { ...claims, ...info, sub: subject };
  }

  private logProviderFailure(step: string, error: unknown): void {
    const reason = error instanceof IdpUnreachable ? error.reason : error instanceof Error ? error.message : 'unknown';
    this.deps.log.warn('sso provider request failed', { step, reason });
  }
}
