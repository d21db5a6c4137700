import { CHANNEL_TYPES, iso } from './rows.ts';
import type { ThreadChannelRow, ThreadMemberRow } from './thread-store.ts';
import type { MemberView } from './views.ts';

/** APIThreadMember as `threadMemberView` sends it; `member` (the guild member) only with `with_member`. */
export type ThreadMemberView = {
  id: string;
  user_id: string;
  join_timestamp: string | null;
  flags: number;
  member?: MemberView;
};

/** A thread channel as Discord sends it (APIThreadChannel), built by `threadView`. */
export type ThreadView = {
  id: string;
  type: number;
  guild_id: string;
  name: string | null;
  parent_id: string;
  owner_id: string | null;
  last_message_id: string | null;
  last_pin_timestamp: string | null;
  rate_limit_per_user: number;
  flags: 0;
  message_count: number;
  member_count: number;
  total_message_sent: number;
  thread_metadata: {
    archived: boolean;
    auto_archive_duration: number;
    archive_timestamp: string | null;
    locked: boolean;
    /** Private threads only. */
    invitable?: boolean;
    create_timestamp: string | null;
  };
  /**
   * The viewer's thread member, if any; GUILD_CREATE's `threads` carry only its `join_timestamp` and `flags`
   * (docs/gateway.md), as Discord's do.
   */
  member?: ThreadMemberView | Pick<ThreadMemberView, 'join_timestamp' | 'flags'>;
};

/** A thread channel as Discord sends it (APIThreadChannel); `member` is the viewer's thread member, if any. */
export function threadView(t: ThreadChannelRow, member?: ThreadMemberRow): ThreadView {
  return {
    id: t.id,
    type: t.type,
    guild_id: t.guild_id,
    name: t.name,
    parent_id: t.parent_id,
    owner_id: t.owner_id,
    last_message_id: t.last_message_id,
    last_pin_timestamp: iso(t.last_pin_timestamp),
    rate_limit_per_user: t.rate_limit_per_user,
    flags: 0,
    message_count: t.message_count,
    member_count: t.member_count,
    total_message_sent: t.total_message_sent,
    thread_metadata: {
      archived: t.archived,
      auto_archive_duration: t.auto_archive_duration,
      archive_timestamp: iso(t.archive_timestamp),
      locked: t.locked,
      ...(t.type === CHANNEL_TYPES.PRIVATE_THREAD ? { invitable: t.invitable } : {}),
      create_timestamp: iso(t.create_timestamp),
    },
    ...(member ? { member: threadMemberView(member) } : {}),
  };
}

/** APIThreadMember; `member` (the guild member) only when asked for with `with_member`. */
export function threadMemberView(m: ThreadMemberRow, guildMember?: MemberView): ThreadMemberView {
  return {
    id: m.thread_id,
    user_id: m.user_id,
    join_timestamp: iso(m.join_timestamp),
    flags: m.flags,
    ...(guildMember ? { member: guildMember } : {}),
  };
}
