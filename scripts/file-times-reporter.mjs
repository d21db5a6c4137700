// A node:test reporter that writes each test file's wall time in the run, slowest first:
// `TEST_FILE_TIMES=path npm test` (scripts/run-tests.mjs adds it; docs/testing.md#how-the-runner-spends-its-time).
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    // A file is a top-level test named by its path: a suite in a shared process (scripts/run-tests.mjs), or the
    // runner's own entry for a file with a process to itself. The shared processes' entries are not files.
    if (event.type !== 'test:complete' || event.data.nesting !== 0 || !event.data.name.endsWith('.test.ts')) continue;
    const file = relative(process.cwd(), event.data.name);
    const entry = files.get(file) ?? { ms: 0, tests: 0 };
    entry.ms += event.data.details?.duration_ms ?? 0;
    entry.tests += 1;
    files.set(file, entry);
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const path = process.env.TEST_FILE_TIMES;
  if (path)
    writeFileSync(
      path,
      `${JSON.stringify(Object.fromEntries(rows.map(([f, e]) => [f, Math.round(e.ms)])), null, 2)}\n`,
    );
  yield '';
}
