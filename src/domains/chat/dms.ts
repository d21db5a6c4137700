import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import { pathId } from './access.ts';
import { type ChatDeps, limits, snowflake } from './deps.ts';
import { MESSAGE_TYPES } from './message-service.ts';
import { listPrivateChannels, privateChannelFor, privateChannelViews } from './private-channels.ts';
import { CHANNEL_TYPES, type ChannelRow } from './rows.ts';
import type { PrivateChannelView } from './views.ts';

/** A group DM holds the owner and at most nine others. */
export const MAX_GROUP_DM_SIZE = 10;

const openDmBody = z.object({
  recipient_id: snowflake.optional(),
  recipients: z.array(snowflake).max(50).optional(),
  name: z.string().max(100).nullish(),
});

/**
 * Refuses a 1:1 DM the recipient does not take (issue 16, the established rules): a block on either side, or a
 * stranger: someone who is neither a friend nor in a shared guild the recipient allows DMs from (not in its
 * `restricted_guilds`). One answer for every case, so it does not say which.
 */
export async function requireDirectMessageAllowed(
  deps: ChatDeps,
  senderId: string,
  recipientId: string,
): Promise<void> {
  const { store } = deps;
  if (await store.blockedBetween(senderId, recipientId)) throw new ApiError('CANNOT_SEND_MESSAGES_TO_THIS_USER');
  if (await store.areFriends(senderId, recipientId)) return;
  if (await store.sharesGuildAllowingDms(senderId, recipientId)) return;
  throw new ApiError('CANNOT_SEND_MESSAGES_TO_THIS_USER');
}

/**
 * Posts a group DM's RECIPIENT_ADD / RECIPIENT_REMOVE system message: `author` did it to `subject` (the same user
 * when someone leaves), who is listed in `mentions`, as the established clients render it.
 */
async function recipientMessage(
  deps: ChatDeps,
  channel: ChannelRow,
  recipients: readonly string[],
  type: typeof MESSAGE_TYPES.RECIPIENT_ADD | typeof MESSAGE_TYPES.RECIPIENT_REMOVE,
  authorId: string,
  subjectId: string,
): Promise<void> {
  const author = await deps.store.user(authorId);
  if (!author) return;
  await deps.messages.create({
    channel,
    recipients: [...recipients],
    author,
    content: '',
    canMentionEveryone: false,
    type,
    subjectUserIds: [subjectId],
  });
}

/**
 * Removes a user from a group DM (`actorId` leaves, or the owner removes `userId`); the last one out deletes it, an
 * owner leaving hands it on. The others get the RECIPIENT_REMOVE system message, for a silent leave too.
 */
export async function leaveGroupDm(
  deps: ChatDeps,
  channel: ChannelRow,
  recipients: readonly string[],
  userId: string,
  actorId: string = userId,
): Promise<void> {
  const { db } = deps.services;
  const remaining = recipients.filter((id) => id !== userId);
  let current = channel;
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM dm_recipients WHERE channel_id = $1 AND user_id = $2', [channel.id, userId]);
    if (remaining.length === 0) await tx.query('DELETE FROM channels WHERE id = $1', [channel.id]);
    else if (channel.owner_id === userId) {
      const [row] = await tx.query<ChannelRow>('UPDATE channels SET owner_id = $2 WHERE id = $1 RETURNING *', [
        channel.id,
        remaining[0],
      ]);
      if (row) current = row;
    }
  });
  const user = await deps.store.user(userId);
  await deps.events.users('CHANNEL_DELETE', [userId], { id: channel.id, type: channel.type });
  if (user)
    await deps.events.users('CHANNEL_RECIPIENT_REMOVE', remaining, { channel_id: channel.id, user: partialUser(user) });
  if (remaining.length > 0)
    await recipientMessage(deps, current, remaining, MESSAGE_TYPES.RECIPIENT_REMOVE, actorId, userId);
}

/** What a recipient may change on a group DM with `PATCH /channels/{id}` (docs/chat.md). */
export interface GroupDmChanges {
  name?: string | undefined;
  /** An image data URI, or null (or "") to clear; absent leaves it. */
  icon?: string | null | undefined;
}

