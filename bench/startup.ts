// `npm run bench:startup`: time from spawning `node dist/main.js` (what `npm start` runs) to the first answered
// request, on a fresh data directory and on a restart of the same one; three runs each, medians reported.
// Needs the build (`npm ci` or `npm run build:server`). `-- --write` updates docs/performance.md.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/spawn.ts';

const RUNS = 3;

async function startOnce(dataDir: string): Promise<number> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/_health`;
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/main.js'], {
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
      if (ok) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error('the server did not answer within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main(): Promise<void> {
  if (!existsSync('dist/main.js')) throw new Error('dist/main.js is missing: run npm run build:server');
  const fresh: number[] = [];
  const restart: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-start-'));
    try {
      fresh.push(await startOnce(dataDir));
      restart.push(await startOnce(dataDir));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const table = [
    '| Start to first answered request (`node dist/main.js`, embedded default) | Median of 3 | Runs | Target |',
    '|---|---|---|---|',
    `| fresh data directory | ${Math.round(median(fresh))} ms | ${fresh.map(Math.round).join(', ')} ms | ≤ 3 000 ms |`,
    `| restart on an existing data directory | ${Math.round(median(restart))} ms | ${restart.map(Math.round).join(', ')} ms | ≤ 1 500 ms |`,
  ].join('\n');
  const context = `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
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
