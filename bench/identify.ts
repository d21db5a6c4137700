/**
 * Identify → READY rate (issue 19): how many gateway sessions per second reach READY, with 64 identifies in
 * flight, each READY carrying one guild of `BENCH_MEMBERS` members (default 1,000), against one process and
 * against two processes of one instance (clients alternating between them), side by side.
 *
 *   npm run bench:identify            one node on embedded PGlite; two nodes too when BENCH_DATABASE_URL and
 *                                     BENCH_REDIS_URL are set (then the one-node figure is on PostgreSQL too)
 *   BENCH_IDENTIFIES                  identifies per round (default 2,000), BENCH_ROUNDS rounds (default 3)
 *   BENCH_INTENTS                     the identify's `intents` (default none sent: the web client's sessions, which
 *                                     get a large guild's member presences only when subscribed)
 *   BENCH_SUBSCRIBE=1                 each session subscribes to the guild's presences (op 14, activities) at
 *                                     READY, as the web client does for the guild on screen
 *
 * Each node is a child process (bench/gateway-server.ts); the second joins the first's database and Redis
 * prefix with the same secrets. The clients run here, spread over 127.0.0.2–127.0.0.x (256 sockets per IP).
 * Each round identifies every token once, then closes the sockets; the median round is reported, with the
 * load average (this machine's 2 cores are shared).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { eachInFlight } from './in-flight.ts';

interface Seed {
  port: number;
  storage: string;
  tokens: string[][];
  join?: unknown;
}

const IDENTIFIES = Number(process.env.BENCH_IDENTIFIES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000);
const IN_FLIGHT = 64;
const PER_IP = 250;

function startNode(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; seed: Seed }> {
  const child = fork(fileURLToPath(new URL('./gateway-server.ts', import.meta.url)), [], {
    execArgv: [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      '--import',
      'tsx',
    ],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench node exited with ${code}`)));
    child.once('message', (message) => resolve({ child, seed: message as Seed }));
  });
}

async function stopNode(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ cmd: 'stop' });
  await exited;
}

/** Every socket of the round, heartbeating every 10 s so none times out on a slow machine. */
const live = new Set<WebSocket>();
setInterval(() => {
  for (const ws of live) if (ws.readyState === WebSocket.OPEN) ws.send('{"op":1,"d":null}');
}, 10_000).unref();

/** Connects and identifies; resolves with the open socket at READY. */
function identify(port: number, token: string, index: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=1&encoding=json`, {
      localAddress: `127.0.0.${2 + Math.floor(index / PER_IP)}`,
      perMessageDeflate: false,
    });
    live.add(ws);
    ws.once('close', () => live.delete(ws));
    ws.on('error', reject);
    ws.on('close', (code) => reject(new Error(`closed ${code} before READY`)));
    ws.on('message', (data) => {
      const text = data.toString();
      // The server asks for a heartbeat after a silence (a long round on a loaded machine): answer it.
      if (text.startsWith('{"op":1,')) ws.send('{"op":1,"d":null}');
      else if (text.startsWith('{"op":10')) {
        ws.send(
          JSON.stringify({
            op: 2,
            d: {
              token,
              ...(process.env.BENCH_INTENTS ? { intents: Number(process.env.BENCH_INTENTS) } : {}),
              properties: { os: 'linux', browser: 'bench', device: 'b' },
            },
          }),
        );
      } else if (text.startsWith('{"op":0,"t":"READY"')) {
        if (process.env.BENCH_SUBSCRIBE === '1') {
          const guildId = /"guilds":\[\{"id":"(\d+)"/.exec(text)?.[1];
          if (!guildId) throw new Error('READY without the guild');
          ws.send(JSON.stringify({ op: 14, d: { guild_id: guildId, activities: true } }));
        }
        ws.removeAllListeners('close');
        resolve(ws);
      }
    });
  });
}

/** One round: every token identified once (64 in flight), node i % ports.length; identifies per second. */
async function round(ports: number[], tokens: string[]): Promise<number> {
  const sockets: WebSocket[] = [];
  const started = performance.now();
  await eachInFlight(tokens.length, IN_FLIGHT, async (index) => {
    sockets.push(await identify(ports[index % ports.length] as number, tokens[index] as string, index));
  });
  const rate = (tokens.length / (performance.now() - started)) * 1000;
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.once('close', () => resolve());
          ws.close(1000);
        }),
    ),
  );
  // Let the server finish closing the sessions before the next round.
  await new Promise((r) => setTimeout(r, 1000));
  return rate;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function measure(ports: number[], tokens: string[]): Promise<{ median: number; rounds: number[] }> {
  const rounds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(ports, tokens));
  return { median: median(rounds), rounds };
}

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  const shared = databaseUrl && redisUrl;
  const env: NodeJS.ProcessEnv = {
    BENCH_MEMBERS: String(MEMBERS),
    BENCH_SESSIONS: String(Math.ceil(IDENTIFIES / MEMBERS)),
    TEST_DATABASE_URL: shared ? databaseUrl : '',
    TEST_REDIS_URL: shared ? redisUrl : '',
  };
  if (!shared) {
    delete env.TEST_DATABASE_URL;
    delete env.TEST_REDIS_URL;
  }
  const first = await startNode(env);
  const loads = [loadavg()[0] ?? 0];
  try {
    const tokens = first.seed.tokens.flat().slice(0, IDENTIFIES);
    const one = await measure([first.seed.port], tokens);
    loads.push(loadavg()[0] ?? 0);
    console.log(
      `identify → READY, one node [${first.seed.storage}]: ${one.median.toFixed(0)}/s ` +
        `(rounds ${one.rounds.map((r) => r.toFixed(0)).join(', ')})`,
    );
    if (!shared) {
      console.log('two nodes: set BENCH_DATABASE_URL and BENCH_REDIS_URL');
    } else {
      const second = await startNode({ ...env, BENCH_JOIN: JSON.stringify(first.seed.join) });
      try {
        const two = await measure([first.seed.port, second.seed.port], tokens);
        const oneAgain = await measure([first.seed.port], tokens);
        loads.push(loadavg()[0] ?? 0);
        console.log(
          `identify → READY, two nodes [${first.seed.storage} + redis], clients alternating: ${two.median.toFixed(0)}/s ` +
            `(rounds ${two.rounds.map((r) => r.toFixed(0)).join(', ')}); one node again (second node idle): ` +
            `${oneAgain.median.toFixed(0)}/s (rounds ${oneAgain.rounds.map((r) => r.toFixed(0)).join(', ')})`,
        );
      } finally {
        await stopNode(second.child);
      }
    }
  } finally {
    await stopNode(first.child);
  }
  console.log(
    `${IDENTIFIES} identifies per round, ${ROUNDS} rounds, ${IN_FLIGHT} in flight, READY with one guild of ${MEMBERS} ` +
      `members; 1-minute load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
  );
}

await main();
