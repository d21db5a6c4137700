#!/usr/bin/env node
// `npx hearth …`: the compiled CLI (dist/, built by `npm ci`), or the TypeScript source through tsx in a
// checkout that has not been built.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/hearth.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/hearth.ts');
}
