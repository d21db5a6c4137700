import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import { PLAYWRIGHT_DISABLED_FEATURES } from '../browser/support/chromium-args.ts';

/**
 * The browser tests pass their own `--disable-features`, which replaces Playwright's (Chromium keeps the last such
 * flag), so they repeat Playwright's list: this reads the list from the installed playwright-core and fails when an
 * upgrade changes it.
 */
it("repeats Playwright's own disabled Chromium features", () => {
  const bundle = join(dirname(createRequire(import.meta.url).resolve('playwright-core')), 'lib', 'coreBundle.js');
  const source = readFileSync(bundle, 'utf8');
  const list = /disabledFeatures = \[([^\]]*)\]/.exec(source);
  assert.ok(list, `no disabledFeatures list in ${bundle}: find where Playwright builds its Chromium switches`);
  const names = [...(list[1] ?? '').replace(/\/\/[^\n]*/g, '').matchAll(/"([^"]+)"/g)].map((match) => match[1]);
  assert.deepEqual(PLAYWRIGHT_DISABLED_FEATURES, names);
});
