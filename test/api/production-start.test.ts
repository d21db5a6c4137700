import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../support/spawn.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
});

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const answers = (url: string) => () =>
  fetch(`${url}/_health`).then(
    (r) => r.ok,
    () => false,
  );

describe('npm start (the compiled build)', { timeout: 120_000 }, () => {
  it('is built by npm ci, serves, logs its progress, and stops on a SIGTERM sent to npm', async () => {
    assert.ok(existsSync('dist/main.js'), 'dist/main.js is missing: `npm ci` (or `npm run build:server`) builds it');
    assert.ok(existsSync('dist/pglite-template.tar'), 'the migrated database template is built with it');
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-prod-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn('npm', ['start', '--silent'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        HEARTH_DATA_DIR: dataDir,
        HEARTH_PUBLIC_URL: url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    cleanups.push(async () => child.kill('SIGKILL'));
    assert.ok(await waitFor(answers(url), 60_000), `the server did not answer:\n${out}`);
    assert.match(out, /"msg":"starting"/);
    assert.match(out, /"storage":"pglite","migrations_applied":0,"ms":\d+,"msg":"database ready"/);
    // The discovery document, the web app and the API all answer from the one process.
    assert.equal((await fetch(`${url}/.well-known/service`)).status, 200);

    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    assert.ok(await waitFor(async () => !(await answers(url)()), 10_000), 'the server outlived npm: an orphan');
    assert.match(out, /"signal":"SIGTERM","msg":"shutting down"/);
  });
});
