import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import argon2 from 'argon2';
import autocannon from 'autocannon';
import { hashPassword, PASSWORD_HASH_CONCURRENCY, PASSWORD_HASH_OPTIONS } from '../src/platform/crypto/passwords.ts';
import { durabilityTable, runDurabilityBench } from './durability.ts';
import { formatGatewayResult, gatewayTable, runGatewayBench } from './gateway.ts';
import { runVoiceBenches, voiceTable } from './voice.ts';
import { runWebBench, webTable } from './web.ts';
import { runWebScaleBench, webScaleTable } from './web-scale.ts';

/**
 * `npm run bench` (add `-- --write` to update docs/performance.md). Starts the server in a child process and
 * drives it with autocannon from this one, on the same machine:
 *   1. authenticated GET /v1/users/@me (session, warm cache) vs the bare GET /_health   target ≥ 0.8
 *   2. unknown-token 401 on GET /v1/users/@me vs the bare route (same token, and a new one every
 *      request: refused by its check part without a database read)                      target ≥ 0.9
 *   3. logins/s vs raw argon2id verifies/s with the same parameters                      target ≥ 0.9
 *   4. p99 latency of /_health while logins saturate the hashing pool                    target < 25 ms
 * then the gateway figures of bench/gateway.ts on the same store (BENCH_SKIP_GATEWAY=1 skips them).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LOGIN_CONNECTIONS = Number(process.env.BENCH_LOGIN_CONNECTIONS ?? 8);
/** The HTTP scenarios run interleaved in short rounds, so a change in machine load hits them alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const write = process.argv.includes('--write');

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
}

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

/** Runs each scenario `ROUNDS` times, interleaved, and merges the rounds (mean rate, worst p99). */
async function interleaved(scenarios: autocannon.Options[]): Promise<Measured[]> {
  const runs: Measured[][] = scenarios.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, options] of scenarios.entries()) {
      runs[i]!.push(await load({ duration: Math.max(1, Math.round(DURATION / ROUNDS)), ...options }));
    }
  }
  return runs.map((rounds) => ({
    rps: rounds.reduce((sum, r) => sum + r.rps, 0) / rounds.length,
    p50: Math.max(...rounds.map((r) => r.p50)),
    p99: Math.max(...rounds.map((r) => r.p99)),
    statuses: mergeStatuses(rounds),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  }));
}

function mergeStatuses(rounds: Measured[]): Record<string, number> {
  const statuses: Record<string, number> = {};
  for (const r of rounds)
    for (const [code, count] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  return statuses;
}

async function load(options: autocannon.Options): Promise<Measured> {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...options });
  const statuses: Record<string, number> = {};
  const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  for (const [code, { count }] of Object.entries(stats)) statuses[code] = count;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