/**
 * Renames a group DM or changes its icon (any recipient may, as on Discord): CHANNEL_UPDATE to every recipient as
 * they see it, a CHANNEL_NAME_CHANGE system message (its content the new name) when the name changed and a
 * CHANNEL_ICON_CHANGE one when the icon changed. The icon is stored like a guild
 * icon (same data-URI checks and errors) at `channel-icons/{channel id}/{hash}` (docs/media.md).
 */
export async function updateGroupDm(
  deps: ChatDeps,
  channel: ChannelRow,
  recipients: readonly string[],
  changes: GroupDmChanges,
  actorId: string,
): Promise<PrivateChannelView> {
  const { services, store, events } = deps;
  const icon =
    changes.icon === undefined
      ? channel.icon
      : await services.media.storeUserImage('channel-icons', channel.id, changes.icon, 'icon');
  const [row] = await services.db.query<ChannelRow>(
    'UPDATE channels SET name = $2, icon = $3 WHERE id = $1 RETURNING *',
    [channel.id, changes.name === undefined ? channel.name : changes.name, icon],
  );
  const updated = row as ChannelRow;
  const viewFor = await privateChannelViews(store, updated, recipients);
  for (const userId of recipients) await events.users('CHANNEL_UPDATE', [userId], viewFor(userId));
  const notices: { type: number; content: string }[] = [];
  if (updated.name !== channel.name)
    notices.push({ type: MESSAGE_TYPES.CHANNEL_NAME_CHANGE, content: updated.name ?? '' });
  if (icon !== channel.icon) notices.push({ type: MESSAGE_TYPES.CHANNEL_ICON_CHANGE, content: '' });
  const author = notices.length > 0 ? await store.user(actorId) : undefined;
  if (author)
    for (const { type, content } of notices)
      await deps.messages.create({
        channel: updated,
        recipients: [...recipients],
        author,
        content,
        canMentionEveryone: false,
        type,
      });
  return viewFor(actorId);
}

