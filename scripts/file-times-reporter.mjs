// A node:test reporter that writes, per test file, the time from its first to its last top-level test event
// (its wall time in the run), slowest first: `TEST_FILE_TIMES=path npm test` (scripts/run-tests.mjs adds it).
import { writeFileSync } from 'node:fs';

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:complete' || event.data.nesting !== 0 || !event.data.file) continue;
    const entry = files.get(event.data.file) ?? { ms: 0, tests: 0 };
    entry.ms += event.data.details?.duration_ms ?? 0;
    entry.tests += 1;
    files.set(event.data.file, entry);
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const path = process.env.TEST_FILE_TIMES;
  if (path)
    writeFileSync(
      path,
      `${JSON.stringify(Object.fromEntries(rows.map(([f, e]) => [f, Math.round(e.ms)])), null, 1)}\n`,
    );
  yield '';
}
