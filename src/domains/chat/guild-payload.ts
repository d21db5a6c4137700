import type { PresenceView } from '../users/presence-view.ts';
import type { GuildVoiceStateView } from '../voice/voice-views.ts';
import { subjectFor, toOverwrites } from './access.ts';
import { type EmojiRow, type EmojiView, emojiView, guildEmojis } from './emoji-store.ts';
import { computeChannelPermissions, has, PERMISSIONS } from './permissions.ts';
import type { ChannelRow, GuildRow, MemberRow, RoleRow } from './rows.ts';
import { guildStickers, type StickerRow, type StickerView, stickerView } from './sticker-store.ts';
import type { ChatStore, GuildBundle } from './store.ts';
import { visibleThreads } from './thread-service.ts';
import { ThreadStore } from './thread-store.ts';
import { type ThreadView, threadView } from './thread-views.ts';
import {
  channelView,
  type GuildChannelView,
  type GuildView,
  guildView,
  type MemberView,
  memberView,
  type RoleView,
  roleView,
} from './views.ts';

/**
 * The guild object of READY's `guilds` and GUILD_CREATE (docs/gateway.md): the guild's own fields at top level and
 * again under `properties`, then what a client needs to show it.
 */
export type GuildPayloadView = GuildView & {
  properties: GuildView;
  roles: RoleView[];
  channels: GuildChannelView[];
  threads: ThreadView[];
  emojis: EmojiView[];
  stickers: StickerView[];
  /** The viewer's own member (`user` reduced to `{id}` in READY and a bot's burst). */
  members: MemberView[];
  member_count: number;
  online_count: number;
  presences: PresenceView[];
  voice_states: GuildVoiceStateView[];
  stage_instances: [];
  guild_scheduled_events: [];
  joined_at: string;
  large: boolean;
  unavailable: false;
};

/** A guild the viewer is in whose payload could not be read (READY's `guilds`, a bot's GUILD_CREATE burst). */
export type UnavailableGuild = { id: string; unavailable: true };

/**
 * Discord's largest `large_threshold`: a guild with more members is `large` for every session. A payload built
 * for one session uses its own threshold; one published to several (GUILD_CREATE on a join) uses this, and the
 * gateway marks it large for the sessions whose threshold is lower (docs/gateway.md#large-guilds).
 */
export const LARGE_THRESHOLD_MAX = 250;

/**
 * The guild object of READY and GUILD_CREATE for one viewer (docs/gateway.md): guild fields at top level and under
 * `properties`, roles, the channels the viewer can see, the viewer's own member, counts, the members' presences and `joined_at`.
 * Three indexed queries, two when the caller passes the viewer's guild bundle it has already read.
 */
export async function buildGuildPayload(
  store: ChatStore,
  guildId: string,
  viewerId: string,
  now: number,
  options: { reducedMembers?: boolean; largeThreshold?: number; bundle?: GuildBundle } = {},
): Promise<GuildPayloadView | undefined> {
  const [bundle, channels, memberCount, emojis, stickers] = await Promise.all([
    options.bundle ?? store.guildBundle(guildId, viewerId),
    store.guildChannels(guildId),
    store.memberCount(guildId),
    guildEmojis(store.db, guildId),
    guildStickers(store.db, guildId),
  ]);
  if (!bundle?.member) return undefined;
  return renderGuildPayload(
    store,
    { guild: bundle.guild, roles: bundle.roles, channels, emojis, stickers, member: bundle.member, memberCount },
    viewerId,
    now,
    { reducedMembers: options.reducedMembers, largeThreshold: options.largeThreshold },
  );
}

export interface GuildPayloadSource {
  guild: GuildRow;
  roles: readonly RoleRow[];
  channels: readonly ChannelRow[];
  emojis: readonly EmojiRow[];
  stickers: readonly StickerRow[];
  member: MemberRow;
  memberCount: number;
}

/** Renders the payload from rows already at hand (the gateway's read model serves them from memory). */
export async function renderGuildPayload(
  store: ChatStore,
  source: GuildPayloadSource,
  viewerId: string,
  now: number,
  options: { reducedMembers?: boolean; largeThreshold?: number | undefined } = {},
): Promise<GuildPayloadView> {
  const bundle = source;
  const subject = subjectFor(bundle.guild, [...bundle.roles], bundle.member, now);
  const visible = source.channels.filter((c) =>
    has(computeChannelPermissions(subject, toOverwrites(c)), PERMISSIONS.VIEW_CHANNEL),
  );
  const viewer = options.reducedMembers ? { id: viewerId } : await store.user(viewerId);
  const threads = await activeThreads(store, source, viewerId, subject);
  const guild = guildView(bundle.guild);
  const memberCount = source.memberCount;
  const large = memberCount > (options.largeThreshold ?? LARGE_THRESHOLD_MAX);
  const [voiceStates, presences] = await Promise.all([
    store.voiceStatesOf?.(bundle.guild.id) ?? [],
    store.presencesOf?.(bundle.guild.id) ?? [],
  ]);
  return {
    ...guild,
    properties: guild,
    roles: bundle.roles.map(roleView),
    channels: visible.map(channelView),
    threads,
    emojis: source.emojis.map((e) => emojiView(e)),
    stickers: source.stickers.map((s) => stickerView(s)),
    members: [memberView(bundle.member, viewer)],
    member_count: memberCount,
    online_count: presences.length,
    // A large guild's presences would make every READY and GUILD_CREATE heavy: clients ask for them with op 8
    // `presences: true`, and PRESENCE_UPDATE keeps them current (docs/gateway.md, "Presence").
    presences: large ? [] : presences,
    voice_states: voiceStates,
    stage_instances: [],
    guild_scheduled_events: [],
    joined_at: new Date(bundle.member.joined_at).toISOString(),
    large,
    unavailable: false,
  };
}

/** GUILD_CREATE `threads`: the active threads the viewer sees, each with the viewer's membership (no ids). */
async function activeThreads(
  store: ChatStore,
  source: GuildPayloadSource,
  viewerId: string,
  subject: ReturnType<typeof subjectFor>,
): Promise<ThreadView[]> {
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