export function dmRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events } = deps;
  const { db, ids } = services;

  /** Announces a new private channel to every recipient and returns it as `callerId` sees it. */
  async function announceNewChannel(
    channel: ChannelRow,
    recipients: string[],
    callerId: string,
  ): Promise<PrivateChannelView> {
    const viewFor = await privateChannelViews(store, channel, recipients);
    for (const userId of recipients) await events.users('CHANNEL_CREATE', [userId], viewFor(userId));
    return viewFor(callerId);
  }

  async function openDirect(callerId: string, callerIsBot: boolean, targetId: string) {
    if (targetId === callerId) throw fieldError('recipient_id', 'CANNOT_DM_YOURSELF', 'Cannot DM yourself');
    const target = await store.user(targetId);
    if (!target) throw new ApiError('UNKNOWN_USER');
    if ((callerIsBot || target.isBot) && !(await store.sharesGuild(callerId, targetId)))
      throw new ApiError('MISSING_ACCESS');
    await requireDirectMessageAllowed(deps, callerId, targetId);
    const key = BigInt(callerId) < BigInt(targetId) ? `${callerId}:${targetId}` : `${targetId}:${callerId}`;
    const { row, created } = await db.transaction(async (tx) => {
      const [inserted] = await tx.query<ChannelRow>(
        `INSERT INTO channels (id, type, dm_key) VALUES ($1, $2, $3) ON CONFLICT (dm_key) DO NOTHING RETURNING *`,
        [ids.next(), CHANNEL_TYPES.DM, key],
      );
      if (inserted) {
        await tx.query('INSERT INTO dm_recipients (channel_id, user_id) VALUES ($1, $2), ($1, $3)', [
          inserted.id,
          callerId,
          targetId,
        ]);
        return { row: inserted, created: true };
      }
      const [existing] = await tx.query<ChannelRow>('SELECT * FROM channels WHERE dm_key = $1', [key]);
      return { row: existing as ChannelRow, created: false };
    });
    const recipients = [callerId, targetId];
    if (created) return announceNewChannel(row, recipients, callerId);
    return privateChannelFor(store, row, recipients, callerId);
  }

  return [
    route({
      method: 'GET',
      path: '/users/@me/channels',
      policy: 'user-only',
      rateLimit: limits.read('users:channels'),
      handler: (ctx) => listPrivateChannels(store, ctx.user.id),
    }),

    route({
      method: 'POST',
      path: '/users/@me/channels',
      policy: 'user',
      rateLimit: limits.write('users:channels'),
      body: openDmBody,
      async handler(ctx) {
        const caller = ctx.user;
        const body = ctx.body;
        if (body.recipient_id !== undefined) return openDirect(caller.id, caller.isBot, body.recipient_id);
        if (body.recipients === undefined)
          throw fieldError('recipient_id', 'BASE_TYPE_REQUIRED', 'This field is required');
        const others = [...new Set(body.recipients)].filter((id) => id !== caller.id);
        if (others.length === 0) throw fieldError('recipients', 'CANNOT_DM_YOURSELF', 'Cannot DM yourself');
        if (others.length === 1) return openDirect(caller.id, caller.isBot, others[0] as string);
        // Group DMs are for people, not bots (docs/chat.md).
        if (caller.isBot) throw new ApiError('ACCESS_DENIED');
        if (others.length + 1 > MAX_GROUP_DM_SIZE) throw new ApiError('MAX_GROUP_DM_RECIPIENTS');
        const users = await store.usersByIds(others);
        if (users.size !== others.length) throw new ApiError('UNKNOWN_USER');
        // Only friends are added to a group DM (a blocked pair never is: a block ends the friendship).
        for (const other of others)
          if (!(await store.areFriends(caller.id, other))) throw new ApiError('INVALID_RECIPIENTS');
        const id = ids.next();
        const recipients = [caller.id, ...others];
        const row = await db.transaction(async (tx) => {
          const [inserted] = await tx.query<ChannelRow>(
            'INSERT INTO channels (id, type, name, owner_id) VALUES ($1, $2, $3, $4) RETURNING *',
            [id, CHANNEL_TYPES.GROUP_DM, body.name ?? null, caller.id],
          );
          await tx.query('INSERT INTO dm_recipients (channel_id, user_id) SELECT $1, unnest($2::bigint[])', [
            id,
            recipients,
          ]);
          return inserted as ChannelRow;
        });
        return announceNewChannel(row, recipients, caller.id);
      },
    }),

    route({
      method: 'PUT',
      path: '/channels/:channelId/recipients/:userId',
      policy: 'user',
      rateLimit: limits.write('channels:recipients'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        if (channel.type !== CHANNEL_TYPES.GROUP_DM) throw new ApiError('MISSING_PERMISSIONS');
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        const user = await store.user(userId);
        if (!user) throw new ApiError('UNKNOWN_USER');
        const recipients = channelAccess.recipients ?? [];
        if (recipients.includes(userId)) return undefined;
        if (recipients.length >= MAX_GROUP_DM_SIZE) throw new ApiError('MAX_GROUP_DM_RECIPIENTS');
        if (!(await store.areFriends(ctx.user.id, userId))) throw new ApiError('INVALID_RECIPIENTS');
        await db.query('INSERT INTO dm_recipients (channel_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
          channel.id,
          userId,
        ]);
        const all = [...recipients, userId];
        await events.users('CHANNEL_RECIPIENT_ADD', recipients, { channel_id: channel.id, user: partialUser(user) });
        await events.users('CHANNEL_CREATE', [userId], await privateChannelFor(store, channel, all, userId));
        await recipientMessage(deps, channel, all, MESSAGE_TYPES.RECIPIENT_ADD, ctx.user.id, userId);
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/recipients/:userId',
      policy: 'user',
      rateLimit: limits.write('channels:recipients'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        if (channel.type !== CHANNEL_TYPES.GROUP_DM) throw new ApiError('MISSING_PERMISSIONS');
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        const recipients = channelAccess.recipients ?? [];
        if (!recipients.includes(userId)) throw new ApiError('UNKNOWN_USER');
        if (userId !== ctx.user.id && channel.owner_id !== ctx.user.id) throw new ApiError('MISSING_PERMISSIONS');
        await leaveGroupDm(deps, channel, recipients, userId, ctx.user.id);
        return undefined;
      },
    }),
  ];
}
