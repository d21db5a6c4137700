import { subjectFor, toOverwrites } from './access.ts';
import { computeChannelPermissions, has, PERMISSIONS } from './permissions.ts';
import type { ChannelRow, GuildRow, MemberRow, RoleRow } from './rows.ts';
import type { ChatStore, GuildBundle } from './store.ts';
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
  const guild = guildView(bundle.guild);
  const memberCount = source.memberCount;
  return {
    ...guild,
    properties: guild,
    roles: bundle.roles.map(roleView),
    channels: visible.map(channelView),
    threads: [],
    emojis: [],
    stickers: [],
    members: [memberView(bundle.member, viewer)],
    member_count: memberCount,
    online_count: 0,
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    joined_at: new Date(bundle.member.joined_at).toISOString(),
    large: false,
    unavailable: false,
  };
}
