/**
 * Event-bus throughput across processes (docs/performance.md#scale-out-fan-out-cost-model): how many gateway
 * dispatches per second one process can receive from the bus, on one Redis and on a three-master Redis cluster
 * (sharded pub/sub), with 1 and 3 receiving processes.
 *
 *   npm run bench:bus       BENCH_REDIS_URL (default redis://127.0.0.1:6379); the cluster leg needs redis-server
 *   BENCH_BUS_MESSAGES      messages per run (default 40000)
 *
 * The publisher runs here; each receiver is a child process with one subscriber that only counts (the floor
 * of what every gateway process pays per dispatch, whether or not it holds a recipient). A run publishes a
 * realistic MESSAGE_CREATE dispatch (about 900 bytes) for 200 guilds in turn, 500 in flight, and ends when
 * every receiver has counted every message.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DISPATCH_TOPIC, type Dispatch, dispatchShardKey } from '../src/domains/events/dispatch.ts';
import { openRedisClusterState, openRedisState, type RedisState } from '../src/platform/state/redis.ts';
import { REDIS_CLUSTER_AVAILABLE, startRedisCluster } from '../test/support/redis-cluster.ts';

type Target = { kind: 'redis'; url: string } | { kind: 'cluster'; nodes: string[] };

function open(target: Target, prefix: string): Promise<RedisState> {
  return target.kind === 'redis' ? openRedisState(target.url, prefix) : openRedisClusterState(target.nodes, prefix);
}

async function receiver(): Promise<void> {
  const { target, prefix, expected } = JSON.parse(process.argv[3] as string) as {
    target: Target;
    prefix: string;
    expected: number;
  };
  const state = await open(target, prefix);
  let count = 0;
  let first = 0;
  let cpuAtFirst = process.cpuUsage();
  state.bus.subscribe(DISPATCH_TOPIC, (dispatch) => {
    if (count === 0) {
      first = performance.now();
      cpuAtFirst = process.cpuUsage();
    }
    count++;
    if (dispatch.event !== 'MESSAGE_CREATE') throw new Error('unexpected event');
    if (count === expected) {
      // From the first message on: start-up (module loading, connecting) is not part of the cost.
      const cpu = process.cpuUsage(cpuAtFirst);
      process.send?.({ done: performance.now() - first, cpuMs: (cpu.user + cpu.system) / 1000 });
    }
  });
  await state.bus.ready();
  process.send?.({ ready: true });
}

function dispatchFor(guildId: string, n: number): Dispatch {
  const payload = {
    id: `13${String(n).padStart(17, '0')}`,
    channel_id: `${guildId.slice(0, -1)}7`,
    guild_id: guildId,
    author: {
      id: '1300000000000000001',
      username: 'alice',
      global_name: 'Alice',
      avatar: null,
      avatar_color: null,
      discriminator: '0',
      flags: 0,
    },
    member: {
      roles: [],
      joined_at: '2026-11-25T00:00:00.000Z',
      nick: null,
      avatar: null,
      banner: null,
      bio: null,
      deaf: false,
      mute: false,
      communication_disabled_until: null,
    },
    content: 'A message of ordinary length, about one sentence or two, as people write in a chat channel.',
    timestamp: '2026-11-25T00:00:00.000Z',
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    stickers: [],
    components: [],
    pinned: false,
    type: 0,
    flags: 0,
  };
  return {
    event: 'MESSAGE_CREATE',
    payload,
    audience: { kind: 'channel', guildId, channelId: payload.channel_id },
    publishedAt: Date.now(),
  };
}

async function run(label: string, target: Target, receivers: number, messages: number): Promise<string> {
  const prefix = `hearth-bench-${randomBytes(4).toString('hex')}:`;
  const children: ChildProcess[] = [];
  const results: Promise<{ done: number; cpuMs: number }>[] = [];
  const readies: Promise<void>[] = [];
  for (let i = 0; i < receivers; i++) {
    const child = fork(
      fileURLToPath(import.meta.url),
      ['receiver', JSON.stringify({ target, prefix, expected: messages })],
      {
        execArgv: ['--import', 'tsx'],
      },
    );
    children.push(child);
    readies.push(new Promise((resolve) => child.on('message', (m: { ready?: boolean }) => m.ready && resolve())));
    results.push(
      new Promise((resolve) =>
        child.on('message', (m: { done?: number; cpuMs?: number }) => {
          if (m.done !== undefined) resolve({ done: m.done, cpuMs: m.cpuMs ?? 0 });
        }),
      ),
    );
  }
  await Promise.all(readies);
  const publisher = await open(target, prefix);
  const guilds = Array.from({ length: 200 }, (_, k) => `12${String(k).padStart(3, '0')}00000000000000`);
  const started = performance.now();
  let inFlight: Promise<void>[] = [];
  for (let n = 0; n < messages; n++) {
    const guildId = guilds[n % guilds.length] as string;
    const dispatch = dispatchFor(guildId, n);
    inFlight.push(publisher.bus.publish(DISPATCH_TOPIC, dispatch, dispatchShardKey(dispatch)));
    if (inFlight.length >= 500) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  const published = performance.now() - started;
  const received = await Promise.all(results);
  const slowest = Math.max(...received.map((r) => r.done));
  for (const child of children) child.kill();
  await publisher.close();
  const perReceiver = Math.round(messages / (slowest / 1000));
  const cpuUs = Math.round((Math.max(...received.map((r) => r.cpuMs)) * 1000) / messages);
  return `| ${label} | ${receivers} | ${Math.round(messages / (published / 1000))}/s | ${perReceiver}/s | ${cpuUs} µs |`;
}

async function main(): Promise<void> {
  const messages = Number(process.env.BENCH_BUS_MESSAGES ?? 40_000);
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const rows: string[] = [];
  for (const receivers of [1, 3]) rows.push(await run('one Redis', { kind: 'redis', url }, receivers, messages));
  if (REDIS_CLUSTER_AVAILABLE) {
    const cluster = await startRedisCluster();
    try {
      const nodes = cluster.nodes.map((node) => `redis://${node}`);
      for (const receivers of [1, 3])
        rows.push(await run('3-master cluster, sharded', { kind: 'cluster', nodes }, receivers, messages));
    } finally {
      await cluster.close();
    }
  }
  console.log(`${messages} MESSAGE_CREATE dispatches, Node ${process.version}\n`);
  console.log('| Bus | Receiving processes | Published | Received per process | Receiver CPU per message |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
}

if (process.argv[2] === 'receiver') await receiver();
else await main();
