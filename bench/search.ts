import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import pg from 'pg';
import { SEARCH_EXACT_TOTAL } from '../src/domains/chat/search-store.ts';
import { SNOWFLAKE_EPOCH_MS } from '../src/platform/crypto/snowflake.ts';

/**
 * `npm run bench:search` (add `-- --write` to update docs/performance.md), with BENCH_DATABASE_URL set to a
 * PostgreSQL admin connection (postgres://postgres@127.0.0.1:5432/test). Starts the server on a fresh
 * database (bench/server.ts), makes a guild of 21 text channels (one hidden from the searcher) and 10
 * authors, bulk-inserts BENCH_SEARCH_MESSAGES (1,000,000) messages of words drawn from a skewed vocabulary
 * with generate_series (links, mentions, image attachments, embeds and pins sprinkled in), then runs
 * BENCH_SEARCH_QUERIES (200) varied searches one after another over HTTP as a member who cannot see the
 * hidden channel, and reports p50/p95/p99. Target: p95 < 50 ms.
 */
const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
const QUERIES = Number(process.env.BENCH_SEARCH_QUERIES ?? 200);
const CHANNELS = 20;
const AUTHORS = 10;
const write = process.argv.includes('--write');
const adminUrl = process.env.BENCH_DATABASE_URL;

/** The vocabulary, most frequent first: a message's words are drawn with a strong skew towards the start. */
const WORDS = (
  'the a to and is it you i of in that for on this be have with was not are just so but me my we what do ' +
  'can at like if no get all your its up out about they one now know think good how time when there yeah ' +
  'going will he would some see got im dont go more back people make want then really still day right ' +
  'work game new need well today thanks lol also them much way him her been here after first because ' +
  'tomorrow server voice channel message play music stream build deploy release update patch bug issue ' +
  'test merge branch commit review design meeting lunch coffee weekend movie book photo video link file ' +
  'image screenshot sticker emoji party birthday holiday travel train flight hotel beach mountain river ' +
  'forest garden kitchen recipe pizza pasta salad dinner breakfast football tennis chess puzzle guitar ' +
  'piano drums concert festival museum gallery library school homework exam project deadline invoice ' +
  'budget market price discount shipping package delivery weather storm sunny rainy snow winter summer ' +
  'autumn spring monday friday keyboard monitor laptop phone battery charger router database postgres ' +
  'kernel compiler typescript rust python javascript docker cluster latency benchmark throughput ' +
  'dragon wizard castle knight potion quest raid dungeon loot guild tavern lantern compass harbor ' +
  'lighthouse glacier volcano canyon meadow orchard vineyard saffron cardamom turmeric paprika ' +
  'quokka axolotl narwhal pangolin okapi capybara platypus wombat ocelot manatee'
).split(' ');

