import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

/**
 * Code and docs cite the project's own pages (`docs/<page>.md#<anchor>`), the reference a newcomer follows,
 * never design files outside the repository; and every cited page and anchor exists.
 */
const root = join(import.meta.dirname, '..', '..');
const codeFolders = ['src', 'web/src', 'test', 'scripts', 'bench'];

function filesUnder(dir: string, extensions: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, extensions));
    else if (extensions.test(name)) out.push(path);
  }
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of readFileSync(join(root, 'docs', page), 'utf8').split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading?.[1]) anchors.add(slug(heading[1]));
  }
  return anchors;
}

const pages = new Set(readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')));
const anchorCache = new Map<string, Set<string>>();
function hasAnchor(page: string, anchor: string): boolean {
  let anchors = anchorCache.get(page);
  if (!anchors) {
    anchors = anchorsOf(page);
    anchorCache.set(page, anchors);
  }
  return anchors.has(anchor);
}

/** The cited page and anchor, or what is wrong with the citation. */
function checkCitation(page: string, anchor: string | undefined): string | undefined {
  if (!pages.has(page)) return `no page docs/${page}`;
  if (anchor !== undefined && !hasAnchor(page, anchor)) return `no heading #${anchor} in docs/${page}`;
  return undefined;
}

const outsideDesign = /\b(?:api|contract)\.md\b|shared\/spec|\bcontract ?§/;

describe('documentation citations', () => {
  it('slugs headings as GitHub does', () => {
    assert.equal(slug('Webhooks (`src/domains/webhooks/`)'), 'webhooks-srcdomainswebhooks');
    assert.equal(slug('READY (`s: 1`)'), 'ready-s-1');
    assert.equal(slug('The Authorization header'), 'the-authorization-header');
  });

  it('code cites docs/ pages and headings that exist, and nothing outside the repository', () => {
    const problems: string[] = [];
    for (const folder of codeFolders) {
      for (const file of filesUnder(join(root, folder), /\.(?:ts|tsx|mjs|sql)$/)) {
        const text = readFileSync(file, 'utf8');
        const where = relative(root, file);
        if (where === 'test/unit/doc-citations.test.ts') continue;
        text.split('\n').forEach((line, index) => {
          if (outsideDesign.test(line)) problems.push(`${where}:${index + 1}: cites a design file outside the repo`);
          for (const match of line.matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
            const problem = checkCitation(match[1] as string, match[2]);
            if (problem) problems.push(`${where}:${index + 1}: ${problem}`);
          }
        });
      }
    }
    assert.deepEqual(problems, []);
  });

  it('docs link to pages and headings that exist, and to nothing outside the repository', () => {
    const problems: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, 'docs', page), 'utf8');
      text.split('\n').forEach((line, index) => {
        if (outsideDesign.test(line)) problems.push(`docs/${page}:${index + 1}: cites a design file outside the repo`);
        for (const match of line.matchAll(/\]\((?:\.\/)?([\w-]+\.md)?(?:#([\w-]+))?\)/g)) {
          if (match[1] === undefined && match[2] === undefined) continue;
          const problem = checkCitation(match[1] ?? page, match[2]);
          if (problem) problems.push(`docs/${page}:${index + 1}: ${problem}`);
        }
      });
    }
    assert.deepEqual(problems, []);
  });
});
