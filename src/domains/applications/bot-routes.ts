import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { parseAuthorization } from '../../http/auth/authorization.ts';
import { ApiError } from '../../http/errors.ts';
import { nullableText } from '../../http/fields.ts';
import { type AnyRoute, type RequestContext, route } from '../../http/route.ts';
import { gatewayUrl } from '../discovery/urls.ts';
import { applyApplicationPatch, withVerifyKey } from './application-updates.ts';
import { MAX_ENDPOINT_URL_LENGTH } from './interactions-endpoint.ts';
import { currentBotApplicationView } from './views.ts';

/**
 * `PATCH /applications/@me` (Discord's "Edit Current Application"): of its fields, the ones Hearth keeps.
 * Others (`icon`, `tags`, `install_params`, …) are accepted and ignored, as unknown fields are elsewhere.
 */
const currentApplicationPatch = z.object({
  description: nullableText(400),
  interactions_endpoint_url: nullableText(4 * MAX_ENDPOINT_URL_LENGTH),
});

/** `/gateway/bot` strips one `Bot ` or `Bearer ` prefix in any case, or none (docs/oauth2.md#applications). */
const GATEWAY_PREFIX = /^(?:bot|bearer) /i;
const GATEWAY_TOKEN_FORM = /^\d+\.\S+$/;
/** `/applications/@me`: the `Bot` prefix in any case, then exactly one space and a well-formed bot token. */
const BOT_PREFIX = /^bot(?=\s|$)/i;
const BOT_TOKEN_FORM = /^(\d{1,20})\.[A-Za-z0-9_-]+$/;

/** The form check of `/gateway/bot`: success proves nothing about validity (docs/conventions.md). */
export function hasGatewayBotTokenForm(header: string | undefined): boolean {
  if (header === undefined) return false;
  const token = header.replace(GATEWAY_PREFIX, '');
  return GATEWAY_TOKEN_FORM.test(token) && !token.startsWith('flx_');
}

export type BotHeaderRead =
  | { kind: 'missing' }
  | { kind: 'not-bot' }
  | { kind: 'malformed' }
  | { kind: 'bot'; token: string; applicationId: string };

/** Reads the header of `/applications/@me`, the one route that requires the `Bot` prefix itself. */
export function readBotHeader(header: string | undefined): BotHeaderRead {
  if (header === undefined) return { kind: 'missing' };
  if (!BOT_PREFIX.test(header)) return { kind: 'not-bot' };
  // "Bot  x" (two spaces) is a padded token, which docs/conventions.md#the-authorization-header rejects as malformed.
  if (header.charAt(3) !== ' ') return { kind: 'malformed' };
  const token = header.slice(4);
  const match = BOT_TOKEN_FORM.exec(token);
  return match ? { kind: 'bot', token, applicationId: match[1] as string } : { kind: 'malformed' };
}

/** What `botRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type BotRoutesDeps = Pick<
  AppServices,
  | 'applications'
  | 'config'
  | 'credentials'
  | 'ids'
  | 'interactionKeys'
  | 'interactionsEndpoint'
  | 'recordAuthFailure'
  | 'users'
>;

export function botRoutes(services: BotRoutesDeps): AnyRoute[] {
  const { config, credentials, users } = services;
  const apps = services.applications;

  /** Self-parsed routes count their own unresolved credentials toward the IP-ban trigger (docs/conventions.md#ip-bans). */
  async function refuse(ctx: RequestContext, code: 'UNAUTHORIZED' | 'INVALID_TOKEN'): Promise<never> {
    await services.recordAuthFailure(ctx.ip, ctx.request.hearth.strict);
    throw new ApiError(code);
  }

  return [
    route({
      method: 'GET',
      path: '/gateway/bot',
      policy: 'self',
      rateLimit: { bucket: 'gateway:bot', limit: 60, windowSeconds: 60 },
      async handler(ctx) {
        const header = ctx.request.headers.authorization;
        if (header === undefined) throw new ApiError('UNAUTHORIZED');
        if (!hasGatewayBotTokenForm(header)) return refuse(ctx, 'UNAUTHORIZED');
        return {
          url: gatewayUrl(config),
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
        };
      },
    }),

    route({
      method: 'GET',
      path: '/applications/@me',
      policy: 'self',
      rateLimit: { bucket: 'applications:me', limit: 60, windowSeconds: 60 },
      async handler(ctx) {
        const header = ctx.request.headers.authorization;
        const read = readBotHeader(header);
        switch (read.kind) {
          case 'missing':
            throw new ApiError('UNAUTHORIZED');
          case 'malformed':
            return refuse(ctx, 'UNAUTHORIZED');
          case 'not-bot': {
            // A working credential of another kind is not a failed authentication, only the wrong one here;
            // an Admin key outside /admin is ignored without a failure signal (docs/conventions.md#the-authorization-header).
            const parsed = parseAuthorization(header, { adminArea: false });
            if (parsed.kind === 'none' || (await credentials.resolve(parsed))) throw new ApiError('INVALID_TOKEN');
            return refuse(ctx, 'INVALID_TOKEN');
          }
          case 'bot': {
            const principal = await credentials.resolve({
              kind: 'bot',
              token: read.token,
              applicationId: read.applicationId,
            });
            if (principal?.kind !== 'bot') return refuse(ctx, 'UNAUTHORIZED');
            const app = await apps.findById(principal.applicationId);
            if (!app || app.isAdminBuiltin) return refuse(ctx, 'UNAUTHORIZED');
            const owner = app.ownerId ? await users.findById(app.ownerId) : undefined;
            const keyed = await withVerifyKey(services, app);
            return currentBotApplicationView(keyed.app, owner, principal.user, keyed.verifyKey);
          }
        }
      },
    }),

    route({
      method: 'PATCH',
      path: '/applications/@me',
      policy: 'bot',
      rateLimit: { bucket: 'applications:write', limit: 20, windowSeconds: 10 },
      body: currentApplicationPatch,
      async handler(ctx) {
        const principal = ctx.principal;
        if (principal?.kind !== 'bot') throw new ApiError('ACCESS_DENIED');
        const app = await apps.findById(principal.applicationId);
        if (!app || app.isAdminBuiltin) throw new ApiError('UNKNOWN_APPLICATION');
        await applyApplicationPatch(services, app, ctx.body);
        const updated = await apps.findById(app.id);
        if (!updated) throw new ApiError('UNKNOWN_APPLICATION');
        const owner = updated.ownerId ? await users.findById(updated.ownerId) : undefined;
        const keyed = await withVerifyKey(services, updated);
        return currentBotApplicationView(keyed.app, owner, ctx.user, keyed.verifyKey);
      },
    }),
  ];
}
