import type { Queryable } from '../../platform/db/database.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './rows.ts';

/** What `has:` can ask for (Discord's names). */
export const SEARCH_HAS = ['link', 'embed', 'file', 'image', 'video', 'sound', 'sticker'] as const;
export type SearchHas = (typeof SEARCH_HAS)[number];

/**
 * `total_results` is exact up to this many matches; beyond, it is PostgreSQL's estimate of the count. An
 * exact count reads every match from the table (a common word: tens of thousands of rows, hundreds of
 * milliseconds), and Discord's own total is an estimate past a point too (docs/chat.md, "Search").
 */
export const SEARCH_EXACT_TOTAL = 100;

/**
 * The message types searched: what people and bots write (default, reply, slash-command and context-menu
 * answers), not system messages (joins, pins, thread starts, group-DM changes).
 */
export const SEARCHED_TYPES = [0, 19, 20, 23] as const;

export interface MessageSearch {
  /** Guild scope: the guild's messages (with `channelIds`, the caller's readable channels of it). */
  guildId?: string | undefined;
  /** The channels searched: every one the caller may read (and, with `channel_id`, asked for). Never empty. */
  channelIds: readonly string[];
  /** Words, `"phrases"`, `or` and `-exclusions` (websearch syntax); case-insensitive. */
  content?: string | undefined;
  /** Any of these authors. */
  authorIds?: readonly string[] | undefined;
  /** Mentioning any of these users. */
  mentions?: readonly string[] | undefined;
  /** Every one of these. */
  has?: readonly SearchHas[] | undefined;
  /** Ids strictly above / below (snowflakes stand for times). */
  minId?: string | undefined;
  maxId?: string | undefined;
  pinned?: boolean | undefined;
  order: 'asc' | 'desc';
  offset: number;
  limit: number;
}

/**
 * The marker lexeme of each `has:` value in `messages.search_vector` (migration 0145 derives them from the
 * content, embeds, attachments and stickers); pinned messages carry 'is pinned'. A space keeps them apart
 * from every word.
 */
const HAS_LEXEME: Record<SearchHas, string> = {
  link: 'has link',
  embed: 'has embed',
  file: 'has file',
  image: 'has image',
  video: 'has video',
  sound: 'has sound',
  sticker: 'has sticker',
};
const PINNED_LEXEME = 'is pinned';
/** The author and channel marker prefixes (migration 0200): 'from <author id>', 'in <channel id>'. */
const AUTHOR_LEXEME = 'from ';
const CHANNEL_LEXEME = 'in ';
/**
 * Up to this many channels, a search with words or `has:` finds its channels through their marker lexemes in
 * the GIN index; beyond, the channel column filters (each marker is a posting list to merge).
 */
export const SEARCH_CHANNEL_MARKERS = 5;

/**
 * Message search on PostgreSQL full-text search (`messages.search_vector`, migration 0145): the page of
 * matches newest (or oldest) first and how many there are (exact up to `SEARCH_EXACT_TOTAL`).
 */
