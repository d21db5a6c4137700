import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawnEntrypoint } from '../support/spawn.ts';

/** The entrypoint refuses a bad setting with one stderr line that names it, and no stack trace. */
let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hearth-config-'));
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const CASES: [string, Record<string, string>, string[], string][] = [
  ['PORT=abc', { PORT: 'abc' }, [], 'PORT'],
  ['HEARTH_PUBLIC_URL=ftp://x', { HEARTH_PUBLIC_URL: 'ftp://x' }, [], 'HEARTH_PUBLIC_URL'],
  ['--port abc', {}, ['--port', 'abc'], '--port'],
  ['HEARTH_TRUSTED_PROXIES=nonsense', { HEARTH_TRUSTED_PROXIES: 'nonsense' }, [], 'HEARTH_TRUSTED_PROXIES'],
  ['HEARTH_TEST_MODE without a token', { HEARTH_TEST_MODE: '1' }, [], 'HEARTH_TEST_TOKEN'],
  ['an unknown flag', {}, ['--colour'], '--colour'],
];

// The cases are independent processes that exit before touching the data directory: they run at once.
describe('bad configuration at start', { timeout: 120_000, concurrency: true }, () => {
  for (const [name, env, args, setting] of CASES) {
    it(`${name}: exits non-zero with one line naming ${setting}`, async () => {
      const spawned = spawnEntrypoint({ HEARTH_DATA_DIR: dataDir, ...env }, args);
      const code = await spawned.exited;
      assert.notEqual(code, 0);
      assert.equal(typeof code, 'number');
      const stderr = spawned.stderr();
      const lines = stderr.split('\n').filter((line) => line.length > 0);
      assert.equal(lines.length, 1, `exactly one line, got:\n${stderr}`);
      assert.ok(lines[0]!.includes(setting), lines[0]);
      assert.match(lines[0]!, /^hearth: invalid configuration: /);
      assert.doesNotMatch(stderr, /\n\s+at /);
      assert.equal(spawned.stdout(), '');
    });
  }
});
