import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, type RequestContext, route } from '../../http/route.ts';
import { effectiveSuspiciousFlags } from '../../identity/flags.ts';
import type { ApplicationRecord } from '../applications/applications-repository.ts';
import { ApplicationsRepository } from '../applications/applications-repository.ts';
import {
  type AuthorizationInput,
  type AuthorizationRequest,
  checkRedirectUri,
  redirectWith,
  resolveClient,
  validateAuthorization,
} from './authorization-request.ts';
import { authenticateClient, type ClientParams, parseClientParams } from './client-request.ts';
import { ACCESS_TOKEN_TTL_MS, GrantStore, type IssuedTokens } from './grant-store.ts';
import { isInvalidClient, oauthError } from './oauth-errors.ts';
import { verifierMatches } from './pkce.ts';
import { covers, formatScopes, parseScopes } from './scopes.ts';

/** Optional text member: `null` counts as absent. */
const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? undefined);
/** Ids and bitfields arrive as decimal strings or JSON integers (api.md §1.2). */
const decimal = z
  .union([z.string().max(32), z.number().int().min(0)])
  .nullish()
  .transform((v) => (v === null || v === undefined ? undefined : String(v)));

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
});

const CLIENT_ENDPOINT_LIMIT = 120;

export function oauth2ProviderRoutes(services: AppServices): AnyRoute[] {
  const { config, db, credentials } = services;
  const apps = new ApplicationsRepository(db);
  const grants = new GrantStore(db, services.ids);
  // Read per request: configuration is the source of truth, and tests settle the public URLs after start.
  const webapp = () => new URL(config.webappUrl).origin;

  /** Client authentication, counting failures toward the IP-ban trigger (api.md §5.3). */
  /** Revocation and introspection start alike: authenticate the client, then read the required `token`. */
  async function clientTokenRequest(ctx: RequestContext): Promise<{ app: ApplicationRecord; token: string }> {
    const params = parseClientParams(ctx.request.headers['content-type'], ctx.rawBody);
    const app = await authenticatedClient(ctx, params);
    const token = params.get('token');
    if (!token) throw oauthError('invalid_request', 'token is required');
    return { app, token };
  }

  async function authenticatedClient(ctx: RequestContext, params: ClientParams): Promise<ApplicationRecord> {
    try {
      return await authenticateClient(apps, ctx.request.headers.authorization, params);
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

  function tokenResponse(ctx: RequestContext, tokens: IssuedTokens): Record<string, unknown> {
    // RFC 6749 §5.1: token responses must not be cached.
    ctx.reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    return {
      access_token: tokens.accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: tokens.refreshToken,
      scope: formatScopes(tokens.scopes),
    };
  }

  async function exchangeCode(ctx: RequestContext, app: ApplicationRecord, params: ClientParams) {
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
    if (redemption.codeChallenge === null) {
      if (verifier !== undefined) throw oauthError('invalid_grant', 'No code challenge was sent for this code');
    } else if (verifier === undefined || !verifierMatches(verifier, redemption.codeChallenge)) {
      throw oauthError('invalid_grant', 'The code verifier does not match');
    }
    return tokenResponse(ctx, await grants.issueTokens(redemption.grantId, redemption.scopes, ctx.now));
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
    return tokenResponse(ctx, await grants.issueTokens(redemption.grantId, narrowed ?? redemption.scopes, ctx.now));
  }

  async function issueAuthorizationCode(userId: string, request: AuthorizationRequest, now: number, uri: string) {
    const grantId = await grants.upsertGrant(userId, request.app.id, request.scopes, now);
    return grants.issueCode({
      grantId,
      redirectUri: uri,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge,
      now,
    });
  }

  function redirect(ctx: RequestContext, location: string): typeof REPLY_SENT {
    ctx.reply.code(302).header('Location', location).header('Cache-Control', 'no-store').send();
    return REPLY_SENT;
  }

  return [
    route({
      method: 'GET',
      path: '/oauth2/authorize',
      policy: 'none',
      rateLimit: { bucket: 'oauth2:authorize', limit: 60, windowSeconds: 60 },
      async handler(ctx) {
        const query = (ctx.query ?? {}) as Record<string, string | undefined>;
        if (query.prompt !== 'none') {
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
        const grant = user && !request.install ? await grants.findGrant(user.id, app.id) : undefined;
        const suspicious = user
          ? effectiveSuspiciousFlags(user.suspiciousActivityFlags, user.emailVerified) !== 0
          : true;
        if (!user || !grant || suspicious || !covers(grant.scopes, request.scopes))
          return redirect(ctx, redirectWith(redirectUri, { error: 'consent_required', state }));
        const code = await issueAuthorizationCode(user.id, request, ctx.now, redirectUri);
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
        const code = await issueAuthorizationCode(ctx.user.id, request, ctx.now, request.redirectUri);
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
        const app = await authenticatedClient(ctx, params);
        const grantType = params.get('grant_type');
        if (grantType === 'authorization_code') return exchangeCode(ctx, app, params);
        if (grantType === 'refresh_token') return refresh(ctx, app, params);
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
        const { app, token } = await clientTokenRequest(ctx);
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
        const { app, token } = await clientTokenRequest(ctx);
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
