import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MessageSearch, searchMessages } from '../../src/domains/chat/search-store.ts';
import type { Queryable } from '../../src/platform/db/database.ts';
import { as, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The message search's author and channel filters are served by the GIN index (migration 0200,
 * docs/performance.md#search), on whichever backend the suite runs. The plan is read with sequential scans
 * disabled: the planner then still picks a sequential scan when no index can answer the conditions, so the
 * test fails if the filters fall out of the index, without depending on the table's size or statistics.
 * Checked on the count (the planner may serve the newest-first page by walking the primary key instead,
 * also an index, when that looks cheaper). The latency itself is `npm run bench:search`'s to measure.
 */
let server: TestServer;
let owner: TestUser;
let other: TestUser;
let guildId: string;
const channels: string[] = [];
before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  other = await registerUser(server);
  const guild = await newGuild(server, owner, 'plan');
  guildId = guild.id;
  channels.push(guild.system_channel_id);
  for (const name of ['two', 'three', 'four'])
    channels.push((await ok(as(server, owner, 'POST', `/guilds/${guildId}/channels`, { name }))).id);
  // 20,000 messages over four channels and two authors; about one in a hundred holds the word "quokka", one in
  // fifty a link.
  const { db } = server.app.services;
  await db.query(
    `INSERT INTO messages (id, channel_id, guild_id, author_id, content)
     SELECT (1000000 + g)::bigint << 22, ($1::bigint[])[1 + g % 4], $2::bigint, ($3::bigint[])[1 + (g / 4) % 2],
            CASE WHEN g % 97 = 0 THEN 'a quokka ' || g ELSE 'plain words ' || g END
              || CASE WHEN g % 50 = 0 THEN ' https://example.com/' || g ELSE '' END
       FROM generate_series(1, 20000) AS g`,
    [channels, guildId, [owner.id, other.id]],
  );
  // What autovacuum does after a load: statistics, and the GIN index's pending entries merged in.
  await db.query('VACUUM ANALYZE messages');
});
after(async () => {
  await server?.close();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

/** The plans of the statements `searchMessages` runs, [page, count], read with seqscan off. */
async function plans(search: MessageSearch): Promise<[PlanNode[], PlanNode[]]> {
  const { db } = server.app.services;
  const statements: [string, readonly unknown[]][] = [];
  const recorder: Queryable = {
    query: (sql: string, params: readonly unknown[] = []) => {
      if (!sql.startsWith('EXPLAIN')) statements.push([sql, params]);
      return db.query(sql, params);
    },
  } as Queryable;
  await searchMessages(recorder, search);
  assert.equal(statements.length, 2, 'the page and the count');
  return db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    const out: PlanNode[][] = [];
    for (const [sql, params] of statements) {
      const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      const raw = row?.['QUERY PLAN'];
      const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
      out.push(nodes((parsed[0] as { Plan: PlanNode }).Plan));
    }
    return out as [PlanNode[], PlanNode[]];
  });
}

const base = (overrides: Partial<MessageSearch>): MessageSearch => ({
  guildId,
  channelIds: channels,
  order: 'desc',
  offset: 0,
  limit: 25,
  ...overrides,
});

const noSeqScan = (plan: PlanNode[]) =>
  assert.equal(
    plan.some((n) => n['Node Type'] === 'Seq Scan'),
    false,
    `a sequential scan: ${JSON.stringify(plan.map((n) => n['Node Type']))}`,
  );

/** The count's plan: no sequential scan, and the GIN index scan has `lexeme` in its condition. */
function assertServedBy([page, count]: [PlanNode[], PlanNode[]], lexeme: string): void {
  noSeqScan(page);
  noSeqScan(count);
  const plan = count;
  const gin = plan.find((n) => n['Index Name'] === 'messages_search_idx');
  assert.ok(gin, `messages_search_idx unused: ${JSON.stringify(plan.map((n) => n['Index Name'] ?? n['Node Type']))}`);
  assert.ok(gin['Index Cond']?.includes(lexeme), `${lexeme} not in the index condition: ${gin['Index Cond']}`);
}

describe('message search plans (issue 16)', () => {
  it('a word with channel_id: the channel is in the GIN index condition', async () => {
    const channel = channels[2] as string;
    assertServedBy(await plans(base({ channelIds: [channel], content: 'quokka' })), `'in ${channel}'`);
  });

  it('a word with author_id: the author is in the GIN index condition', async () => {
    assertServedBy(await plans(base({ content: 'quokka', authorIds: [other.id] })), `'from ${other.id}'`);
  });

  it('has: with author_id and channel_id: both in the GIN index condition', async () => {
    const channel = channels[1] as string;
    const both = await plans(base({ channelIds: [channel], authorIds: [owner.id], has: ['link'] }));
    assertServedBy(both, `'in ${channel}'`);
    assertServedBy(both, `'from ${owner.id}'`);
  });

  it('the answers match the columns the markers stand for', async () => {
    const { db } = server.app.services;
    const channel = channels[3] as string;
    const { total, rows } = await searchMessages(
      db,
      base({ channelIds: [channel], content: 'quokka', authorIds: [owner.id], limit: 100 }),
    );
    const [expected] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE channel_id = $1 AND author_id = $2 AND content LIKE '%quokka%'`,
      [channel, owner.id],
    );
    assert.ok((expected?.n ?? 0) > 0);
    assert.equal(total, expected?.n);
    assert.equal(rows.length, expected?.n);
    assert.ok(rows.every((r) => r.channel_id === channel && r.author_id === owner.id));
  });
});
