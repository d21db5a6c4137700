import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERRORS, FORM_ERRORS } from '../../src/http/errors.ts';

/** docs/errors.md and the catalogue in src/http/errors.ts list the same codes, in both directions. */
const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

function section(title: string): string {
  const start = doc.indexOf(`## ${title}`);
  assert.ok(start >= 0, `docs/errors.md has a "## ${title}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^\| `[A-Z0-9_]+` \|/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe('docs/errors.md', () => {
  const codeRows = rows(section('Error codes'));
  const formRows = rows(section('Form element codes'));

  it('documents every error code with its status', () => {
    const documented = new Map(codeRows.map(([code, status]) => [code!.replaceAll('`', ''), Number(status)]));
    for (const [code, { status }] of Object.entries(ERRORS)) {
      assert.ok(documented.has(code), `${code} is missing from docs/errors.md`);
      assert.equal(documented.get(code), status, `${code}: documented status differs from the code`);
    }
  });

  it('documents no error code that the catalogue lacks, and each once', () => {
    const codes = codeRows.map(([code]) => code!.replaceAll('`', ''));
    assert.equal(new Set(codes).size, codes.length, 'a code is documented twice');
    for (const code of codes) assert.ok(code in ERRORS, `docs/errors.md lists ${code}, which ERRORS lacks`);
  });

  it('gives every error code a meaning', () => {
    for (const row of codeRows) assert.ok((row[2] ?? '').length > 10, `${row[0]} needs a meaning`);
  });

  it('documents exactly the form element codes', () => {
    const documented = formRows.map(([code]) => code!.replaceAll('`', ''));
    assert.equal(new Set(documented).size, documented.length, 'an element code is documented twice');
    assert.deepEqual([...documented].sort(), [...FORM_ERRORS].sort());
    for (const row of formRows) assert.ok((row[1] ?? '').length > 5, `${row[0]} needs a meaning`);
  });

  it('keeps element codes and top-level codes apart', () => {
    for (const code of FORM_ERRORS) assert.ok(!(code in ERRORS), `${code} is both a top-level and an element code`);
  });
});
