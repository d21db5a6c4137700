import type { AppServices } from '../../app-services.ts';
import { USER_UPDATED_TOPIC } from './mfa-status-view.ts';
import { privateUserView } from './views.ts';

export type UserUpdateDeps = Pick<AppServices, 'bus' | 'dispatcher' | 'mfaView' | 'users'>;

/**
 * After a change to a user's own record (profile, MFA, a bot's profile): every process drops what it cached of
 * the user (`user.updated`), then the user's gateway sessions get `USER_UPDATE` with the user as
 * `GET /users/@me` shows it to them, email included (docs/gateway.md#every-event), so every open tab follows.
 */
export async function announceUserUpdate(deps: UserUpdateDeps, userId: string): Promise<void> {
  await deps.bus.publish(USER_UPDATED_TOPIC, { userId });
  const user = await deps.users.findById(userId);
  if (!user) return;
  const view = await privateUserView(deps, user, { includeEmail: true });
  await deps.dispatcher.dispatch('USER_UPDATE', view, { kind: 'users', userIds: [userId] });
}
