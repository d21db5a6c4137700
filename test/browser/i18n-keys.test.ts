import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import en from '../../web/src/i18n/locales/en.ts';
import fr from '../../web/src/i18n/locales/fr.ts';

// Pure checks on the web client's strings (no browser): every key the code names exists, and every locale
// has exactly the reference locale's keys (plural forms may differ by language rules, not here: en and fr
// both use _one/_other).

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

function entries(tree: object, prefix = ''): [string, string][] {
  return Object.entries(tree).flatMap(([name, value]): [string, string][] =>
    typeof value === 'object' && value !== null ? entries(value, `${prefix}${name}.`) : [[`${prefix}${name}`, value]],
  );
}

function keys(tree: object): string[] {
  return entries(tree).map(([key]) => key);
}

const known = new Set(keys(en));
const pluralBases = new Set(
  [...known].filter((k) => /_(one|other)$/.test(k)).map((k) => k.replace(/_(one|other)$/, '')),
);

describe('web client strings', () => {
  it('names only keys that exist in the English locale', () => {
    const missing: string[] = [];
    for (const file of sourceFiles('web/src')) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\bt\('([\w.]+)'/g)) {
        const key = match[1] as string;
        if (!known.has(key) && !pluralBases.has(key)) missing.push(`${file}: ${key}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('has a complete French locale with the same keys and placeholders', () => {
    assert.deepEqual(keys(fr).sort(), [...known].sort());
    const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
    const french = new Map(entries(fr));
    for (const [key, english] of entries(en)) {
      assert.deepEqual(placeholders(french.get(key) ?? ''), placeholders(english), key);
    }
  });

  it('has an error sentence for every code in the server catalogue', async () => {
    const { ERRORS, FORM_ERRORS } = await import('../../src/http/errors.ts');
    const catalogue = [...Object.keys(ERRORS), ...FORM_ERRORS];
    assert.ok(catalogue.length > 0, 'the catalogue is exported');
    const clientCodes = new Set(Object.keys(en.errors));
    // Codes no browser session can meet: bot-, guild-content- and test-harness-only answers.
    const unreachable =
      /^(MAX_(GUILD|INVITES|REACTIONS|GROUP|WEBHOOKS|PINS)|UNKNOWN_(CHANNEL|MESSAGE|ROLE|MEMBER|INVITE|WEBHOOK|BAN|ATTACHMENT|EMOJI|USER_FLAG|SUSPICIOUS_FLAG)|CANNOT_|SLOWMODE|USER_BANNED|TEST_HARNESS|ADMIN_API_KEY|METHOD_NOT|REQUEST_|UNSUPPORTED_MEDIA|URI_TOO_LONG)/;
    const missing = catalogue.filter((code) => !clientCodes.has(code) && !unreachable.test(code));
    assert.deepEqual(
      missing,
      [],
      'a new error code needs a sentence under `errors` in web/src/i18n/locales/en.ts and fr.ts (or, if no browser session can meet it, a place in the `unreachable` pattern of this test)',
    );
  });
});