function expectOnly(name: string, measured: Measured, status: number): void {
  const other = Object.entries(measured.statuses).filter(([code]) => Number(code) !== status);
  if (other.length > 0 || measured.errors > 0)
    throw new Error(
      `${name}: expected only ${status}, got ${JSON.stringify(measured.statuses)} errors=${measured.errors}`,
    );
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

/** Raw argon2id verifies per second at the server's parameters, as many in flight as the pool has threads. */
async function rawVerifies(hash: string, password: string, seconds: number, inFlight: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      if (!(await argon2.verify(hash, password))) throw new Error('verify failed');
      done += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return done / ((performance.now() - started) / 1000);
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);

async function main(): Promise<void> {
  const { child, url } = await startServer();
  try {
    const email = `bench-${Date.now()}@example.test`;
    const password = 'bench-password-123';
    const registered = await json(`${url}/v1/auth/register`, 'POST', { email, password });
    const token: string = registered.token;
    await json(`${url}/v1/users/@me`, 'GET', undefined, token);

    const warm = (path: string, headers: Record<string, string> = {}) =>
      load({ url: url + path, headers, duration: 2 });
    await warm('/_health');
    await warm('/v1/users/@me', { authorization: token });

    console.log(`hearth bench: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, ${DURATION} s per run`);
    const unknownToken = `flx_${'U'.repeat(36)}`;
    let n = 0;
    const [bare1, authed, unknown, unknownFresh] = await interleaved([
      { url: `${url}/_health` },
      { url: `${url}/v1/users/@me`, headers: { authorization: token } },
      { url: `${url}/v1/users/@me`, headers: { authorization: unknownToken } },
      {
        url: `${url}/v1/users/@me`,
        requests: [
          {
            setupRequest: (req) => {
              n += 1;
              return { ...req, headers: { ...req.headers, authorization: `flx_${String(n).padStart(36, 'R')}` } };
            },
          },
        ],
      },
    ]);
    expectOnly('bare', bare1!, 200);
    expectOnly('authenticated', authed!, 200);
    expectOnly('unknown token', unknown!, 401);
    expectOnly('fresh unknown tokens', unknownFresh!, 401);
    const bare = bare1!.rps;

    const hash = await hashPassword(password);
    // The server hashes at most PASSWORD_HASH_CONCURRENCY at once (one core stays with the event loop):
    // that is the fair baseline. The whole thread pool's rate is printed for reference.
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const rawPool = await rawVerifies(hash, password, DURATION, threads);
    const loginBody = JSON.stringify({ email, password });
    const loginOptions = {
      url: `${url}/v1/auth/login`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: loginBody,
      connections: LOGIN_CONNECTIONS,
    };
    // Raw verifies and logins alternate in short rounds, so a change in machine load hits both alike.
    const roundSeconds = Math.max(1, Math.round(DURATION / ROUNDS));
    const rawRounds: number[] = [];
    const loginRounds: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rawRounds.push(await rawVerifies(hash, password, roundSeconds, PASSWORD_HASH_CONCURRENCY));
      loginRounds.push(await load({ ...loginOptions, duration: roundSeconds }));
    }
    const raw = rawRounds.reduce((sum, r) => sum + r, 0) / ROUNDS;
    const logins: Measured = {
      rps: loginRounds.reduce((sum, r) => sum + r.rps, 0) / ROUNDS,
      p50: Math.max(...loginRounds.map((r) => r.p50)),
      p99: Math.max(...loginRounds.map((r) => r.p99)),
      statuses: mergeStatuses(loginRounds),
      errors: loginRounds.reduce((sum, r) => sum + r.errors, 0),
    };
    expectOnly('logins', logins, 200);

    const [, healthUnderLogins] = await Promise.all([
      load(loginOptions),
      load({ url: `${url}/_health`, connections: 2, overallRate: 100 }),
    ]);
    expectOnly('health under logins', healthUnderLogins, 200);

    const rows: [string, string, string, string][] = [
      ['bare `GET /_health`', `${fmt(bare)} req/s (p99 ${fmt(bare1!.p99)} ms)`, '', ''],
      [
        'authenticated `GET /v1/users/@me` (session, warm)',
        `${fmt(authed!.rps)} req/s (p99 ${fmt(authed!.p99)} ms)`,
        fmt(ratio(authed!.rps, bare), 2),
        '≥ 0.8',
      ],
      [
        'unknown token → 401 (same token)',
        `${fmt(unknown!.rps)} req/s (p99 ${fmt(unknown!.p99)} ms)`,
        fmt(ratio(unknown!.rps, bare), 2),
        '≥ 0.9',
      ],
      [
        'unknown token → 401 (a new token every request)',
        `${fmt(unknownFresh!.rps)} req/s (p99 ${fmt(unknownFresh!.p99)} ms)`,
        fmt(ratio(unknownFresh!.rps, bare), 2),
        '≥ 0.9',
      ],
      [
        `raw argon2id verifies, ${PASSWORD_HASH_CONCURRENCY} in flight (the server's hashing limit)`,
        `${fmt(raw, 1)} /s`,
        '',
        '',
      ],
      [`raw argon2id verifies, ${threads} in flight (whole libuv pool, reference)`, `${fmt(rawPool, 1)} /s`, '', ''],
      [
        `logins \`POST /v1/auth/login\` (${LOGIN_CONNECTIONS} connections)`,
        `${fmt(logins.rps, 1)} /s (p99 ${fmt(logins.p99)} ms)`,
        fmt(ratio(logins.rps, raw), 2),
        '≥ 0.9',
      ],
      [
        '`/_health` at 100 req/s while logins saturate the pool',
        `p50 ${fmt(healthUnderLogins.p50)} ms, p99 ${fmt(healthUnderLogins.p99)} ms`,
        '',
        '< 25 ms',
      ],
    ];
    const table = [
      '| Measurement | Absolute | Ratio | Target |',
      '|---|---|---|---|',
      ...rows.map((r) => `| ${r.join(' | ')} |`),
    ].join('\n');
    const params = `argon2id m=${PASSWORD_HASH_OPTIONS.memoryCost} KiB, t=${PASSWORD_HASH_OPTIONS.timeCost}, p=${PASSWORD_HASH_OPTIONS.parallelism}`;
    const storage = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
    const context = `${new Date().toISOString().slice(0, 10)}, ${storage}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}, ${DURATION} s per run, ${CONNECTIONS} connections, ${params}`;
    console.log(`\n${context}\n\n${table}\n`);
    const verdicts = [
      ratio(authed!.rps, bare) >= 0.8,
      ratio(unknown!.rps, bare) >= 0.9,
      // Distinct forged tokens are refused by their check part, without a database read (docs/accounts.md).
      ratio(unknownFresh!.rps, bare) >= 0.9,
      ratio(logins.rps, raw) >= 0.9,
      healthUnderLogins.p99 < 25,
    ];
    console.log(`targets met: ${verdicts.filter(Boolean).length} of ${verdicts.length}`);

    if (write) writeBlock(process.env.BENCH_DATABASE_URL ? 'bench-pg' : 'bench', `${context}\n\n${table}`);
  } finally {
    child.kill('SIGTERM');
  }

  if (process.env.BENCH_SKIP_DURABILITY !== '1' && !process.env.BENCH_DATABASE_URL) {
    const durability = await runDurabilityBench();
    const table = durabilityTable(durability);
    console.log(`\n${table}\n`);
    if (write) {
      const context = `${new Date().toISOString().slice(0, 10)}, PGlite (embedded) on a data directory, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
      writeBlock('durability', `${context}\n\n${table}`);
    }
  }

  if (process.env.BENCH_SKIP_GATEWAY !== '1') {
    const gateway = await runGatewayBench(process.env.BENCH_DATABASE_URL);
    console.log(`\n${formatGatewayResult(gateway)}`);
    if (write) {
      const storage = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
      const context = `${new Date().toISOString().slice(0, 10)}, ${storage}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
      writeBlock(process.env.BENCH_DATABASE_URL ? 'gateway-pg' : 'gateway', `${context}\n\n${gatewayTable(gateway)}`);
    }
  }

  if (process.env.BENCH_SKIP_VOICE !== '1') {
    const table = (await runVoiceBenches()).map(voiceTable).join('\n\n');
    console.log(`\n${table}\n`);
    if (write) {
      const context = `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
      writeBlock('voice', `${context}\n\n${table}`);
    }
  }

  if (process.env.BENCH_SKIP_WEB === '1') return;
  const web = await runWebBench();
  if (!web) return;
  const table = webTable(web);
  console.log(`\n${table}\n`);
  if (write) {
    const context = `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
    writeBlock('web', `${context}\n\n${table}`);
  }

  const scale = await runWebScaleBench();
  if (!scale) return;
  const scaleTable = webScaleTable(scale);
  console.log(`\n${scaleTable}\n`);
  if (write) {
    const context = `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
    writeBlock('web-scale', `${context}\n\n${scaleTable}`);
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