function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const devNull = openSync('/dev/null', 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/server.ts'], {
    stdio: ['ignore', devNull, 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
}

async function json(url: string, method: string, body?: unknown, auth?: string): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

async function main(): Promise<void> {
  if (!adminUrl) throw new Error('bench:search runs on PostgreSQL: set BENCH_DATABASE_URL (an admin connection)');
  const { child, url } = await startServer();
  // bench/server.ts names its database after its own pid.
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/hearth_bench_${child.pid}`;
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  try {
    await db.connect();
    const register = async (i: number) => {
      const email = `search-bench-${Date.now()}-${i}@example.test`;
      const { token } = await json(`${url}/v1/auth/register`, 'POST', { email, password: 'bench-password-123' });
      const me = await json(`${url}/v1/users/@me`, 'GET', undefined, token);
      return { token: token as string, id: me.id as string };
    };
    const users: { token: string; id: string }[] = [];
    for (let i = 0; i < AUTHORS; i++) users.push(await register(i));
    const [owner, searcher] = users as [{ token: string; id: string }, { token: string; id: string }];
    const guild = await json(`${url}/v1/guilds`, 'POST', { name: 'Search bench' }, owner.token);
    const invite = await json(
      `${url}/v1/channels/${guild.system_channel_id}/invites`,
      'POST',
      { max_uses: 0 },
      owner.token,
    );
    for (const user of users.slice(1)) await json(`${url}/v1/invites/${invite.code}`, 'POST', {}, user.token);
    const channels: string[] = [guild.system_channel_id];
    for (let i = 1; i < CHANNELS; i++)
      channels.push((await json(`${url}/v1/guilds/${guild.id}/channels`, 'POST', { name: `c${i}` }, owner.token)).id);
    const hidden = (
      await json(
        `${url}/v1/guilds/${guild.id}/channels`,
        'POST',
        { name: 'staff', permission_overwrites: [{ id: guild.id, type: 0, deny: String(1n << 10n) }] },
        owner.token,
      )
    ).id as string;
    const allChannels = [...channels, hidden];

    // 1,000,000 messages over the past year, ids in time order; the GIN index is built after the load.
    const started = performance.now();
    const start = BigInt(Date.now() - 365 * 86_400_000) - SNOWFLAKE_EPOCH_MS;
    const stepMs = Math.floor((365 * 86_400_000) / MESSAGES);
    await db.query('DROP INDEX messages_search_idx');
    await db.query(
      `INSERT INTO messages (id, channel_id, guild_id, author_id, type, content, mentions, embeds, attachments, pinned_at)
       SELECT ((($1::bigint + g::bigint * $2::bigint)) << 22) | (g % 4096),
              ($3::bigint[])[1 + (g::bigint * 7919) % cardinality($3::bigint[])],
              $4::bigint,
              ($5::bigint[])[1 + (g::bigint * 104729) % cardinality($5::bigint[])],
              0,
              body.text || CASE WHEN g % 20 = 0 THEN ' https://example.com/' || g ELSE '' END
                        || CASE WHEN g % 33 = 0 THEN ' <@' || ($5::bigint[])[1 + g % cardinality($5::bigint[])] || '>' ELSE '' END,
              CASE WHEN g % 33 = 0 THEN ARRAY[($5::bigint[])[1 + g % cardinality($5::bigint[])]] ELSE '{}'::bigint[] END,
              CASE WHEN g % 50 = 0 THEN jsonb_build_array(jsonb_build_object('type', 'rich', 'title', 'embed ' || g,
                     'thumbnail', jsonb_build_object('url', 'https://example.com/t.png'))) ELSE '[]'::jsonb END,
              CASE WHEN g % 25 = 0 THEN jsonb_build_array(jsonb_build_object('id', g::text, 'filename', 'p.png',
                     'size', 1000, 'content_type', CASE WHEN g % 75 = 0 THEN 'application/pdf' ELSE 'image/png' END,
                     'url', 'https://cdn.example/p.png')) ELSE '[]'::jsonb END,
              CASE WHEN g % 2000 = 0 THEN now() ELSE NULL END
         FROM generate_series(1, $6::int) AS g,
              LATERAL (SELECT string_agg(($7::text[])[1 + floor(power(random(), 3) * cardinality($7::text[]))::int], ' ') AS text
                         FROM generate_series(1, 3 + (g * 13) % 14) AS w WHERE w > 0 * g) AS body`,
      [start.toString(), stepMs, allChannels, guild.id, users.map((u) => u.id), MESSAGES, WORDS],
    );
    await db.query('CREATE INDEX messages_search_idx ON messages USING gin (search_vector)');
    // What autovacuum does to a table after a load this size.
    await db.query('VACUUM ANALYZE messages');
    const loadSeconds = (performance.now() - started) / 1000;
    console.log(`loaded ${fmt(MESSAGES, 0)} messages in ${fmt(loadSeconds)} s`);
    if (process.env.BENCH_SEARCH_HOLD) {
      // For EXPLAIN by hand: the database and server stay up this many seconds.
      console.log(`holding ${dbUrl} (guild ${guild.id}, searcher ${searcher.id}, server ${url})`);
      writeFileSync(
        '/tmp/search-bench-hold.json',
        JSON.stringify({ url, token: searcher.token, guild: guild.id, db: dbUrl.toString(), channels, hidden }),
      );
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.BENCH_SEARCH_HOLD) * 1000));
    }

    // Varied searches: common, middling and rare words, several words, phrases, exclusions, and every filter.
    const pick = <T>(list: readonly T[], i: number) => list[i % list.length] as T;
    const common = WORDS.slice(0, 30);
    const middling = WORDS.slice(100, 250);
    const rare = WORDS.slice(-40);
    const author = (i: number) => pick(users, i * 3).id;
    const channel = (i: number) => pick(channels, i * 5);
    const midId = (i: number) => ((start + BigInt(((i * 37) % 100) * 315_360_000)) << 22n).toString();
    const kinds: ((i: number) => string)[] = [
      (i) => `content=${pick(common, i)}`,
      (i) => `content=${pick(middling, i)}`,
      (i) => `content=${pick(rare, i)}`,
      (i) => `content=${encodeURIComponent(`${pick(middling, i)} ${pick(middling, i + 7)}`)}`,
      (i) => `content=${encodeURIComponent(`"${pick(common, i)} ${pick(common, i + 1)}"`)}`,
      (i) => `content=${encodeURIComponent(`${pick(middling, i)} -${pick(common, i)}`)}`,
      (i) => `author_id=${author(i)}`,
      (i) => `author_id=${author(i)}&content=${pick(middling, i)}`,
      (i) => `channel_id=${channel(i)}&content=${pick(middling, i + 3)}`,
      (i) => `mentions=${author(i)}`,
      () => 'has=link',
      (i) => `has=image&content=${pick(common, i)}`,
      () => 'has=file&has=image',
      () => 'has=embed',
      () => 'pinned=true',
      (i) => `content=${pick(middling, i)}&min_id=${midId(i)}`,
      (i) => `content=${pick(common, i)}&max_id=${midId(i)}&sort_order=asc`,
      (i) => `content=${pick(middling, i)}&offset=${(i % 20) * 25}`,
      (i) => `content=${pick(rare, i)}&author_id=${author(i)}&has=link`,
      () => '',
    ];
    const headers = { authorization: searcher.token };
    // The yardstick on the same machine at the same moment: the plain list of a channel's last 25 messages.
    const listTimings: number[] = [];
    const timings: number[] = [];
    const totals: number[] = [];
    const slowest: [number, string][] = [];
    const byKind = kinds.map(() => [] as number[]);
    for (let i = 0; i < QUERIES + 20; i++) {
      const query = pick(kinds, i)(Math.floor(i / kinds.length));
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/guilds/${guild.id}/messages/search?${query}`, { headers });
      const body = (await res.json()) as { total_results: number; messages: { channel_id: string }[][] };
      const elapsed = performance.now() - t0;
      if (res.status !== 200) throw new Error(`search ${query}: ${res.status} ${JSON.stringify(body)}`);
      if (body.messages.some(([m]) => m?.channel_id === hidden)) throw new Error('a hidden channel leaked');
      const l0 = performance.now();
      const list = await fetch(`${url}/v1/channels/${pick(channels, i)}/messages?limit=25`, { headers });
      await list.arrayBuffer();
      if (list.status !== 200) throw new Error(`list: ${list.status}`);
      if (i >= 20) listTimings.push(performance.now() - l0);
      // The first 20 warm the server's and the database's caches and are not counted.
      if (i >= 20) {
        timings.push(elapsed);
        byKind[i % kinds.length]?.push(elapsed);
        totals.push(body.total_results);
        slowest.push([elapsed, query]);
      }
    }
    timings.sort((a, b) => a - b);
    if (process.env.BENCH_SEARCH_VERBOSE === '1') {
      for (const [ms, query] of slowest.sort((a, b) => b[0] - a[0]).slice(0, 15))
        console.log(`${fmt(ms)} ms  ${query}`);
      // Each kind's median and worst, named by its first query (the author and channel filters among them).
      kinds.forEach((kind, k) => {
        const sorted = (byKind[k] ?? []).sort((a, b) => a - b);
        if (sorted.length === 0) return;
        const name = kind(0)
          .replace(/=\d{6,}/g, '=<id>')
          .replace(/content=[a-z]+(?=&|$)/g, 'content=<word>');
        console.log(
          `kind ${String(k + 1).padStart(2)}: p50 ${fmt(percentile(sorted, 50))} ms, max ${fmt(sorted[sorted.length - 1] as number)} ms  ${name || '(no filter)'}`,
        );
      });
    }
    const p50 = percentile(timings, 50);
    const p95 = percentile(timings, 95);
    const p99 = percentile(timings, 99);
    const max = timings[timings.length - 1] as number;
    const table = [
      '| Measurement | Result | Target |',
      '|---|---|---|',
      `| messages in the guild | ${fmt(MESSAGES, 0)} (loaded and indexed in ${fmt(loadSeconds, 0)} s) | |`,
      `| searches (sequential, over HTTP, ${kinds.length} kinds) | ${QUERIES}, median total_results ${fmt(
        percentile(
          [...totals].sort((a, b) => a - b),
          50,
        ),
        0,
      )} (exact to ${SEARCH_EXACT_TOTAL}, estimated beyond) | |`,
      `| search latency p50 | ${fmt(p50)} ms | |`,
      `| search latency p95 | ${fmt(p95)} ms | < 50 ms |`,
      `| search latency p99 / max | ${fmt(p99)} ms / ${fmt(max)} ms | |`,
      `| yardstick: \`GET /channels/{id}/messages?limit=25\` p50 / p95 (interleaved) | ${fmt(
        percentile(
          listTimings.sort((a, b) => a - b),
          50,
        ),
      )} ms / ${fmt(percentile(listTimings, 95))} ms | |`,
    ].join('\n');
    const context = `${new Date().toISOString().slice(0, 10)}, PostgreSQL, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
    console.log(`\n${context}\n\n${table}\n`);
    console.log(`target met: ${p95 < 50 ? 'yes' : 'no'} (p95 ${fmt(p95)} ms)`);
    if (write) writeBlock('search-pg', `${context}\n\n${table}`);
  } finally {
    await db.end().catch(() => {});
    child.kill('SIGTERM');
  }
}

/** Replaces the block between `<!-- name:start -->` and `<!-- name:end -->` in docs/performance.md. */
function writeBlock(marker: string, content: string): void {
  const path = new URL('../docs/performance.md', import.meta.url);
  const doc = readFileSync(path, 'utf8');
  const pattern = new RegExp(`<!-- ${marker}:start -->[\\s\\S]*<!-- ${marker}:end -->`);
  if (!pattern.test(doc)) throw new Error(`docs/performance.md has no ${marker} block`);
  writeFileSync(path, doc.replace(pattern, `<!-- ${marker}:start -->\n${content}\n<!-- ${marker}:end -->`));
  console.log(`docs/performance.md updated (${marker})`);
}

await main();
