#!/usr/bin/env node
// Runs the test suite with node's test runner. Fails when no test file or no test is found.
// Usage: node scripts/run-tests.mjs [path-filter ...]
// Backends: TEST_DATABASE_URL (PostgreSQL admin connection) and TEST_REDIS_URL switch the servers the tests start.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// TEST_FILE_TIMES=path also writes each file's time in the run, slowest first (scripts/file-times-reporter.mjs).
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (process.env.TEST_FILE_TIMES)
  reporters.push('--test-reporter=./scripts/file-times-reporter.mjs', '--test-reporter-destination=stdout');
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...files],
  { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 },
);
process.stdout.write(result.stdout ?? '');
const match = /ℹ tests (\d+)/.exec(result.stdout ?? '');
if (!match || Number(match[1]) === 0) {
  console.error('run-tests: the runner executed no test');
  process.exit(1);
}
process.exit(result.status ?? 1);
