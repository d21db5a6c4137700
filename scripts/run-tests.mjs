#!/usr/bin/env node
// Runs the test suite with node's test runner. Fails when no test file or no test is found.
// Usage: node scripts/run-tests.mjs [path-filter ...]
// Backends: TEST_DATABASE_URL (PostgreSQL admin connection) and TEST_REDIS_URL switch the servers the tests start.
//
// Test files share processes (docs/testing.md#how-the-runner-spends-its-time): starting node with tsx and
// importing the server costs about 1.4 s of CPU, paid once per process instead of once per file. Each file still
// runs alone, one after another, as a suite named by its path, so its `before`/`after` hooks and its servers are its
// own. A file whose first line is `// test-runner: own-process` gets a process to itself.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = findTests('test')
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}

const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-template.ts'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// One process more than the cores: a test process keeps about three quarters of a core busy (the rest is waiting on
// Chromium, sockets and timers), so cores + 1 keeps every core working (docs/testing.md#how-the-runner-spends-its-time).
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? Math.min(availableParallelism() + 1, 8)));
// A file that takes longer than this fails as timed out (a test waiting for what never comes) instead of
// holding the run until CI's own limit.
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 6 * 60_000);
const PROCESS_TIMEOUT_MS = 20 * 60_000;
const entries = planProcesses(files, concurrency);

// TEST_FILE_TIMES=path also writes each file's time in the run, slowest first (scripts/file-times-reporter.mjs).
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (process.env.TEST_FILE_TIMES)
  reporters.push('--test-reporter=./scripts/file-times-reporter.mjs', '--test-reporter-destination=stdout');
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    // Node 20 applies this to each process as a whole: the outer guard when a process will not end.
    `--test-timeout=${PROCESS_TIMEOUT_MS}`,
    ...reporters,
    ...entries.paths,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 },
);
entries.cleanup();
process.stdout.write(result.stdout ?? '');
const match = /ℹ tests (\d+)/.exec(result.stdout ?? '');
if (!match || Number(match[1]) === 0) {
  console.error('run-tests: the runner executed no test');
  process.exit(1);
}
process.exit(result.status ?? 1);

/**
 * Splits the files into groups, one process each, balanced by each file's last known time (longest first into the
 * least loaded group), and writes one entry file per group that imports its files one suite at a time.
 * TEST_PROCESSES=per-file gives every file its own process, as node's runner does by default.
 */
function planProcesses(testFiles, parallel) {
  if (process.env.TEST_PROCESSES === 'per-file') return { paths: testFiles, cleanup() {} };
  const known = readKnownTimes();
  const estimate = (file) => known[file] ?? (file.startsWith('test/browser/') ? 30_000 : 4_000);
  const alone = testFiles.filter(wantsOwnProcess);
  const shared = testFiles.filter((f) => !alone.includes(f)).sort((a, b) => estimate(b) - estimate(a));
  // A few groups per parallel slot: few enough that start-up is rare, enough that one slow group is not the tail.
  const groupCount = Math.max(1, Math.min(shared.length, parallel * 3));
  const groups = Array.from({ length: groupCount }, () => ({ files: [], total: 0 }));
  for (const file of shared) {
    const lightest = groups.reduce((a, b) => (b.total < a.total ? b : a));
    lightest.files.push(file);
    lightest.total += estimate(file);
  }
  const dir = mkdtempSync(join(tmpdir(), 'hearth-tests-'));
  const paths = [];
  const order = [
    ...groups.filter((g) => g.files.length > 0),
    ...alone.map((file) => ({ files: [file], total: estimate(file), own: true })),
  ].sort((a, b) => b.total - a.total);
  for (const [index, group] of order.entries()) {
    if (group.own) {
      paths.push(group.files[0]);
      continue;
    }
    const path = join(dir, `group-${String(index + 1).padStart(2, '0')}.test.mjs`);
    const suites = group.files.map(
      (file) =>
        `describe(${JSON.stringify(file)}, { timeout: ${FILE_TIMEOUT_MS} }, async () => {\n` +
        `  await import(${JSON.stringify(pathToFileURL(resolve(file)).href)});\n});`,
    );
    // A file that timed out can leave a socket or a timer behind, which would keep the process, and so the whole
    // run, waiting forever: once every file is done the process gets 10 s to end by itself, then is ended.
    const exit = `after(() => {\n  setTimeout(() => process.exit(), 10_000).unref();\n});`;
    writeFileSync(path, `import { after, describe } from 'node:test';\n${suites.join('\n')}\n${exit}\n`);
    paths.push(path);
  }
  return { paths, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function wantsOwnProcess(file) {
  return readFileSync(file, 'utf8').startsWith('// test-runner: own-process');
}

/** Each file's wall time in a recent full run (scripts/test-file-times.json, written by TEST_FILE_TIMES). */
function readKnownTimes() {
  try {
    return JSON.parse(readFileSync('scripts/test-file-times.json', 'utf8'));
  } catch {
    return {};
  }
}
