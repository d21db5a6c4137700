import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The layers of docs/architecture.md, lowest first. A module may import its own layer and the layers below
 * it, never one above: platform → identity/auth core → domains → http/gateway/web → composition root.
 */
const LAYERS = ['platform', 'core', 'domains', 'edge', 'root'] as const;
type Layer = (typeof LAYERS)[number];

/** The identity/auth core: what every domain and the edge share (errors, route specs, identity, config). */
const CORE = [
  /^src\/identity\//,
  /^src\/config\//,
  /^src\/http\/auth\//,
  /^src\/http\/(errors|route|fields|validation|raw-response|allowance)\.ts$/,
];

function layerOf(file: string): Layer {
  if (file.startsWith('src/platform/')) return 'platform';
  if (CORE.some((pattern) => pattern.test(file))) return 'core';
  if (file.startsWith('src/domains/')) return 'domains';
  if (/^src\/(http|gateway|web)\//.test(file)) return 'edge';
  return 'root';
}

/**
 * The one standing exception: a type-only import of the composition root's service registry (`AppServices`),
 * so a module can name the members it takes (`Pick<AppServices, …>`, docs/architecture.md#narrow-dependencies;
 * test/unit/narrow-deps.test.ts keeps it from taking the whole). It carries no code and no cycle at run time.
 */
function isAllowedException(importer: string, target: string, typeOnly: boolean): boolean {
  return typeOnly && target === 'src/app-services.ts' && importer !== 'src/app-services.ts';
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/^(import|export)(\s+type)?[^;]*?\sfrom\s+'(\.[^']+)'/gms)) {
    found.push({
      from: file,
      to: relative('.', normalize(join(dirname(file), match[3] as string))),
      typeOnly: match[2] !== undefined,
    });
  }
  for (const match of text.matchAll(/import\('(\.[^']+)'\)/g))
    found.push({ from: file, to: relative('.', normalize(join(dirname(file), match[1] as string))), typeOnly: false });
  return found;
}

const files = sourceFiles('src');
const imports = files.flatMap(importsOf);

describe('layering', () => {
  it('finds the source files and their imports', () => {
    assert.ok(files.length > 100);
    assert.ok(imports.length > 500);
  });

  it('no module imports a layer above its own', () => {
    const violations = imports
      .filter((i) => LAYERS.indexOf(layerOf(i.to)) > LAYERS.indexOf(layerOf(i.from)))
      .filter((i) => !isAllowedException(i.from, i.to, i.typeOnly))
      .map((i) => `${i.from} (${layerOf(i.from)}) imports ${i.to} (${layerOf(i.to)})`);
    assert.deepEqual(violations, []);
  });

  it("no domain imports another domain's route file (shared code lives in a module of its own)", () => {
    const violations = imports
      .filter((i) => i.from.startsWith('src/domains/') && i.to.startsWith('src/domains/'))
      .filter((i) => i.from.split('/')[2] !== i.to.split('/')[2] && /(^|\/|-)routes\.ts$/.test(i.to))
      .map((i) => `${i.from} imports ${i.to}`);
    assert.deepEqual(violations, []);
  });

  it('has no import cycle among run-time (non-type) imports', () => {
    const graph = new Map<string, string[]>();
    for (const i of imports) if (!i.typeOnly) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
    // Tarjan's strongly connected components: any component of two or more files is a cycle.
    let index = 0;
    const indices = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (node: string): void => {
      indices.set(node, index);
      low.set(node, index++);
      stack.push(node);
      onStack.add(node);
      for (const next of graph.get(node) ?? []) {
        if (!indices.has(next)) {
          visit(next);
          low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
        } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, indices.get(next) as number));
      }
      if (low.get(node) === indices.get(node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1) cycles.push(component.sort());
      }
    };
    for (const file of files) if (!indices.has(file)) visit(file);
    assert.deepEqual(cycles, []);
  });

  it('the classifier is exercised by every layer', () => {
    const seen = new Set(files.map(layerOf));
    for (const layer of LAYERS) assert.ok(seen.has(layer), `no file in layer ${layer}`);
    assert.equal(layerOf('src/platform/db/database.ts'), 'platform');
    assert.equal(layerOf('src/http/errors.ts'), 'core');
    assert.equal(layerOf('src/http/server.ts'), 'edge');
    assert.equal(layerOf('src/domains/chat/module.ts'), 'domains');
    assert.equal(layerOf('src/app.ts'), 'root');
  });
});
