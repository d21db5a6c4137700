import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../src/config/config.ts';

/** docs/configuration.md lists every setting with its variable and flag, and nothing that does not exist. */
const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
const rows = doc
  .split('\n')
  .filter((line) => /^\| `[A-Z][A-Z0-9_]*` \| `--/.test(line))
  .map((line) =>
    line
      .split(' | ')
      .map((cell) => cell.replace(/^\|? ?`?|`? ?\|?$/g, '').trim())
      .slice(0, 4),
  );

describe('docs/configuration.md', () => {
  it('has one row per setting with the right flag, a default and a description', () => {
    const byEnv = new Map(rows.map((row) => [row[0], row]));
    for (const setting of SETTINGS) {
      const row = byEnv.get(setting.env);
      assert.ok(row, `${setting.env} is missing from docs/configuration.md`);
      assert.equal(row[1], setting.flag, `${setting.env}: documented flag differs`);
      assert.ok((row[2] ?? '').length > 0, `${setting.env}: no default documented`);
      assert.ok((row[3] ?? '').length > 5, `${setting.env}: no description`);
    }
  });

  it('documents no setting that does not exist', () => {
    const envs = new Set<string>(SETTINGS.map((s) => s.env));
    for (const row of rows) assert.ok(envs.has(row[0]!), `docs/configuration.md lists unknown ${row[0]}`);
    assert.equal(new Set(rows.map((r) => r[0])).size, rows.length, 'a setting is listed twice');
  });

  it('mentions every environment variable and flag', () => {
    for (const setting of SETTINGS) {
      assert.ok(doc.includes(`\`${setting.env}\``), setting.env);
      assert.ok(doc.includes(`\`${setting.flag}\``), setting.flag);
    }
  });
});
