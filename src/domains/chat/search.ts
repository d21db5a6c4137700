import { z } from 'zod';
import { type AnyRoute, route } from '../../http/route.ts';
import { pathId } from './access.ts';
import { booleanQuery, type ChatDeps, limits, snowflake } from './deps.ts';
import { has, PERMISSIONS, threadPermissions } from './permissions.ts';
import { CHANNEL_TYPES } from './rows.ts';
import { guildThreads, type MessageSearch, SEARCH_HAS, searchMessages } from './search-store.ts';

/** The furthest page start (Discord's), and the largest page. */
export const SEARCH_MAX_OFFSET = 5000;
export const SEARCH_MAX_LIMIT = 25;
/** Values one repeatable parameter may carry. */
const MAX_VALUES = 100;

/** An integer query parameter within a range; anything else is `INVALID_FORMAT` on that parameter. */
const integerIn = (min: number, max: number) =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    const text = String(value);
    const number = /^-?\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isInteger(number) && number >= min && number <= max) return number;
    ctx.addIssue({
      code: 'custom',
      message: `Must be an integer from ${min} to ${max}`,
      params: { code: 'INVALID_FORMAT' },
    });
    return z.NEVER;
  });

/** A parameter that may be given once or repeated (`author_id=1&author_id=2`): always a list here. */
const repeatable = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (Array.isArray(value) ? value : [value]), z.array(item).max(MAX_VALUES)).optional();

/**
 * Discord's search query (`GET /guilds/{id}/messages/search`, `GET /channels/{id}/messages/search`).
 * `min_id`/`max_id` bound the ids (times) exclusively; `after`/`before` are accepted for the same.
 */
export const searchQuery = z.object({
  content: z.string().max(1024).optional(),
  author_id: repeatable(snowflake),
  channel_id: repeatable(snowflake),
  mentions: repeatable(snowflake),
  has: repeatable(z.enum(SEARCH_HAS)),
  min_id: snowflake.optional(),
  max_id: snowflake.optional(),
  after: snowflake.optional(),
  before: snowflake.optional(),
  pinned: booleanQuery.optional(),
  sort_by: z.enum(['timestamp']).default('timestamp'),
  sort_order: z.enum(['desc', 'asc']).default('desc'),
  offset: integerIn(0, SEARCH_MAX_OFFSET).default(0),
  limit: integerIn(1, SEARCH_MAX_LIMIT).default(SEARCH_MAX_LIMIT),
});

type SearchQuery = z.output<typeof searchQuery>;

/** The parameters that may be repeated. */
const REPEATED = ['author_id', 'channel_id', 'mentions', 'has'];

/** The larger of two optional lower bounds / the smaller of two upper bounds (snowflakes as decimal text). */
const tighter = (a: string | undefined, b: string | undefined, pick: 'max' | 'min') => {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BigInt(a) > BigInt(b) === (pick === 'max') ? a : b;
};

function searchOf(query: SearchQuery, channelIds: readonly string[], guildId?: string): MessageSearch {
  const content = query.content?.trim();
  return {
    guildId,
    channelIds,
    content: content ? content : undefined,
    authorIds: query.author_id,
    mentions: query.mentions,
    has: query.has,
    minId: tighter(query.min_id, query.after, 'max'),
    maxId: tighter(query.max_id, query.before, 'min'),
    pinned: query.pinned,
    order: query.sort_order,
    offset: query.offset,
    limit: query.limit,
  };
}

/** Discord's answer: each hit wrapped in a one-element array (once the hit and its context). */
const answer = (total: number, messages: Record<string, unknown>[]) => ({
  total_results: total,
  messages: messages.map((message) => [message]),
  analytics_id: null,
  doing_deep_historical_index: false,
});

const READABLE = PERMISSIONS.VIEW_CHANNEL | PERMISSIONS.READ_MESSAGE_HISTORY;

/** Message search in a guild (every channel and thread the caller may read) or in one channel (DMs). */
export function searchRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, messages } = deps;
  const { db } = services;

  async function run(search: MessageSearch, userId: string) {
    if (search.channelIds.length === 0) return answer(0, []);
    // Search tolerates replication lag: a replica answers when one is configured (docs/deployment.md#read-replica).
    const { total, rows } = await searchMessages(services.readReplica, search);
    return answer(total, await messages.render(rows, userId));
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/messages/search',
      policy: 'user-only',
      rateLimit: limits.read('messages:search'),
      query: searchQuery,
      repeatedQuery: REPEATED,
      async handler(ctx) {
        const query = ctx.query;
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const [channels, threads] = await Promise.all([
          store.guildChannels(guild.guildId),
          guildThreads(db, guild.guildId, ctx.user.id),
        ]);
        const parentPermissions = new Map(channels.map((c) => [c.id, guild.channelPermissions(c)]));
        const readable = channels.filter((c) => has(parentPermissions.get(c.id) ?? 0n, READABLE)).map((c) => c.id);
        for (const thread of threads) {
          const parent = parentPermissions.get(thread.parent_id) ?? 0n;
          if (!has(threadPermissions(parent), READABLE)) continue;
          const privateThread = thread.type === CHANNEL_TYPES.PRIVATE_THREAD;
          if (privateThread && !thread.is_member && !has(parent, PERMISSIONS.MANAGE_THREADS)) continue;
          readable.push(thread.id);
        }
        const asked = query.channel_id ? new Set(query.channel_id) : undefined;
        const channelIds = asked ? readable.filter((id) => asked.has(id)) : readable;
        return run(searchOf(query, channelIds, guild.guildId), ctx.user.id);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/messages/search',
      policy: 'user-only',
      rateLimit: limits.read('messages:search'),
      query: searchQuery,
      repeatedQuery: REPEATED,
      async handler(ctx) {
        const query = ctx.query;
        const channelAccess = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        const channelId = channelAccess.channel.id;
        const channelIds = !query.channel_id || query.channel_id.includes(channelId) ? [channelId] : [];
        return run(searchOf(query, channelIds), ctx.user.id);
      },
    }),
  ];
}
