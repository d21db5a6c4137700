/**
 * Gateway benchmarks (issue 8): memory per identified idle connection at 5,000 connections, identify → READY
 * rate, MESSAGE_CREATE fan-out p99 to 1,000 members, and message creates per second through the API.
 *
 *   npm run bench:gateway                 embedded PGlite, then PostgreSQL when BENCH_DATABASE_URL is set
 *   runGatewayBench() from bench/run.ts   same, returns the figures
 *
 * The server runs in a child process (bench/gateway-server.ts) so its RSS excludes the client sockets.
 * Clients spread over 127.0.0.2–127.0.0.x because the gateway allows 256 sockets per IP.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { eachInFlight } from './in-flight.ts';

export interface GatewayBenchResult {
  storage: string;
  connections: number;
  bytesPerConnection: number;
  identifyPerSecond: number;
  fanoutMembers: number;
  fanoutP50Ms: number;
  fanoutP99Ms: number;
  presenceP50Ms: number;
  presenceP99Ms: number;
  messageCreatesPerSecond: number;
  readyGuilds: number;
  readyMembersPerGuild: number;
  readyMs: number;
  readyBytes: number;
}

interface Seed {
  port: number;
  url: string;
  storage: string;
  ownerToken: string;
  guildId: string;
  channelId: string;
  tokens: string[][];
}

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 5000);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000);
const PER_IP = 250;

function startChild(databaseUrl: string | undefined): Promise<{ child: ChildProcess; seed: Seed }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_MEMBERS: String(MEMBERS),
    BENCH_SESSIONS: String(Math.ceil(CONNECTIONS / MEMBERS)),
  };
  if (databaseUrl) env.TEST_DATABASE_URL = databaseUrl;
  else delete env.TEST_DATABASE_URL;
  const child = fork(fileURLToPath(new URL('./gateway-server.ts', import.meta.url)), [], {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server process there.
    execArgv: [
      '--expose-gc',
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      '--import',
      'tsx',
    ],
    env,
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    child.once('message', (message) => resolve({ child, seed: message as Seed }));
  });
}

function ask<T>(child: ChildProcess, cmd: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send({ cmd });
  });
}

interface Client {
  ws: WebSocket;
  onDispatch?: (t: string, raw: string) => void;
  onAck?: () => void;
}

/** Connects and identifies; resolves at READY. */
function identify(seed: Seed, token: string, index: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${seed.port}/gateway?v=1&encoding=json`, {
      localAddress: `127.0.0.${2 + Math.floor(index / PER_IP)}`,
      perMessageDeflate: false,
    });
    const client: Client = { ws };
    ws.on('error', reject);
    ws.on('close', (code) => reject(new Error(`closed ${code}`)));
    ws.on('message', (data) => {
      const text = data.toString();
      const t = /^\{"op":0,"t":"([A-Z_]+)"/.exec(text)?.[1];
      if (text.startsWith('{"op":10')) {
        ws.send(
          JSON.stringify({ op: 2, d: { token, properties: { os: 'linux', browser: 'bench', device: 'bench' } } }),
        );
      } else if (t === 'READY') resolve(client);
      else if (t) client.onDispatch?.(t, text);
      else if (text.startsWith('{"op":11')) client.onAck?.();
    });
  });
}

async function connectAll(
  seed: Seed,
  tokens: string[],
  concurrency: number,
  clients: Client[],
): Promise<{ clients: Client[]; ms: number }> {
  const started = performance.now();
  await eachInFlight(tokens.length, concurrency, async (index) => {
    clients[index] = await identify(seed, tokens[index] as string, index);
  });
  return { clients, ms: performance.now() - started };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function post(seed: Seed, content: string): Promise<void> {
  const res = await fetch(`${seed.url}/v1/channels/${seed.channelId}/messages`, {
    method: 'POST',
    headers: { authorization: seed.ownerToken, 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  if (res.status !== 200) throw new Error(`post: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function fanout(seed: Seed, clients: Client[], rounds: number): Promise<number[]> {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const marker = `fanout-${round}`;
    let received = 0;
    let lastAt = 0;
    const all = new Promise<void>((resolve) => {
      for (const client of clients)
        client.onDispatch = (t, raw) => {
          if (t !== 'MESSAGE_CREATE' || !raw.includes(marker)) return;
          lastAt = performance.now();
          if (++received === clients.length) resolve();
        };
    });
    await post(seed, marker);
    const respondedAt = performance.now();
    await all;
    samples.push(Math.max(0, lastAt - respondedAt));
  }
  return samples.sort((a, b) => a - b);
}

