import type { AppServices } from '../../app-services.ts';
import { partialUser, type UserRecord } from '../../identity/user-record.ts';
import { memberView } from '../chat/views.ts';
import { USER_UPDATED_TOPIC } from './mfa-status-view.ts';
import { offlinePresenceView, presenceView } from './presence-view.ts';
import { privateUserView } from './views.ts';

export type UserUpdateDeps = Pick<AppServices, 'bus' | 'chat' | 'dispatcher' | 'mfaView' | 'presences' | 'users'>;

/**
 * After a change to a user's own record (profile, MFA, a bot's profile): every process drops what it cached of
 * the user (`user.updated`), then the user's gateway sessions get `USER_UPDATE` with the user as
 * `GET /users/@me` shows it to them, email included (docs/gateway.md#every-event), so every open tab follows.
 * With `before` (the record as it was), a change others can see (username, display name, avatar) is also
 * announced to them: see `announcePublicChange`.
 */
export async function announceUserUpdate(
  deps: UserUpdateDeps,
  userId: string,
  options: { before?: UserRecord } = {},
): Promise<void> {
  await deps.bus.publish(USER_UPDATED_TOPIC, { userId });
  const user = await deps.users.findById(userId);
  if (!user) return;
  const view = await privateUserView(deps, user, { includeEmail: true });
  await deps.dispatcher.dispatch('USER_UPDATE', view, { kind: 'users', userIds: [userId] });
  if (options.before) await announcePublicChange(deps, options.before, user);
}

/**
 * The public user fields (`partialUser`) that differ between two records of one user, with the id: the `user`
 * of PRESENCE_UPDATE (Discord's partial user, the changed fields only). Undefined when nothing public changed.
 */
export function changedPublicFields(
  before: UserRecord,
  after: UserRecord,
): ({ id: string } & Record<string, unknown>) | undefined {
  const was: Record<string, unknown> = partialUser(before);
  const now: Record<string, unknown> = partialUser(after);
  const changed: { id: string } & Record<string, unknown> = { id: after.id };
  for (const [key, value] of Object.entries(now))
    if (key !== 'id' && JSON.stringify(was[key]) !== JSON.stringify(value)) changed[key] = value;
  return Object.keys(changed).length > 1 ? changed : undefined;
}

/**
 * A change of the user as others see them (docs/gateway.md#user-changes): every guild the user is in gets
 * `GUILD_MEMBER_UPDATE` (the member as the member routes send it, with the new user), and `PRESENCE_UPDATE`
 * carrying the partial user with the changed fields goes to each of those guilds (with `guild_id`) and to the
 * user's friends (without). Member caches hold no user field (users are read fresh or through the user cache,
 * already invalidated), so READY, GUILD_CREATE and member lists show the new values from now on.
 */
async function announcePublicChange(deps: UserUpdateDeps, before: UserRecord, after: UserRecord): Promise<void> {
  const changed = changedPublicFields(before, after);
  if (!changed) return;
  const [members, friends, presences] = await Promise.all([
    deps.chat.membershipsOf(after.id),
    deps.chat.friendIds(after.id),
    deps.presences.getMany([after.id], Date.now()),
  ]);
  const presence = presences.get(after.id);
  const presenceOf = (guildId?: string) => ({
    ...(presence ? presenceView(after.id, presence, guildId) : offlinePresenceView(after.id, guildId)),
    user: changed,
  });
  const { dispatcher } = deps;
  const sends: Promise<void>[] = [];
  for (const member of members) {
    const guildId = member.guild_id;
    sends.push(
      dispatcher
        .dispatch(
          'GUILD_MEMBER_UPDATE',
          { ...memberView(member, after), guild_id: guildId },
          { kind: 'guild', guildId },
        )
        .then(() => dispatcher.dispatch('PRESENCE_UPDATE', presenceOf(guildId), { kind: 'guild', guildId })),
    );
  }
  if (friends.length > 0)
    sends.push(dispatcher.dispatch('PRESENCE_UPDATE', presenceOf(), { kind: 'users', userIds: friends }));
  await Promise.all(sends);
}
