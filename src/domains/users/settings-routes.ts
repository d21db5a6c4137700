import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { pathId } from '../chat/access.ts';
import type { GatewayEvent, GatewayEvents } from '../events/dispatch.ts';
import { settingsPatchSchema } from './settings.ts';

const noteBody = z.object({ note: z.string().max(256).nullish() });
const SETTINGS_LIMIT = { bucket: 'users:settings', limit: 40, windowSeconds: 10 };

/** What `userSettingsRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type UserSettingsRoutesDeps = Pick<AppServices, 'credentials' | 'db' | 'dispatcher' | 'userSettings' | 'users'>;

/** `/users/@me/settings` and `/users/@me/notes/{id}` (docs/accounts.md, "Settings and notes"). */
export function userSettingsRoutes(services: UserSettingsRoutesDeps): AnyRoute[] {
  const { userSettings, dispatcher, db, credentials } = services;
  const toUser = <E extends GatewayEvent>(userId: string, event: E, payload: GatewayEvents[E]) =>
    dispatcher.dispatch(event, payload, { kind: 'users', userIds: [userId] });

  return [
    route({
      method: 'GET',
      path: '/users/@me/settings',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: SETTINGS_LIMIT,
      handler: (ctx) => userSettings.settings(ctx.user.id, ctx.user.locale),
    }),
    route({
      method: 'PATCH',
      path: '/users/@me/settings',
      policy: 'user-only',
      admitsSuspicious: true,
      rateLimit: SETTINGS_LIMIT,
      body: settingsPatchSchema,
      async handler(ctx) {
        const { locale, ...changes } = ctx.body;
        if (Object.keys(changes).length > 0) await userSettings.update(ctx.user.id, changes);
        if (locale !== undefined && locale !== ctx.user.locale) {
          await db.query('UPDATE users SET locale = $2 WHERE id = $1', [ctx.user.id, locale]);
          await credentials.invalidate({ userId: ctx.user.id });
        }
        const changed = { ...changes, ...(locale !== undefined ? { locale } : {}) };
        if (Object.keys(changed).length > 0) await toUser(ctx.user.id, 'USER_SETTINGS_UPDATE', changed);
        return userSettings.settings(ctx.user.id, locale ?? ctx.user.locale);
      },
    }),
    route({
      method: 'GET',
      path: '/users/@me/notes/:userId',
      policy: 'user-only',
      rateLimit: SETTINGS_LIMIT,
      async handler(ctx) {
        const targetId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        const note = await userSettings.note(ctx.user.id, targetId);
        // No note yet reads as an empty one (clients ask for it on every profile they open).
        if (note === undefined && !(await services.users.findById(targetId))) throw new ApiError('UNKNOWN_USER');
        return { user_id: ctx.user.id, note_user_id: targetId, note: note ?? '' };
      },
    }),
    route({
      method: 'PUT',
      path: '/users/@me/notes/:userId',
      policy: 'user-only',
      rateLimit: SETTINGS_LIMIT,
      body: noteBody,
      async handler(ctx) {
        const targetId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        if (!(await services.users.findById(targetId))) throw new ApiError('UNKNOWN_USER');
        const note = ctx.body.note ?? '';
        await userSettings.setNote(ctx.user.id, targetId, note);
        await toUser(ctx.user.id, 'USER_NOTE_UPDATE', { id: targetId, note });
        return undefined;
      },
    }),
  ];
}
