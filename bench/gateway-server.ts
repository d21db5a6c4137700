/**
 * Child process of `bench/gateway.ts` and `bench/identify.ts`: a real Hearth server (test mode, fresh database)
 * seeded with one guild of `BENCH_MEMBERS` members, each holding `BENCH_SESSIONS` session tokens. Runs in its
 * own process so its RSS is not mixed with the 5,000 client sockets; answers `{cmd:'rss'}` after a full GC.
 * With `BENCH_JOIN` (the `join` of the first node's seed: its database, Redis prefix and secrets) it seeds
 * nothing and starts a second node of the same instance instead.
 */
import { CHAT_INVALIDATE_TOPIC } from '../src/domains/chat/events.ts';
import { digest } from '../src/platform/crypto/tokens.ts';
import { request } from '../test/support/client.ts';
import { startTestServer, type TestSecrets } from '../test/support/server.ts';

const members = Number(process.env.BENCH_MEMBERS ?? 1000);
const sessionsPerMember = Number(process.env.BENCH_SESSIONS ?? 5);

/**
 * Two nodes of one instance refuse to start unless uploads go to one shared store (docs/deployment.md). The bench
 * uploads nothing, so each node declares its object directory shared rather than configuring one.
 */
const NO_UPLOADS = { HEARTH_SHARED_OBJECT_DIR: 'true' };

interface Join {
  databaseUrl: string;
  redisPrefix: string;
  secrets: TestSecrets;
}

if (process.env.BENCH_JOIN) {
  const join = JSON.parse(process.env.BENCH_JOIN) as Join;
  const node = await startTestServer(
    { DATABASE_URL: join.databaseUrl, HEARTH_REDIS_PREFIX: join.redisPrefix, ...NO_UPLOADS },
    { secrets: join.secrets },
  );
  process.on('message', (message: { cmd: string }) => {
    if (message.cmd === 'stop') node.close().then(() => process.exit(0));
  });
  process.send?.({ ready: true, port: node.port, url: node.url });
  await new Promise(() => {});
}

const server = await startTestServer(NO_UPLOADS);
const { services } = server.app;
const { db, ids } = services;

const owner = await request(server, 'POST', '/v1/auth/register', {
  body: { email: 'owner@bench.test', password: 'bench-owner-password', username: 'owner' },
});
if (owner.status !== 200) throw new Error(`register: ${owner.text}`);
const ownerToken: string = owner.body.token;
const guild = await request(server, 'POST', '/v1/guilds', { auth: ownerToken, body: { name: 'Bench' } });
if (guild.status !== 200) throw new Error(`guild: ${guild.text}`);

const userIds: string[] = [];
for (let i = 0; i < members; i++) userIds.push(ids.next());
await db.query(
  `INSERT INTO users (id, username) SELECT id, 'm' || ord FROM unnest($1::bigint[]) WITH ORDINALITY AS t(id, ord)`,
  [userIds],
);
await db.query('INSERT INTO members (guild_id, user_id) SELECT $1, unnest($2::bigint[])', [guild.body.id, userIds]);
// Rows written behind the API's back: tell the read model, as the member routes do for each join (its member
// map, loaded when the guild was created, would otherwise leave them out of the fan-out).
for (const userId of userIds) await services.bus.publish(CHAT_INVALIDATE_TOPIC, { guildId: guild.body.id, userId });
// Sessions inserted in bulk, exactly as SessionService stores them (token digest only).
const tokens: string[][] = userIds.map(() =>
  Array.from({ length: sessionsPerMember }, () => services.tokenCheck.newSessionToken()),
);
const rows = userIds.flatMap((userId, i) =>
  (tokens[i] as string[]).map((token) => [ids.next(), userId, digest(token)]),
);
await db.query(
  `INSERT INTO sessions (id, user_id, token_hash, client_info, ip, created_at, last_used_at)
   SELECT id, user_id, token_hash, '{}', '127.0.0.1', now(), now()
     FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS t(id, user_id, token_hash)`,
  [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
);

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'rss') {
    for (let i = 0; i < 3; i++) globalThis.gc?.();
    process.send?.({ rss: process.memoryUsage().rss, stats: server.app.gateway?.stats() });
  } else if (message.cmd === 'many-guilds') {
    // READY at scale (issue 16): the first member joins 99 more guilds of the same 1,000 members.
    manyGuilds().then((result) => process.send?.(result));
  } else if (message.cmd === 'stop') {
    server.close().then(() => process.exit(0));
  }
});

async function manyGuilds(): Promise<{ token: string; guilds: number; members: number }> {
  const guildIds: string[] = [guild.body.id];
  for (let i = 1; i < 100; i++) {
    const created = await request(server, 'POST', '/v1/guilds', { auth: ownerToken, body: { name: `Bench ${i}` } });
    if (created.status !== 200) throw new Error(`guild: ${created.text}`);
    guildIds.push(created.body.id);
  }
  await db.query(
    `INSERT INTO members (guild_id, user_id)
     SELECT g, u FROM unnest($1::bigint[]) AS g, unnest($2::bigint[]) AS u ON CONFLICT DO NOTHING`,
    [guildIds.slice(1), userIds],
  );
  // Rows written behind the API's back: tell the read model, as the member routes do for each join.
  for (const guildId of guildIds.slice(1))
    for (const userId of userIds) await services.bus.publish(CHAT_INVALIDATE_TOPIC, { guildId, userId });
  return { token: (tokens[0] as string[])[0] as string, guilds: guildIds.length, members };
}

process.send?.({
  ready: true,
  port: server.port,
  url: server.url,
  storage: db.kind,
  ownerToken,
  guildId: guild.body.id,
  channelId: guild.body.system_channel_id,
  tokens,
  join: services.config.databaseUrl
    ? ({
        databaseUrl: services.config.databaseUrl,
        redisPrefix: services.config.redisPrefix,
        secrets: services.secrets,
      } satisfies Join)
    : undefined,
});
