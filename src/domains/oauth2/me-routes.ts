import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, type RateLimitSpec, route } from '../../http/route.ts';
import { partialUser, publicFlags } from '../../identity/user-record.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import { type ApplicationSummaryView, applicationSummary } from '../applications/views.ts';
import { pathId } from '../chat/access.ts';
import { userClaims } from './oidc-claims.ts';

const READ: RateLimitSpec = { bucket: 'oauth2:me', limit: 100, windowSeconds: 10 };
const WRITE: RateLimitSpec = { bucket: 'oauth2:authorizations:write', limit: 20, windowSeconds: 10 };

const snowflakeText = z.union([z.string().max(32), z.number().int().min(0)]).transform(String);
const revokeBody = z.object({ application_ids: z.array(snowflakeText).min(1).max(100) });

/** One entry of `GET /oauth2/@me/authorizations`: an application the user granted, with what and since when. */
export type AuthorizationView = { application: ApplicationSummaryView; scopes: string[]; authorized_at: string };

/** What `oauth2MeRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type Oauth2MeRoutesDeps = Pick<AppServices, 'applications' | 'credentials' | 'grants'>;

/** What an access token can read about itself and what a user can see and revoke of their grants. */
export function oauth2MeRoutes(services: Oauth2MeRoutesDeps): AnyRoute[] {
  const { credentials, grants, applications: apps } = services;

  /** Revoked grants take their tokens with them; the cached bearer bindings must go too. */
  async function revoke(userId: string, applicationIds: string[]): Promise<void> {
    if ((await grants.revokeGrantsOf(userId, applicationIds)) > 0) await credentials.invalidate({ userId });
  }

  return [
    route({
      method: 'GET',
      path: '/oauth2/@me',
      policy: 'oauth2',
      rateLimit: READ,
      async handler(ctx) {
        const principal = ctx.principal;
        if (principal?.kind !== 'bearer' || ctx.credential.kind !== 'bearer') throw new ApiError('UNAUTHORIZED');
        const app = await apps.findById(principal.applicationId);
        const expires = await grants.accessTokenExpiry(ctx.credential.token);
        if (!app || !expires) throw new ApiError('UNAUTHORIZED');
        const scopes = [...principal.scopes];
        const user = ctx.user;
        return {
          application: applicationSummary(app),
          scopes,
          expires: expires.toISOString(),
          ...(principal.scopes.has('identify')
            ? {
                user: {
                  ...partialUser(user),
                  ...(principal.scopes.has('email') ? { email: user.email, verified: user.emailVerified } : {}),
                },
              }
            : {}),
        };
      },
    }),

    route({
      method: 'GET',
      path: '/oauth2/userinfo',
      policy: 'oauth2',
      scope: 'identify',
      orScope: 'openid',
      rateLimit: READ,
      handler(ctx) {
        const user = ctx.user;
        const scopes = ctx.principal?.kind === 'bearer' ? [...ctx.principal.scopes] : [];
        const withEmail = scopes.includes('email');
        // OpenID Connect standard claims for tokens that asked for them (`openid` or `profile`).
        const standard = scopes.includes('openid') || scopes.includes('profile') ? userClaims(user, scopes) : {};
        return {
          sub: user.id,
          ...(scopes.includes('identify')
            ? {
                id: user.id,
                username: user.username,
                discriminator: '0001',
                global_name: user.globalName,
                avatar: user.avatar,
                flags: publicFlags(user),
              }
            : {}),
          ...(withEmail && scopes.includes('identify') ? { email: user.email, verified: user.emailVerified } : {}),
          ...standard,
        };
      },
    }),

    route({
      method: 'GET',
      path: '/oauth2/@me/authorizations',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: READ,
      async handler(ctx) {
        const rows = await grants.listGrants(ctx.user.id);
        const found = await apps.findByIds(rows.map((grant) => grant.applicationId));
        const out: AuthorizationView[] = [];
        for (const grant of rows) {
          const app = found.get(grant.applicationId);
          if (!app) continue;
          out.push({
            application: applicationSummary(app),
            scopes: grant.scopes,
            authorized_at: grant.createdAt.toISOString(),
          });
        }
        return out;
      },
    }),

    route({
      method: 'DELETE',
      path: '/oauth2/@me/authorizations/:applicationId',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: WRITE,
      async handler(ctx) {
        await revoke(ctx.user.id, [pathId(ctx.params.applicationId, 'UNKNOWN_APPLICATION')]);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/@me/authorizations/revoke',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: WRITE,
      body: revokeBody,
      async handler(ctx) {
        const ids: string[] = [];
        for (const [index, raw] of ctx.body.application_ids.entries()) {
          const id = parseSnowflake(raw);
          if (!id.ok)
            throw fieldError(`application_ids.${index}`, 'INVALID_SNOWFLAKE_FORMAT', 'Invalid application id');
          ids.push(id.value);
        }
        await revoke(ctx.user.id, ids);
        return undefined;
      },
    }),
  ];
}
