import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, type RequestContext, route } from '../../http/route.ts';
import { effectiveSuspiciousFlags } from '../../identity/flags.ts';
import type { ApplicationRecord } from '../applications/applications-repository.ts';
import {
  type AuthorizationInput,
  type AuthorizationRequest,
  checkRedirectUri,
  redirectWith,
  resolveClient,
  validateAuthorization,
} from './authorization-request.ts';
import {
  type AuthenticatedClient,
  authenticateClient,
  type ClientParams,
  parseClientParams,
} from './client-request.ts';
import { validateLogout } from './end-session.ts';
import { ACCESS_TOKEN_TTL_MS, type IssuedTokens } from './grant-store.ts';
import { issuerOf } from './metadata.ts';
import { isInvalidClient, oauthError } from './oauth-errors.ts';
import { issueIdToken } from './oidc-claims.ts';
import { verifierMatches } from './pkce.ts';
import { covers, formatScopes, parseScopes } from './scopes.ts';
import type { SigningKeys } from './signing-keys.ts';

/** Optional text member: `null` counts as absent. */
const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? undefined);
/** Ids and bitfields arrive as decimal strings or JSON integers (docs/conventions.md#ids-and-time). */
const decimal = z
  .union([z.string().max(32), z.number().int().min(0)])
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : String(v)));

/** RP-initiated logout parameters (docs/oauth2.md#rp-initiated-logout); unknown ones (`ui_locales`, …) are ignored. */
const logoutParams = z.object({
  id_token_hint: optionalText(8192),
  client_id: optionalText(32),
  post_logout_redirect_uri: optionalText(2048),
  state: optionalText(2048),
  logout_hint: optionalText(2048),
  ui_locales: optionalText(256),
});
type LogoutParams = z.infer<typeof logoutParams>;

const consentBody = z.object({
  client_id: z.union([z.string().max(32), z.number().int().min(0)]).transform(String),
  scope: z.string().max(1000),
  redirect_uri: optionalText(2048),
  state: optionalText(2048),
  response_type: optionalText(32),
  permissions: decimal,
  guild_id: decimal,
  code_challenge: optionalText(256),
  code_challenge_method: optionalText(16),
  nonce: optionalText(2048),
  prompt: optionalText(128),
  max_age: decimal,
});

/**
 * `prompt=login` (and `max_age=0`, its equivalent) is satisfied by a sign-in at most this old when the code is
 * issued: the consent page sends the user through the login page and back, then they approve.
 */
export const LOGIN_PROMPT_WINDOW_MS = 60_000;

const CLIENT_ENDPOINT_LIMIT = 120;

/** The token endpoint's answer (RFC 6749 §5.1); `id_token` when `openid` was granted (OpenID Connect Core §3.1.3.3). */
export type TokenResponseView = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  id_token?: string;
};