export async function searchMessages(
  db: Queryable,
  search: MessageSearch,
): Promise<{ total: number; rows: MessageRow[] }> {
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [`msg.type IN (${SEARCHED_TYPES.join(', ')})`];
  if (search.guildId !== undefined) where.push(`msg.guild_id = ${bind(search.guildId)}`);
  const markers = [...new Set(search.has ?? [])].map((kind) => HAS_LEXEME[kind]);
  if (search.pinned === true) markers.push(PINNED_LEXEME);
  // With words or markers, the GIN index already narrows the search: the author and a few channels join that
  // scan as marker lexemes (migration 0200), each an exact stand-in for its column. A plain column condition
  // beside it would have the planner AND in a bitmap of every message of the channel or author, slower than
  // the GIN scan alone (docs/performance.md#search). Without one, or for many channels (the readable set of a
  // guild: a union of nearly every message), the btree indexes on (channel_id, id) and (author_id, id) serve.
  const viaGin = search.content !== undefined || markers.length > 0;
  const anyOf = (lexemes: string[]) =>
    `msg.search_vector @@ ${bind(lexemes.map((l) => `'${l}'`).join(' | '))}::tsquery`;
  if (viaGin && search.channelIds.length <= SEARCH_CHANNEL_MARKERS)
    where.push(anyOf(search.channelIds.map((id) => `${CHANNEL_LEXEME}${id}`)));
  else
    where.push(
      search.channelIds.length === 1
        ? `msg.channel_id = ${bind(search.channelIds[0])}`
        : `msg.channel_id = ANY(${bind(search.channelIds)}::bigint[])`,
    );
  if (search.content !== undefined)
    where.push(`msg.search_vector @@ websearch_to_tsquery('simple'::regconfig, ${bind(search.content)})`);
  if (search.authorIds?.length)
    where.push(
      viaGin
        ? anyOf(search.authorIds.map((id) => `${AUTHOR_LEXEME}${id}`))
        : `msg.author_id = ANY(${bind(search.authorIds)}::bigint[])`,
    );
  if (search.mentions?.length)
    where.push(`cardinality(msg.mentions) > 0 AND msg.mentions && ${bind(search.mentions)}::bigint[]`);
  if (markers.length > 0)
    where.push(`msg.search_vector @@ ${bind(markers.map((lexeme) => `'${lexeme}'`).join(' & '))}::tsquery`);
  if (search.pinned === false) where.push(`NOT (msg.search_vector @@ '''${PINNED_LEXEME}'''::tsquery)`);
  if (search.minId !== undefined) where.push(`msg.id > ${bind(search.minId)}::bigint`);
  if (search.maxId !== undefined) where.push(`msg.id < ${bind(search.maxId)}::bigint`);
  const filter = where.join(' AND ');
  const filterParams = [...params];

  const order = search.order === 'asc' ? 'ASC' : 'DESC';
  const rows = db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages msg WHERE ${filter}
      ORDER BY msg.id ${order} LIMIT ${bind(search.limit)} OFFSET ${bind(search.offset)}`,
    params,
  );
  const counted = db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM messages msg WHERE ${filter} LIMIT ${SEARCH_EXACT_TOTAL}) hits`,
    filterParams,
  );
  // The estimate is only needed past the exact count, but asking for it at once (planning, no reads) saves
  // a round trip on the searches that need it.
  const estimated = estimatedCount(db, `SELECT 1 FROM messages msg WHERE ${filter}`, filterParams);
  const [page, [count], estimate] = await Promise.all([rows, counted, estimated]);
  const exact = count?.n ?? 0;
  if (exact < SEARCH_EXACT_TOTAL) return { total: exact, rows: page };
  return { total: Math.max(exact, estimate, search.offset + page.length), rows: page };
}

/** The planner's estimate of how many rows `sql` returns (EXPLAIN, nothing is read). */
async function estimatedCount(db: Queryable, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
  const raw = row?.['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan?: { 'Plan Rows'?: number } }[];
  return Math.round(plan[0]?.Plan?.['Plan Rows'] ?? 0);
}

export interface SearchableThread {
  id: string;
  parent_id: string;
  type: number;
  /** Whether the searcher is a member (private threads are searched by members and thread moderators only). */
  is_member: boolean;
}

/** Every thread of a guild, archived ones included, with whether `userId` has joined it. */
export function guildThreads(db: Queryable, guildId: string, userId: string): Promise<SearchableThread[]> {
  return db.query<SearchableThread>(
    `SELECT t.channel_id::text AS id, t.parent_id::text AS parent_id, c.type,
            EXISTS (SELECT 1 FROM thread_members tm WHERE tm.thread_id = t.channel_id AND tm.user_id = $2) AS is_member
       FROM threads t JOIN channels c ON c.id = t.channel_id
      WHERE t.guild_id = $1`,
    [guildId, userId],
  );
}
