// Rewrites the generated route table inside docs/api-reference.md from the live route table.
// Usage: npm run docs:api
import { readFile, writeFile } from 'node:fs/promises';
import { ROUTES_END, ROUTES_START, renderRouteTable } from '../src/http/route-reference.ts';
import { buildRoutes } from '../src/routes.ts';
import { startTestServer } from '../test/support/server.ts';

const server = await startTestServer();
try {
  const table = renderRouteTable(buildRoutes(server.app.services));
  const path = 'docs/api-reference.md';
  const text = await readFile(path, 'utf8');
  const start = text.indexOf(ROUTES_START);
  const end = text.indexOf(ROUTES_END);
  if (start < 0 || end < start) throw new Error(`${path}: the generated-table markers are missing`);
  await writeFile(path, `${text.slice(0, start + ROUTES_START.length)}\n${table}\n${text.slice(end)}`);
  console.log(`${path}: ${table.split('\n').length - 2} routes`);
} finally {
  await server.close();
}
