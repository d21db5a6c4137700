// `npm run bench:startup`: time from spawning `node dist/main.js` (what `npm start` runs) to the first answered
// request, on a fresh data directory and on a restart of the same one; three runs each, medians reported, with
// the CPU time the server process had used by then (user + system, from /proc: on a loaded machine the wall
// time mostly measures the other processes, the CPU time much less so) and the load average.
// Needs the build (`npm ci` or `npm run build:server`). `-- --write` updates docs/performance.md.
// `BENCH_STARTUP_COMPARE=<dir>` (a copy of an older dist/) also times that build, interleaved run by run with
// this one, so a before/after comparison shares the machine's state.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/spawn.ts';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);

interface Start {
  wallMs: number;
  cpuMs: number;
}

/** User + system CPU time of a live process, from /proc (Linux; 0 elsewhere). */
function cpuTimeMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

async function startOnce(dataDir: string, entry = 'dist/main.js'): Promise<Start> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/_health`;
  const started = performance.now();
  const child = spawn(process.execPath, [entry], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      HEARTH_DATA_DIR: dataDir,
      HEARTH_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const ok = await fetch(url).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { wallMs: performance.now() - started, cpuMs: cpuTimeMs(child.pid) };
      if (performance.now() - started > 600_000) throw new Error('the server did not answer within 600 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function series(entry: string, fresh: Start[], restart: Start[]): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-start-'));
  try {
    fresh.push(await startOnce(dataDir, entry));
    restart.push(await startOnce(dataDir, entry));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;
const row = (label: string, starts: Start[], target: string) =>
  `| ${label} | ${ms(median(starts.map((s) => s.wallMs)))} | ${ms(median(starts.map((s) => s.cpuMs)))} | ` +
  `${starts.map((s) => Math.round(s.wallMs)).join(', ')} ms | ${target} |`;

async function main(): Promise<void> {
  if (!existsSync('dist/main.js')) throw new Error('dist/main.js is missing: run npm run build:server');
  const compare = process.env.BENCH_STARTUP_COMPARE;
  if (compare && !existsSync(join(compare, 'main.js'))) throw new Error(`${compare}/main.js is missing`);
  const fresh: Start[] = [];
  const restart: Start[] = [];
  const before = { fresh: [] as Start[], restart: [] as Start[] };
  const loads: number[] = [loadavg()[0] ?? 0];
  for (let run = 0; run < RUNS; run++) {
    if (compare) await series(join(compare, 'main.js'), before.fresh, before.restart);
    await series('dist/main.js', fresh, restart);
    loads.push(loadavg()[0] ?? 0);
  }
  const table = [
    '| Start to first answered request (`node dist/main.js`, embedded default) | Median | CPU time (median) | Runs | Target |',
    '|---|---|---|---|---|',
    ...(compare
      ? [
          row('fresh data directory, before (`BENCH_STARTUP_COMPARE`)', before.fresh, ''),
          row('restart on an existing data directory, before (`BENCH_STARTUP_COMPARE`)', before.restart, ''),
        ]
      : []),
    row('fresh data directory', fresh, '≤ 3 000 ms'),
    row('restart on an existing data directory', restart, '≤ 1 500 ms'),
  ].join('\n');
  const context =
    `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, ` +
    `Node ${process.version}, ${RUNS} runs each; 1-minute load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`;
  console.log(`\n${context}\n\n${table}\n`);
  if (process.argv.includes('--write')) {
    const path = 'docs/performance.md';
    const doc = readFileSync(path, 'utf8');
    const block = `<!-- startup:start -->\n${context}\n\n${table}\n<!-- startup:end -->`;
    const pattern = /<!-- startup:start -->[\s\S]*<!-- startup:end -->/;
    writeFileSync(
      path,
      pattern.test(doc) ? doc.replace(pattern, block) : `${doc.trimEnd()}\n\n## Start-up\n\n${block}\n`,
    );
    console.log('docs/performance.md updated (startup)');
  }
}

await main();
