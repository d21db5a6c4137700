import { CHANNEL_TYPES, iso } from './rows.ts';
import type { ThreadChannelRow, ThreadMemberRow } from './thread-store.ts';

/** A thread channel as Discord sends it (APIThreadChannel); `member` is the viewer's thread member, if any. */
export function threadView(t: ThreadChannelRow, member?: ThreadMemberRow): Record<string, unknown> {
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
export function threadMemberView(m: ThreadMemberRow, guildMember?: Record<string, unknown>): Record<string, unknown> {
  return {
    id: m.thread_id,
    user_id: m.user_id,
    join_timestamp: iso(m.join_timestamp),
    flags: m.flags,
    ...(guildMember ? { member: guildMember } : {}),
  };
}
