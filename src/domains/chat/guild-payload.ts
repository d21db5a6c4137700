import { subjectFor, toOverwrites } from './access.ts';
import { computeChannelPermissions, has, PERMISSIONS } from './permissions.ts';
import type { ChannelRow, GuildRow, MemberRow, RoleRow } from './rows.ts';
import type { ChatStore, GuildBundle } from './store.ts';
import { visibleThreads } from './thread-service.ts';
import { ThreadStore } from './thread-store.ts';
import { threadView } from './thread-views.ts';
import { channelView, guildView, memberView, roleView } from './views.ts';

/**
 * The guild object of READY and GUILD_CREATE for one viewer (api.md §6): guild fields at top level and under
 * `properties`, roles, the channels the viewer can see, the viewer's own member, counts and `joined_at`.
 * Three indexed queries, two when the caller passes the viewer's guild bundle it has already read.
 */
export async function buildGuildPayload(
  store: ChatStore,
  guildId: string,
  viewerId: string,
  now: number,
  options: { reducedMembers?: boolean; bundle?: GuildBundle } = {},
): Promise<Record<string, unknown> | undefined> {
  const [bundle, channels, memberCount] = await Promise.all([
    options.bundle ?? store.guildBundle(guildId, viewerId),
    store.guildChannels(guildId),
    store.memberCount(guildId),
  ]);
  if (!bundle?.member) return undefined;
  return renderGuildPayload(
    store,
    { guild: bundle.guild, roles: bundle.roles, channels, member: bundle.member, memberCount },
    viewerId,
    now,
    { reducedMembers: options.reducedMembers },
  );
}

export interface GuildPayloadSource {
  guild: GuildRow;
  roles: readonly RoleRow[];
  channels: readonly ChannelRow[];
  member: MemberRow;
  memberCount: number;
}

/** Renders the payload from rows already at hand (the gateway's read model serves them from memory). */
export async function renderGuildPayload(
  store: ChatStore,
  source: GuildPayloadSource,
  viewerId: string,
  now: number,
  options: { reducedMembers?: boolean } = {},
): Promise<Record<string, unknown>> {
  const bundle = source;
  const subject = subjectFor(bundle.guild, [...bundle.roles], bundle.member, now);
  const visible = source.channels.filter((c) =>
    has(computeChannelPermissions(subject, toOverwrites(c)), PERMISSIONS.VIEW_CHANNEL),
  );
  const viewer = options.reducedMembers ? { id: viewerId } : await store.user(viewerId);
  const threads = await activeThreads(store, source, viewerId, subject);
  const guild = guildView(bundle.guild);
  const memberCount = source.memberCount;
  const voiceStates = (await store.voiceStatesOf?.(bundle.guild.id)) ?? [];
  return {
    ...guild,
    properties: guild,
    roles: bundle.roles.map(roleView),
    channels: visible.map(channelView),
    threads,
    emojis: [],
    stickers: [],
    members: [memberView(bundle.member, viewer)],
    member_count: memberCount,
    online_count: 0,
    presences: [],
    voice_states: voiceStates,
    stage_instances: [],
    guild_scheduled_events: [],
    joined_at: new Date(bundle.member.joined_at).toISOString(),
    large: false,
    unavailable: false,
  };
}

/** GUILD_CREATE `threads`: the active threads the viewer sees, each with the viewer's membership (no ids). */
async function activeThreads(
  store: ChatStore,
  source: GuildPayloadSource,
  viewerId: string,
  subject: ReturnType<typeof subjectFor>,
): Promise<Record<string, unknown>[]> {
  const threadStore = new ThreadStore(store.db);
  const rows = await threadStore.active(source.guild.id);
  if (rows.length === 0) return [];
  const parents = new Map(source.channels.map((c) => [c.id, c]));
  const { threads, members } = await visibleThreads(threadStore, rows, viewerId, (parentId) => {
    const parent = parents.get(parentId);
    return parent ? computeChannelPermissions(subject, toOverwrites(parent)) : 0n;
  });
  const mine = new Map(members.map((m) => [m.thread_id, m]));
  return threads.map((row) => {
    const view = threadView(row);
    const member = mine.get(row.id);
    if (member) view.member = { join_timestamp: new Date(member.join_timestamp).toISOString(), flags: member.flags };
    return view;
  });
}
