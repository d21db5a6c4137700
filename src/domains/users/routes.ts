import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { nullableText } from '../../http/fields.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import { hashPassword } from '../../platform/crypto/passwords.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import { isCommonPassword, passwordField, usernameField } from '../auth/account-rules.ts';
import { clientInfoOf } from '../auth/client-info.ts';
import type { EmailTokenApplier } from './email-token.ts';
import { applyProfileChanges } from './profile-changes.ts';
import { type UserSettingsRoutesDeps, userSettingsRoutes } from './settings-routes.ts';
import { announceUserUpdate } from './user-updates.ts';
import { privateUserJson, privateUserView } from './views.ts';

const patchMeBody = z.object({
  username: usernameField.optional(),
  global_name: nullableText(32),
  avatar: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  banner: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  bio: nullableText(320),
  pronouns: nullableText(40),
  accent_color: z.number().int().min(0).max(0xffffff).nullish(),
  new_password: passwordField.optional(),
  email_token: z.string().max(128).optional(),
  email: z.unknown().optional(),
  password: z.string().max(256).optional(),
});

export type PatchMeBody = z.infer<typeof patchMeBody>;

/**
 * What the users domain's routes use of the composition root's services, settings and notes included
 * (docs/architecture.md#narrow-dependencies).
 */
export type UserRoutesDeps = UserSettingsRoutesDeps &
  Pick<
    AppServices,
    'bus' | 'chat' | 'credentials' | 'db' | 'dispatcher' | 'media' | 'mfaView' | 'presences' | 'sessions' | 'users'
  >;

export function userRoutes(services: UserRoutesDeps, applyEmailToken: EmailTokenApplier): AnyRoute[] {
  const { users, sessions } = services;
  return [
    route({
      method: 'GET',
      path: '/users/@me',
      policy: 'user',
      scope: 'identify',
      rateLimit: { bucket: 'users:read', limit: 100, windowSeconds: 10 },
      handler(ctx) {
        const principal = ctx.principal;
        const includeEmail = principal?.kind !== 'bearer' || principal.scopes.has('email');
        return privateUserJson(services, ctx.user, { includeEmail });
      },
    }),

    route({
      method: 'PATCH',
      path: '/users/@me',
      policy: 'user',
      sudo: (body: PatchMeBody) => body.new_password !== undefined || body.email_token !== undefined,
      rateLimit: { bucket: 'users:patch_me', limit: 20, windowSeconds: 60 },
      body: patchMeBody,
      async handler(ctx) {
        const body = ctx.body;
        const user = ctx.user;
        if (body.email !== undefined) {
          throw fieldError(
            'email',
            'EMAIL_MUST_BE_CHANGED_VIA_TOKEN',
            'Email must be changed through the email-change flow',
          );
        }
        if (body.new_password !== undefined && isCommonPassword(body.new_password)) {
          throw fieldError('new_password', 'PASSWORD_IS_TOO_COMMON', 'Password is too common');
        }
        const updated = await applyProfileChanges(services, user.id, body, {
          async extraColumns(columns) {
            if (body.new_password !== undefined) {
              columns.set('password_hash', await hashPassword(body.new_password));
              columns.set('password_last_changed_at', new Date(ctx.now));
            }
          },
          async afterWrite() {
            if (body.email_token !== undefined)
              await applyEmailToken(user.id, body.email_token, { ip: ctx.ip, now: ctx.now });
          },
        });
        if (!updated) throw new ApiError('UNKNOWN_USER');
        const view = await privateUserView(services, updated);
        await announceUserUpdate(services, updated.id, { before: user });
        if (body.new_password !== undefined && !updated.isBot) {
          // A password change ends every session, the caller's too, and hands back a fresh one.
          await sessions.revokeAll(user.id);
          const session = await sessions.issue(user.id, ctx.ip, clientInfoOf(ctx.request.headers));
          return { ...view, token: session.token };
        }
        return view;
      },
    }),

    route({
      method: 'GET',
      path: '/users/:userId',
      policy: 'user',
      rateLimit: { bucket: 'users:read', limit: 100, windowSeconds: 10 },
      async handler(ctx) {
        const id = parseSnowflake(ctx.params.userId);
        if (!id.ok) throw new ApiError('UNKNOWN_USER');
        const user = await users.findById(id.value);
        if (!user) throw new ApiError('UNKNOWN_USER');
        return partialUser(user);
      },
    }),
    ...userSettingsRoutes(services),
  ];
}