/** What `oauth2ProviderRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type Oauth2ProviderRoutesDeps = Pick<
  AppServices,
  | 'applications'
  | 'botInstaller'
  | 'config'
  | 'credentials'
  | 'db'
  | 'grants'
  | 'recordAuthFailure'
  | 'sessions'
  | 'users'
>;

export function oauth2ProviderRoutes(services: Oauth2ProviderRoutesDeps, signingKeys: SigningKeys): AnyRoute[] {
  const { config, db, credentials } = services;
  const apps = services.applications;
  const { grants } = services;
  // Read per request: configuration is the source of truth, and tests settle the public URLs after start.
  const webapp = () => new URL(config.webappUrl).origin;

  /**
   * Revocation and introspection start alike: authenticate the client, then read the required `token`.
   * A public client may revoke its tokens (RFC 7009 §5) but not introspect them.
   */
  async function clientTokenRequest(
    ctx: RequestContext,
    allowPublic: boolean,
  ): Promise<{ app: ApplicationRecord; token: string }> {
    const params = parseClientParams(ctx.request.headers['content-type'], ctx.rawBody);
    const { app } = await authenticatedClient(ctx, params, allowPublic);
    const token = params.get('token');
    if (!token) throw oauthError('invalid_request', 'token is required');
    return { app, token };
  }

  /** Client authentication, counting failures toward the IP-ban trigger (docs/conventions.md#ip-bans). */
  async function authenticatedClient(
    ctx: RequestContext,
    params: ClientParams,
    allowPublic: boolean,
  ): Promise<AuthenticatedClient> {
    try {
      return await authenticateClient(apps, ctx.request.headers.authorization, params, { allowPublic });
    } catch (error) {
      if (isInvalidClient(error)) await services.recordAuthFailure(ctx.ip, ctx.request.hearth.strict);
      throw error;
    }
  }

  /** A compromised grant (reused code or refresh token): every token of the user+app pair dies. */
  async function revokeGrant(grantId: string): Promise<void> {
    const userId = await grants.revokeGrant(grantId);
    if (userId) await credentials.invalidate({ userId });
  }

  /**
   * The token response; with `openid` it carries an ID token for `userId` (OpenID Connect Core §3.1.3.3).
   * `nonce` comes only from a code: an ID token from a refresh has none.
   */
  async function tokenResponse(
    ctx: RequestContext,
    app: ApplicationRecord,
    userId: string,
    tokens: IssuedTokens,
    nonce: string | null,
  ): Promise<TokenResponseView> {
    let idToken: string | undefined;
    if (tokens.scopes.includes('openid')) {
      const user = await services.users.findById(userId);
      if (!user) throw oauthError('invalid_grant', 'The account no longer exists');
      idToken = await issueIdToken(signingKeys, {
        issuer: issuerOf(config),
        clientId: app.id,
        user,
        scopes: tokens.scopes,
        authTime: tokens.authTime,
        nonce,
        accessToken: tokens.accessToken,
        now: ctx.now,
      });
    }
    // RFC 6749 §5.1: token responses must not be cached.
    ctx.reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    return {
      access_token: tokens.accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: tokens.refreshToken,
      scope: formatScopes(tokens.scopes),
      ...(idToken !== undefined ? { id_token: idToken } : {}),
    };
  }

  /** When the session behind a request signed in: its creation (a login, registration or SSO return). */
  async function sessionAuthTime(sessionId: string): Promise<Date | undefined> {
    const [row] = await db.query<{ created_at: Date }>('SELECT created_at FROM sessions WHERE id = $1', [sessionId]);
    return row?.created_at;
  }

  /** Whether a sign-in at `authTime` satisfies the request's `prompt=login` and `max_age`. */
  function signInFreshEnough(request: AuthorizationRequest, authTime: Date, now: number): boolean {
    const age = now - authTime.getTime();
    if ((request.prompts.has('login') || request.maxAge === 0) && age > LOGIN_PROMPT_WINDOW_MS) return false;
    return request.maxAge === undefined || request.maxAge === 0 || age <= request.maxAge * 1000;
  }

  async function exchangeCode(ctx: RequestContext, client: AuthenticatedClient, params: ClientParams) {
    const app = client.app;
    const code = params.get('code');
    if (!code) throw oauthError('invalid_request', 'code is required');
    const redemption = await grants.redeemCode(code, app.id, ctx.now);
    if (redemption.status === 'reused') {
      await revokeGrant(redemption.grantId);
      throw oauthError('invalid_grant', 'The authorization code was already used');
    }
    if (redemption.status !== 'ok') throw oauthError('invalid_grant', 'Unknown or expired authorization code');
    // The code is spent before these checks, so a wrong verifier cannot be retried against it.
    if (params.get('redirect_uri') !== redemption.redirectUri)
      throw oauthError('invalid_grant', 'redirect_uri does not match the authorization request');
    const verifier = params.get('code_verifier');
    // A client without a secret proves the code with PKCE only (a code issued before it became public has none).
    if (client.method === 'none' && redemption.codeChallenge === null)
      throw oauthError('invalid_grant', 'A public client must use PKCE');
    if (redemption.codeChallenge === null) {
      if (verifier !== undefined) throw oauthError('invalid_grant', 'No code challenge was sent for this code');
    } else if (verifier === undefined || !verifierMatches(verifier, redemption.codeChallenge)) {
      throw oauthError('invalid_grant', 'The code verifier does not match');
    }
    const tokens = await grants.issueTokens(redemption.grantId, redemption.scopes, redemption.authTime, ctx.now);
    return tokenResponse(ctx, app, redemption.userId, tokens, redemption.nonce);
  }

  async function refresh(ctx: RequestContext, app: ApplicationRecord, params: ClientParams) {
    const token = params.get('refresh_token');
    if (!token) throw oauthError('invalid_request', 'refresh_token is required');
    let narrowed: string[] | undefined;
    const scopeParam = params.get('scope');
    if (scopeParam !== undefined) {
      const parsed = parseScopes(scopeParam);
      const held = await grants.findToken(token);
      if (!parsed.ok || (held && !covers(held.scopes, parsed.scopes)))
        throw oauthError('invalid_scope', 'The requested scope exceeds the granted scope');
      narrowed = parsed.scopes;
    }
    const redemption = await grants.redeemRefreshToken(token, app.id, ctx.now);
    if (redemption.status === 'reused') {
      await revokeGrant(redemption.grantId);
      throw oauthError('invalid_grant', 'The refresh token was already used; the grant is revoked');
    }
    if (redemption.status !== 'ok') throw oauthError('invalid_grant', 'Unknown or expired refresh token');
    const scopes = narrowed ?? redemption.scopes;
    const tokens = await grants.issueTokens(redemption.grantId, scopes, redemption.authTime, ctx.now);
    return tokenResponse(ctx, app, redemption.userId, tokens, null);
  }

  async function issueAuthorizationCode(
    userId: string,
    request: AuthorizationRequest,
    authTime: Date,
    now: number,
    uri: string,
  ) {
    const grantId = await grants.upsertGrant(userId, request.app.id, request.scopes, now);
    return grants.issueCode({
      grantId,
      redirectUri: uri,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge,
      nonce: request.nonce,
      authTime,
      now,
    });
  }

  function redirect(ctx: RequestContext, location: string): typeof REPLY_SENT {
    ctx.reply.code(302).header('Location', location).header('Cache-Control', 'no-store').send();
    return REPLY_SENT;
  }

  /**
   * The end-session endpoint: the request is checked here (a bad hint, client or post-logout URI is a 400 that
   * redirects nowhere), then the user's browser goes to the web app's sign-out page with the same parameters;
   * that page asks the user and calls the confirmation route, which checks them again.
   */
  async function startLogout(ctx: RequestContext, params: LogoutParams): Promise<typeof REPLY_SENT> {
    await validateLogout({ apps, keys: signingKeys, issuer: issuerOf(config) }, params, ctx.now);
    const page = new URL(`${webapp()}/oauth2/logout`);
    for (const name of ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const) {
      const value = params[name];
      if (value !== undefined) page.searchParams.set(name, value);
    }
    return redirect(ctx, page.toString());
  }

  return [
    route({
      method: 'GET',
      path: '/oauth2/logout',
      policy: 'none',
      rateLimit: { bucket: 'oauth2:logout', limit: 60, windowSeconds: 60 },
      query: logoutParams,
      handler: (ctx) => startLogout(ctx, ctx.query),
    }),

    route({
      method: 'POST',
      path: '/oauth2/logout',
      policy: 'none',
      bodyKind: 'form',
      rateLimit: { bucket: 'oauth2:logout', limit: 60, windowSeconds: 60 },
      body: logoutParams,
      handler: (ctx) => startLogout(ctx, ctx.body),
    }),

    route({
      method: 'POST',
      path: '/oauth2/logout/confirm',
      policy: 'none',
      rateLimit: { bucket: 'oauth2:logout', limit: 60, windowSeconds: 60 },
      body: logoutParams,
      async handler(ctx) {
        const request = await validateLogout({ apps, keys: signingKeys, issuer: issuerOf(config) }, ctx.body, ctx.now);
        // The caller's own web session ends (a sign-out needs no other proof: the token is in the header, never
        // a cookie, so no other site can send it). Without a session the user is already signed out.
        const principal = ctx.principal;
        const signedOut = principal?.kind === 'session';
        if (signedOut) await services.sessions.revoke(principal.user.id, [principal.sessionIdHash]);
        return { signed_out: signedOut, redirect_to: request.redirectTo ?? null };
      },
    }),

    route({
      method: 'GET',
      path: '/oauth2/authorize',
      policy: 'none',
      rateLimit: { bucket: 'oauth2:authorize', limit: 60, windowSeconds: 60 },
      async handler(ctx) {
        const query = (ctx.query ?? {}) as Record<string, string | undefined>;
        if (!(query.prompt ?? '').split(' ').includes('none')) {
          // The consent page lives in the web app; it calls the consent API, which validates everything.
          const search = ctx.request.url.includes('?') ? ctx.request.url.slice(ctx.request.url.indexOf('?')) : '';
          return redirect(ctx, `${webapp()}/oauth2/authorize${search}`);
        }
        // prompt=none: errors before the redirect URI is known good must not redirect anywhere.
        const app = await resolveClient(apps, { client_id: query.client_id ?? '' });
        const redirectUri = query.redirect_uri;
        if (redirectUri === undefined) throw new ApiError('BAD_REQUEST', { message: 'redirect_uri is required' });
        checkRedirectUri(app, redirectUri);
        const state = query.state;
        let request: AuthorizationRequest;
        try {
          request = validateAuthorization(app, { ...query, client_id: app.id, scope: query.scope ?? '' });
        } catch (error) {
          const field = error instanceof ApiError ? (error.extra.errors as { path: string }[] | undefined) : undefined;
          const invalidScope = field?.[0]?.path === 'scope';
          return redirect(
            ctx,
            redirectWith(redirectUri, { error: invalidScope ? 'invalid_scope' : 'invalid_request', state }),
          );
        }
        const principal = ctx.principal;
        const user = principal?.kind === 'session' ? principal.user : undefined;
        const authTime = principal?.kind === 'session' ? await sessionAuthTime(principal.sessionId) : undefined;
        // OpenID Connect names the missing sign-in `login_required`; plain OAuth2 requests keep `consent_required`.
        if (!user || !authTime)
          return redirect(
            ctx,
            redirectWith(redirectUri, {
              error: request.scopes.includes('openid') ? 'login_required' : 'consent_required',
              state,
            }),
          );
        if (!signInFreshEnough(request, authTime, ctx.now))
          return redirect(ctx, redirectWith(redirectUri, { error: 'login_required', state }));
        const grant = request.install ? undefined : await grants.findGrant(user.id, app.id);
        const suspicious = effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) !== 0;
        if (!grant || suspicious || !covers(grant.scopes, request.scopes))
          return redirect(ctx, redirectWith(redirectUri, { error: 'consent_required', state }));
        const code = await issueAuthorizationCode(user.id, request, authTime, ctx.now, redirectUri);
        return redirect(ctx, redirectWith(redirectUri, { code, state }));
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/authorize/consent',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: { bucket: 'oauth2:consent', limit: 60, windowSeconds: 60 },
      body: consentBody,
      async handler(ctx) {
        const input: AuthorizationInput = ctx.body;
        const app = await resolveClient(apps, input);
        const request = validateAuthorization(app, input);
        const principal = ctx.principal;
        const authTime = principal?.kind === 'session' ? await sessionAuthTime(principal.sessionId) : undefined;
        if (!authTime) throw new ApiError('UNAUTHORIZED');
        // prompt=login / max_age: the consent page sends the user to sign in again and back here.
        if (!signInFreshEnough(request, authTime, ctx.now)) throw new ApiError('LOGIN_REQUIRED');
        if (request.install) {
          if (!app.botPublic && app.ownerId !== ctx.user.id) throw new ApiError('BOT_IS_PRIVATE');
          await services.botInstaller.install({
            guildId: request.install.guildId,
            botUserId: app.botUserId as string,
            applicationName: app.name,
            permissions: request.install.permissions,
            installedBy: ctx.user.id,
          });
        }
        if (request.redirectUri === undefined) return { redirect_to: `${webapp()}/oauth2/authorized` };
        const code = await issueAuthorizationCode(ctx.user.id, request, authTime, ctx.now, request.redirectUri);
        return { redirect_to: redirectWith(request.redirectUri, { code, state: request.state }) };
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/token',
      policy: 'self',
      bodyKind: 'raw',
      rateLimit: { bucket: 'oauth2:token', limit: CLIENT_ENDPOINT_LIMIT, windowSeconds: 60 },
      async handler(ctx) {
        const params = parseClientParams(ctx.request.headers['content-type'], ctx.rawBody);
        const client = await authenticatedClient(ctx, params, true);
        const grantType = params.get('grant_type');
        if (grantType === 'authorization_code') return exchangeCode(ctx, client, params);
        if (grantType === 'refresh_token') return refresh(ctx, client.app, params);
        if (grantType === undefined) throw oauthError('invalid_request', 'grant_type is required');
        throw oauthError('unsupported_grant_type', 'Supported grants: authorization_code, refresh_token');
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/token/revoke',
      policy: 'self',
      bodyKind: 'raw',
      rateLimit: { bucket: 'oauth2:revoke', limit: CLIENT_ENDPOINT_LIMIT, windowSeconds: 60 },
      async handler(ctx) {
        const { app, token } = await clientTokenRequest(ctx, true);
        const info = await grants.findToken(token);
        // RFC 7009 §2.2: unknown tokens, and tokens of other clients, get the same empty 200.
        if (info && info.applicationId === app.id) await revokeGrant(info.grantId);
        ctx.reply.code(200).header('Cache-Control', 'no-store').send();
        return REPLY_SENT;
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/introspect',
      policy: 'self',
      bodyKind: 'raw',
      rateLimit: { bucket: 'oauth2:introspect', limit: CLIENT_ENDPOINT_LIMIT, windowSeconds: 60 },
      async handler(ctx) {
        const { app, token } = await clientTokenRequest(ctx, false);
        ctx.reply.header('Cache-Control', 'no-store');
        const info = await grants.findToken(token);
        const active =
          info !== undefined &&
          info.applicationId === app.id &&
          info.expiresAt.getTime() > ctx.now &&
          (info.kind === 'access' || info.usedAt === null);
        if (!active) return { active: false };
        return {
          active: true,
          client_id: app.id,
          sub: info.userId,
          username: info.username,
          scope: formatScopes(info.scopes),
          token_type: info.kind === 'access' ? 'Bearer' : 'refresh_token',
          exp: Math.floor(info.expiresAt.getTime() / 1000),
          iat: Math.floor(info.createdAt.getTime() / 1000),
        };
      },
    }),
  ];
}
