import type { UserRecord } from '../../identity/user-record.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { ChannelRow } from './rows.ts';
import type { ChatStore } from './store.ts';
import { type PrivateChannelView, privateChannelView } from './views.ts';

/** The viewer's DM and group-DM channels, most recently active first: two queries for any number. */
export async function listPrivateChannels(
  store: ChatStore,
  userId: string,
  db: Queryable = store.db,
): Promise<PrivateChannelView[]> {
  const channels = await db.query<ChannelRow>(
    `SELECT c.* FROM channels c JOIN dm_recipients d ON d.channel_id = c.id
      WHERE d.user_id = $1 ORDER BY coalesce(c.last_message_id, c.id) DESC`,
    [userId],
  );
  if (channels.length === 0) return [];
  const links = await db.query<{ channel_id: string; user_id: string }>(
    'SELECT channel_id, user_id FROM dm_recipients WHERE channel_id = ANY($1::bigint[])',
    [channels.map((c) => c.id)],
  );
  const users = await store.usersByIds(
    links.map((l) => l.user_id),
    db,
  );
  const byChannel = new Map<string, string[]>();
  for (const link of links) byChannel.set(link.channel_id, [...(byChannel.get(link.channel_id) ?? []), link.user_id]);
  return channels.map((c) => privateChannelView(c, recipientRecords(byChannel.get(c.id) ?? [], users), userId));
}

/** The recipients' user records in `recipientIds` order; unknown ids are skipped. */
function recipientRecords(recipientIds: readonly string[], users: ReadonlyMap<string, UserRecord>): UserRecord[] {
  return recipientIds.flatMap((id) => {
    const user = users.get(id);
    return user ? [user] : [];
  });
}

/**
 * One private channel as each viewer sees it: the recipients are loaded once (one query), and the returned
 * function builds any viewer's view from them.
 */
export async function privateChannelViews(
  store: ChatStore,
  channel: ChannelRow,
  recipientIds: readonly string[],
): Promise<(viewerId: string) => PrivateChannelView> {
  const recipients = recipientRecords(recipientIds, await store.usersByIds(recipientIds));
  return (viewerId) => privateChannelView(channel, recipients, viewerId);
}

/** One private channel as `viewerId` sees it. */
export async function privateChannelFor(
  store: ChatStore,
  channel: ChannelRow,
  recipientIds: readonly string[],
  viewerId: string,
): Promise<PrivateChannelView> {
  return (await privateChannelViews(store, channel, recipientIds))(viewerId);
}