/**
 * The guild is large for these sessions (no `intents`, 1,000 members over the default threshold of 50): each
 * subscribes to its members' presences with op 14 as the web client does for the guild on screen
 * (docs/gateway.md#large-guilds); the heartbeat ACK that follows says it was applied.
 */
async function subscribeAll(seed: Seed, clients: Client[]): Promise<void> {
  await Promise.all(
    clients.map(
      (client) =>
        new Promise<void>((resolve) => {
          client.onAck = () => {
            client.onAck = undefined;
            resolve();
          };
          client.ws.send(JSON.stringify({ op: 14, d: { guild_id: seed.guildId, activities: true } }));
          client.ws.send('{"op":1,"d":null}');
        }),
    ),
  );
}

/** Op 3 from one member → PRESENCE_UPDATE at every connected member; time from the send to the last delivery. */
async function presenceFanout(clients: Client[], rounds: number): Promise<number[]> {
  const samples: number[] = [];
  const statuses = ['idle', 'dnd'];
  for (let round = 0; round < rounds; round++) {
    const status = statuses[round % 2] as string;
    let received = 0;
    let lastAt = 0;
    const all = new Promise<void>((resolve) => {
      for (const client of clients)
        client.onDispatch = (t, raw) => {
          if (t !== 'PRESENCE_UPDATE' || !raw.includes(`"status":"${status}"`)) return;
          lastAt = performance.now();
          if (++received === clients.length) resolve();
        };
    });
    const sentAt = performance.now();
    clients[0]?.ws.send(JSON.stringify({ op: 3, d: { status, since: null, activities: [], afk: false } }));
    await all;
    samples.push(Math.max(0, lastAt - sentAt));
  }
  return samples.sort((a, b) => a - b);
}

