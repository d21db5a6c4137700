import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/**
 * docs/architecture.md#narrow-dependencies: only the composition root (`src/app.ts`) and the route table
 * (`src/routes.ts`) see the whole `AppServices` bag. Every route factory, service and pipeline step in the
 * domains, the HTTP edge and the gateway takes a narrow deps type: a `Pick<AppServices, …>` of the members it
 * uses, or an interface of its own.
 */
const CHECKED = ['src/domains', 'src/http', 'src/gateway'];

/**
 * Ways of taking the whole bag: a parameter, field or property typed `AppServices` (alone, in a union or an
 * intersection, in an array or readonly), an interface extending it, or a type that keeps nearly all of it.
 * `Pick<AppServices, …>` is the narrow form and is not matched.
 */
const WHOLE_BAG = [
  /:\s*(?:readonly\s+)?(?:Readonly<\s*)?AppServices\b(?!\s*\[\s*')/,
  /[&|]\s*AppServices\b(?!\s*\[\s*')/,
  /\bAppServices\s*[&|]/,
  /\bextends\s+(?:[\w.]+\s*,\s*)*AppServices\b/,
  /\b(?:Omit|Partial|Required|Readonly)<\s*AppServices\b/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The source without comments, so prose about the bag is not mistaken for a use of it. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
}

function wholeBagUses(file: string): string[] {
  const lines = code(readFileSync(file, 'utf8')).split('\n');
  return lines.flatMap((line, index) =>
    WHOLE_BAG.some((pattern) => pattern.test(line)) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
  );
}

describe('narrow dependencies', () => {
  const files = CHECKED.flatMap(sourceFiles);

  it('finds the route factories it checks', () => {
    assert.ok(files.length > 150);
    assert.ok(files.some((file) => file.endsWith('src/domains/auth/routes.ts')));
    assert.ok(files.some((file) => file.endsWith('src/http/server.ts')));
  });

  it('recognises a whole-bag parameter, field and intersection, and lets a Pick through', () => {
    const taken = (line: string) => WHOLE_BAG.some((pattern) => pattern.test(code(line)));
    assert.ok(taken('export function authRoutes(services: AppServices): AnyRoute[] {'));
    assert.ok(taken('  constructor(private readonly services: AppServices) {}'));
    assert.ok(taken('  services: AppServices;'));
    assert.ok(taken('export function f(deps: AppServices & { audit: AuditLog }) {'));
    assert.ok(taken('type Deps = Omit<AppServices, "db">;'));
    assert.ok(taken('interface Deps extends AppServices {'));
    assert.ok(!taken("export type AuthDeps = Pick<AppServices, 'db' | 'users'>;"));
    assert.ok(!taken("  now: AppServices['clock'];"));
    assert.ok(!taken('// a route factory used to take services: AppServices'));
  });

  it('no function or type in the domains, the HTTP edge or the gateway takes the whole AppServices', () => {
    assert.deepEqual(files.flatMap(wholeBagUses), []);
  });
});
