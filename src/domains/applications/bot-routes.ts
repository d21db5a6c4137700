import type { AppServices } from '../../app-services.ts';
import { parseAuthorization } from '../../http/auth/authorization.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, type RequestContext, route } from '../../http/route.ts';
import { gatewayUrl } from '../discovery/urls.ts';
import { ApplicationsRepository } from './applications-repository.ts';
import { currentBotApplicationView } from './views.ts';

/** `/gateway/bot` strips one `Bot ` or `Bearer ` prefix in any case, or none (api.md §3.4). */
const GATEWAY_PREFIX = /^(?:bot|bearer) /i;
const GATEWAY_TOKEN_FORM = /^\d+\.\S+$/;
/** `/applications/@me`: the `Bot` prefix in any case, then exactly one space and a well-formed bot token. */
const BOT_PREFIX = /^bot(?=\s|$)/i;
const BOT_TOKEN_FORM = /^(\d{1,20})\.[A-Za-z0-9_-]+$/;

/** The form check of `/gateway/bot`: success proves nothing about validity (contract §4). */
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
  // "Bot  x" (two spaces) is a padded token, which contract §5.1 rejects as malformed.
  if (header.charAt(3) !== ' ') return { kind: 'malformed' };
  const token = header.slice(4);
  const match = BOT_TOKEN_FORM.exec(token);
  return match ? { kind: 'bot', token, applicationId: match[1] as string } : { kind: 'malformed' };
}

export function botRoutes(services: AppServices): AnyRoute[] {
  const { config, credentials, users } = services;
  const apps = new ApplicationsRepository(services.db);

  /** Self-parsed routes count their own unresolved credentials toward the IP-ban trigger (api.md §5.3). */
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
            // an Admin key outside /admin is ignored without a failure signal (api.md §1.5.4).
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
            return currentBotApplicationView(app, owner, principal.user);
          }
        }
      },
    }),
  ];
}