/** Identify → READY for one user, with the READY frame's size. */
function timedReady(seed: Seed, token: string): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${seed.port}/gateway?v=1&encoding=json`, { perMessageDeflate: false });
    let sentAt = 0;
    ws.on('error', reject);
    ws.on('message', (data) => {
      const text = data.toString();
      if (text.startsWith('{"op":10')) {
        sentAt = performance.now();
        ws.send(
          JSON.stringify({ op: 2, d: { token, properties: { os: 'linux', browser: 'bench', device: 'bench' } } }),
        );
      } else if (text.startsWith('{"op":0,"t":"READY"')) {
        const ms = performance.now() - sentAt;
        ws.close(1000);
        resolve({ ms, bytes: Buffer.byteLength(text) });
      }
    });
  });
}

async function messageRate(seed: Seed, seconds: number, concurrency: number): Promise<number> {
  let count = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await post(seed, `rate ${count}`);
        count++;
      }
    }),
  );
  return count / seconds;
}

async function closeAll(clients: Client[]): Promise<void> {
  await Promise.all(
    clients.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.ws.removeAllListeners('close');
          if (c.ws.readyState === WebSocket.CLOSED) return resolve();
          c.ws.once('close', () => resolve());
          c.ws.close(1000);
        }),
    ),
  );
}

export async function runGatewayBench(databaseUrl?: string): Promise<GatewayBenchResult> {
  const { child, seed } = await startChild(databaseUrl);
  try {
    await new Promise((r) => setTimeout(r, 500));
    const before = await ask<{ rss: number }>(child, 'rss');
    const tokens = seed.tokens.flat().slice(0, CONNECTIONS);
    const clients: Client[] = [];
    // Idle heartbeats so no socket trips the 45 s zombie timer while the figures are taken.
    const beat = setInterval(() => {
      for (const c of clients) if (c?.ws.readyState === WebSocket.OPEN) c.ws.send('{"op":1,"d":1}');
    }, 20_000);
    const { ms } = await connectAll(seed, tokens, 64, clients);
    const identifyPerSecond = (tokens.length / ms) * 1000;
    await new Promise((r) => setTimeout(r, 1000));
    const after = await ask<{ rss: number; stats: { connections: number } }>(child, 'rss');
    const bytesPerConnection = (after.rss - before.rss) / after.stats.connections;

    // Fan-out: one socket per member, the other sessions closed.
    const perMember = Math.ceil(CONNECTIONS / MEMBERS);
    const keep = clients.filter((_, i) => i % perMember === 0 || perMember === 1);
    await closeAll(clients.filter((_, i) => !(i % perMember === 0 || perMember === 1)));
    await fanout(seed, keep, 5);
    const samples = await fanout(seed, keep, 100);
    await subscribeAll(seed, keep);
    await presenceFanout(keep, 6);
    const presenceSamples = await presenceFanout(keep, 100);
    clearInterval(beat);
    await closeAll(keep);

    const messageCreatesPerSecond = await messageRate(seed, 5, 16);
    const many = await ask<{ token: string; guilds: number; members: number }>(child, 'many-guilds');
    await timedReady(seed, many.token);
    const readies = [];
    for (let i = 0; i < 5; i++) readies.push(await timedReady(seed, many.token));
    const ready = readies.sort((a, b) => a.ms - b.ms)[2] as { ms: number; bytes: number };
    return {
      storage: seed.storage,
      connections: after.stats.connections,
      bytesPerConnection,
      identifyPerSecond,
      fanoutMembers: keep.length,
      fanoutP50Ms: percentile(samples, 50),
      fanoutP99Ms: percentile(samples, 99),
      presenceP50Ms: percentile(presenceSamples, 50),
      presenceP99Ms: percentile(presenceSamples, 99),
      messageCreatesPerSecond,
      readyGuilds: many.guilds,
      readyMembersPerGuild: many.members,
      readyMs: ready.ms,
      readyBytes: ready.bytes,
    };
  } finally {
    child.removeAllListeners('exit');
    child.send({ cmd: 'stop' });
    await new Promise((r) => child.once('exit', r));
  }
}

export function formatGatewayResult(r: GatewayBenchResult): string {
  return [
    `gateway [${r.storage}] memory per idle identified connection @${r.connections}: ${(r.bytesPerConnection / 1024).toFixed(1)} KiB (target ≤ 20 KiB)`,
    `gateway [${r.storage}] identify → READY: ${r.identifyPerSecond.toFixed(0)}/s (target ≥ 500/s)`,
    `gateway [${r.storage}] MESSAGE_CREATE fan-out to ${r.fanoutMembers}: p50 ${r.fanoutP50Ms.toFixed(1)} ms, p99 ${r.fanoutP99Ms.toFixed(1)} ms after the POST response (target p99 < 100 ms)`,
    `gateway [${r.storage}] PRESENCE_UPDATE fan-out to ${r.fanoutMembers}: p50 ${r.presenceP50Ms.toFixed(1)} ms, p99 ${r.presenceP99Ms.toFixed(1)} ms after op 3 (target p99 < 100 ms)`,
    `gateway [${r.storage}] message creates through the API: ${r.messageCreatesPerSecond.toFixed(0)}/s`,
    `gateway [${r.storage}] READY in ${r.readyGuilds} guilds of ${r.readyMembersPerGuild} members: ${r.readyMs.toFixed(0)} ms, ${(r.readyBytes / 1024).toFixed(0)} KiB`,
  ].join('\n');
}

/** The figures as a markdown table (docs/performance.md). */
export function gatewayTable(r: GatewayBenchResult): string {
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  return [
    '| Figure | Result | Target |',
    '|---|---|---|',
    `| Memory per identified idle connection at ${r.connections.toLocaleString('en-US')} (server RSS growth ÷ connections) | ${(r.bytesPerConnection / 1024).toFixed(1)} KiB (${met(r.bytesPerConnection <= 20 * 1024)}) | ≤ 20 KiB |`,
    `| Identify → READY (64 in flight, each READY with one guild payload) | ${r.identifyPerSecond.toFixed(0)}/s (${met(r.identifyPerSecond >= 500)}) | ≥ 500/s |`,
    `| MESSAGE_CREATE fan-out to ${r.fanoutMembers.toLocaleString('en-US')} connected members, POST response → last delivery | p50 ${r.fanoutP50Ms.toFixed(1)} ms, p99 ${r.fanoutP99Ms.toFixed(1)} ms (${met(r.fanoutP99Ms < 100)}) | p99 < 100 ms |`,
    `| PRESENCE_UPDATE fan-out to ${r.fanoutMembers.toLocaleString('en-US')} connected members, op 3 sent → last delivery | p50 ${r.presenceP50Ms.toFixed(1)} ms, p99 ${r.presenceP99Ms.toFixed(1)} ms (${met(r.presenceP99Ms < 100)}) | p99 < 100 ms |`,
    `| Message creates through the API (16 in flight, no sockets connected) | ${r.messageCreatesPerSecond.toFixed(0)}/s | report |`,
    `| READY for a user in ${r.readyGuilds} guilds of ${r.readyMembersPerGuild.toLocaleString('en-US')} members (median of 5, identify sent → READY received) | ${r.readyMs.toFixed(0)} ms, ${(r.readyBytes / 1024).toFixed(0)} KiB | report |`,
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const backends = [undefined, process.env.BENCH_DATABASE_URL].filter((b, i) => i === 0 || b !== undefined) as (
    | string
    | undefined
  )[];
  for (const url of backends) console.log(formatGatewayResult(await runGatewayBench(url)));
}
