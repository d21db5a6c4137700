import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { nullableText } from '../../http/fields.ts';
import { type AnyRoute, type RateLimitSpec, route } from '../../http/route.ts';
import { USER_FLAGS } from '../../identity/flags.ts';
import { partialUser, type UserRecord, type UserRow } from '../../identity/user-record.ts';
import { digest } from '../../platform/crypto/tokens.ts';
import { usernameField } from '../auth/account-rules.ts';
import { pathId } from '../chat/access.ts';
import { OAUTH_SCOPES } from '../oauth2/scopes.ts';
import { applyProfileChanges } from '../users/profile-changes.ts';
import { announceUserUpdate, type UserUpdateDeps } from '../users/user-updates.ts';
import { applyApplicationPatch, nameField, patchBody, withVerifyKey } from './application-updates.ts';
import type { ApplicationRecord } from './applications-repository.ts';
import { type BotRoutesDeps, botRoutes } from './bot-routes.ts';
import { announceBotRevoked, newClientSecret } from './credentials.ts';
import { redirectUrisField } from './redirect-uris.ts';
import { type ApplicationView, applicationView, botView, currentBotApplicationView } from './views.ts';

const READ: RateLimitSpec = { bucket: 'applications:read', limit: 60, windowSeconds: 60 };
const WRITE: RateLimitSpec = { bucket: 'applications:write', limit: 20, windowSeconds: 10 };
const CREATE: RateLimitSpec = { bucket: 'applications:create', limit: 10, windowSeconds: 3600 };
const RESET: RateLimitSpec = { bucket: 'applications:reset', limit: 10, windowSeconds: 3600 };

/** The bot flags an owner may set (docs/oauth2.md#applications): FRIENDLY_BOT and FRIENDLY_BOT_MANUAL_APPROVAL. */
const SETTABLE_BOT_FLAGS = USER_FLAGS.FRIENDLY_BOT | USER_FLAGS.FRIENDLY_BOT_MANUAL_APPROVAL;

const createBody = z.object({
  name: nameField,
  redirect_uris: redirectUrisField.nullish(),
  bot_public: z.boolean().nullish(),
  bot_require_code_grant: z.boolean().nullish(),
  public_client: z.boolean().nullish(),
});

const imageField = z
  .string()
  .max(10 * 1024 * 1024)
  .nullish();

const patchBotBody = z.object({
  username: usernameField.optional(),
  avatar: imageField,
  banner: imageField,
  bio: nullableText(320),
  bot_flags: z.number().int().min(0).optional(),
});

/** A bot username from the application name: the username alphabet, at most 32 characters. */
function botUsernameFrom(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 32);
  return cleaned || 'bot';
}

/**
 * What the applications domain's routes use of the composition root's services, the bot's own routes included
 * (docs/architecture.md#narrow-dependencies).
 */
export type ApplicationRoutesDeps = BotRoutesDeps &
  UserUpdateDeps &
  Pick<
    AppServices,
    | 'applications'
    | 'bus'
    | 'credentials'
    | 'db'
    | 'ids'
    | 'interactionKeys'
    | 'interactionsEndpoint'
    | 'media'
    | 'tokenCheck'
    | 'users'
  >;

export function applicationRoutes(services: ApplicationRoutesDeps): AnyRoute[] {
  const { db, ids, users, credentials, interactionKeys } = services;
  const apps = services.applications;

  /** The owner's view, with the application's `verify_key` (made now for an application that has none). */
  async function ownerView(
    app: ApplicationRecord,
    bot: UserRecord | undefined,
    secrets: { clientSecret?: string; botToken?: string } = {},
  ): Promise<ApplicationView> {
    const keyed = await withVerifyKey(services, app);
    return applicationView(keyed.app, bot, keyed.verifyKey, secrets);
  }

  async function botOf(app: ApplicationRecord): Promise<UserRecord | undefined> {
    return app.botUserId ? users.findById(app.botUserId, { fresh: true }) : undefined;
  }

  /** `{id}` routes: owner only (else 403), unknown or built-in Admin application 404. */
  async function ownedApplication(rawId: string | undefined, user: UserRecord): Promise<ApplicationRecord> {
    const app = await apps.findById(pathId(rawId, 'UNKNOWN_APPLICATION'));
    if (!app || app.isAdminBuiltin) throw new ApiError('UNKNOWN_APPLICATION');
    if (app.ownerId !== user.id) throw new ApiError('ACCESS_DENIED');
    return app;
  }

  async function listView(ownerId: string): Promise<ApplicationView[]> {
    const owned = await apps.listByOwner(ownerId);
    const botIds = owned.flatMap((app) => (app.botUserId ? [app.botUserId] : []));
    // One read for every bot user, as fresh as `botOf` and cached the same way.
    const seen = users.version;
    const rows =
      botIds.length > 0 ? await db.query<UserRow>('SELECT * FROM users WHERE id = ANY($1::bigint[])', [botIds]) : [];
    const bots = new Map(rows.map((row) => [row.id, users.remember(row, seen)]));
    const views: ApplicationView[] = [];
    for (const app of owned) views.push(await ownerView(app, app.botUserId ? bots.get(app.botUserId) : undefined));
    return views;
  }

  async function reload(id: string): Promise<ApplicationRecord> {
    const app = await apps.findById(id);
    if (!app) throw new ApiError('UNKNOWN_APPLICATION');
    return app;
  }

  return [
    route({
      method: 'POST',
      path: '/oauth2/applications',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: CREATE,
      body: createBody,
      async handler(ctx) {
        const id = ids.next();
        const clientSecret = newClientSecret();
        const botToken = services.tokenCheck.newBotToken(id);
        const keys = interactionKeys.newPair(id);
        const created = await apps.create({
          id,
          ownerId: ctx.user.id,
          name: ctx.body.name,
          redirectUris: ctx.body.redirect_uris ?? [],
          botPublic: ctx.body.bot_public ?? true,
          botRequireCodeGrant: ctx.body.bot_require_code_grant ?? false,
          publicClient: ctx.body.public_client ?? false,
          clientSecretHash: digest(clientSecret),
          botUsername: botUsernameFrom(ctx.body.name),
          botTokenHash: digest(botToken),
          createdAt: new Date(ctx.now),
          verifyKey: keys.verifyKey,
          sealedPrivateKey: keys.sealedPrivateKey,
        });
        if (!created) throw new ApiError('MAX_APPLICATIONS');
        const app = await reload(id);
        return ownerView(app, await botOf(app), { clientSecret, botToken });
      },
    }),

    route({
      method: 'GET',
      path: '/users/@me/applications',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: READ,
      handler: (ctx) => listView(ctx.user.id),
    }),

    route({
      method: 'GET',
      path: '/oauth2/applications/@me',
      policy: 'user',
      admitsSuspicious: true,
      rateLimit: READ,
      async handler(ctx) {
        const principal = ctx.principal;
        if (principal?.kind !== 'bot') return listView(ctx.user.id);
        const app = await apps.findById(principal.applicationId);
        if (!app) throw new ApiError('UNKNOWN_APPLICATION');
        const owner = app.ownerId ? await users.findById(app.ownerId) : undefined;
        const keyed = await withVerifyKey(services, app);
        return currentBotApplicationView(keyed.app, owner, ctx.user, keyed.verifyKey);
      },
    }),

    // The same owner routes under Discord's paths (`/applications/{id}`, what its developer portal calls).
    ...['/oauth2/applications/:applicationId', '/applications/:applicationId'].flatMap((path) => [
      route({
        method: 'GET',
        path,
        policy: 'user-only',
        admitsSuspicious: true,
        rateLimit: READ,
        async handler(ctx) {
          const app = await ownedApplication(ctx.params.applicationId, ctx.user);
          return ownerView(app, await botOf(app));
        },
      }),
      route({
        method: 'PATCH',
        path,
        policy: 'user-only',
        admitsSuspicious: true,
        rateLimit: WRITE,
        body: patchBody,
        async handler(ctx) {
          const app = await ownedApplication(ctx.params.applicationId, ctx.user);
          await applyApplicationPatch(services, app, ctx.body);
          const updated = await reload(app.id);
          return ownerView(updated, await botOf(updated));
        },
      }),
    ]),

    route({
      method: 'DELETE',
      path: '/oauth2/applications/:applicationId',
      policy: 'user-only',
      admitsSuspicious: true,
      sudo: 'y',
      rateLimit: WRITE,
      async handler(ctx) {
        const app = await ownedApplication(ctx.params.applicationId, ctx.user);
        const grantHolders = await apps.delete(app, USER_FLAGS.DELETED);
        for (const userId of grantHolders) await credentials.invalidate({ userId });
        if (app.botUserId) await announceBotRevoked(services, app.botUserId, app.id);
        return undefined;
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/applications/:applicationId/bot/reset-token',
      policy: 'user-only',
      admitsSuspicious: true,
      sudo: 'y',
      rateLimit: RESET,
      async handler(ctx) {
        const app = await ownedApplication(ctx.params.applicationId, ctx.user);
        const bot = await botOf(app);
        if (!bot || !app.botUserId) throw new ApiError('UNKNOWN_APPLICATION');
        const token = services.tokenCheck.newBotToken(app.id);
        await apps.setBotTokenHash(app.id, digest(token));
        await announceBotRevoked(services, app.botUserId, app.id);
        return { token, bot: botView(bot) };
      },
    }),

    route({
      method: 'POST',
      path: '/oauth2/applications/:applicationId/client-secret/reset',
      policy: 'user-only',
      admitsSuspicious: true,
      sudo: 'y',
      rateLimit: RESET,
      async handler(ctx) {
        const app = await ownedApplication(ctx.params.applicationId, ctx.user);
        const clientSecret = newClientSecret();
        await apps.setClientSecretHash(app.id, digest(clientSecret));
        const updated = await reload(app.id);
        return ownerView(updated, await botOf(updated), { clientSecret });
      },
    }),

    route({
      method: 'GET',
      path: '/oauth2/applications/:applicationId/public',
      policy: 'none',
      rateLimit: READ,
      async handler(ctx) {
        const app = await apps.findById(pathId(ctx.params.applicationId, 'UNKNOWN_APPLICATION'));
        if (!app || app.isAdminBuiltin) throw new ApiError('UNKNOWN_APPLICATION');
        const bot = await botOf(app);
        const caller = ctx.principal?.kind === 'session' ? ctx.principal.user : undefined;
        return {
          id: app.id,
          name: app.name,
          icon: app.icon,
          description: null,
          redirect_uris: app.redirectUris,
          scopes: bot ? [...OAUTH_SCOPES] : OAUTH_SCOPES.filter((s) => s !== 'bot'),
          bot_public: app.botPublic,
          bot: bot ? partialUser(bot) : null,
          current_user: caller ? partialUser(caller) : null,
        };
      },
    }),

    route({
      method: 'PATCH',
      path: '/oauth2/applications/:applicationId/bot',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: WRITE,
      body: patchBotBody,
      async handler(ctx) {
        const app = await ownedApplication(ctx.params.applicationId, ctx.user);
        const bot = await botOf(app);
        if (!bot) throw new ApiError('UNKNOWN_APPLICATION');
        const body = ctx.body;
        if (body.bot_flags !== undefined && (BigInt(body.bot_flags) & ~SETTABLE_BOT_FLAGS) !== 0n) {
          throw fieldError('bot_flags', 'INVALID_FORMAT', 'Only bits 4 and 5 may be set');
        }
        const updated = await applyProfileChanges(services, bot.id, body, {
          extraColumns(columns) {
            if (body.bot_flags !== undefined) {
              const mask = columns.param(SETTABLE_BOT_FLAGS.toString());
              const bits = columns.param(BigInt(body.bot_flags).toString());
              columns.assign('flags', `(flags & ~(${mask}::bigint)) | ${bits}::bigint`);
            }
          },
        });
        if (!updated) throw new ApiError('UNKNOWN_APPLICATION');
        await announceUserUpdate(services, updated.id, { before: bot });
        const { token: _token, mfa_enabled: _m, authenticator_types: _a, ...view } = botView(updated);
        return view;
      },
    }),
    // The bot's own view of its application (`/applications/@me`, `/gateway/bot`).
    ...botRoutes(services),
  ];
}
