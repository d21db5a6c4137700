import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { chromium } from 'playwright-core';

/**
 * Web client figures (issue 15), Chromium on this machine against a server started like `npm start`:
 *   - JavaScript transferred (gzip bytes on the wire) to show the sign-in page       budget ≤ 150 KiB
 *   - first contentful paint of the sign-in page on localhost (median of cold loads)  target ≤ 1 s
 *   - Lighthouse (npm package, Debian's Chromium): performance, accessibility, best practices on the
 *     sign-in and registration pages, desktop and mobile presets        targets ≥ 90 / ≥ 95 / ≥ 95
 * `npm run bench:web` prints them; `npm run bench -- --write` also writes them into docs/performance.md.
 */

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path): path is string => !!path && existsSync(path),
);
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const COLD_LOADS = Number(process.env.BENCH_WEB_LOADS ?? 7);

export interface WebBenchResult {
  jsBytes: number;
  jsFiles: number;
  cssBytes: number;
  htmlBytes: number;
  fcpMs: number;
  lighthouse: { page: string; preset: string; performance: number; accessibility: number; bestPractices: number }[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startHearth(): Promise<{ child: ChildProcess; origin: string; dataDir: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-web-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      HEARTH_PUBLIC_URL: origin,
      HEARTH_DATA_DIR: dataDir,
      HEARTH_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let attempt = 0; attempt < 200; attempt++) {
    const ok = await fetch(`${origin}/_health`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return { child, origin, dataDir };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  throw new Error('hearth did not start');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Cold loads of /login in fresh contexts: bytes from Resource Timing (encoded = on the wire), FCP from paint timing. */
async function measureSignIn(origin: string): Promise<Omit<WebBenchResult, 'lighthouse'>> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  const fcps: number[] = [];
  let bytes = { js: 0, jsFiles: 0, css: 0, html: 0 };
  try {
    for (let load = 0; load < COLD_LOADS; load++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${origin}/login`);
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await page.waitForLoadState('networkidle');
      // A string, not a function: tsx would wrap named inner functions in a helper the page does not have.
      const measured = (await page.evaluate(`(() => {
        const resources = performance.getEntriesByType('resource');
        const nav = performance.getEntriesByType('navigation')[0];
        const js = resources.filter((r) => new URL(r.name).pathname.endsWith('.js'));
        const css = resources.filter((r) => new URL(r.name).pathname.endsWith('.css'));
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        return {
          js: js.reduce((n, r) => n + r.encodedBodySize, 0),
          jsFiles: js.length,
          css: css.reduce((n, r) => n + r.encodedBodySize, 0),
          html: nav.encodedBodySize,
          fcp: fcp ? fcp.startTime : NaN,
        };
      })()`)) as { js: number; jsFiles: number; css: number; html: number; fcp: number };
      fcps.push(measured.fcp);
      bytes = { js: measured.js, jsFiles: measured.jsFiles, css: measured.css, html: measured.html };
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return { jsBytes: bytes.js, jsFiles: bytes.jsFiles, cssBytes: bytes.css, htmlBytes: bytes.html, fcpMs: median(fcps) };
}

async function runLighthouse(origin: string): Promise<WebBenchResult['lighthouse']> {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: FLAGS });
  const results: WebBenchResult['lighthouse'] = [];
  try {
    for (const [page, path] of [
      ['sign-in', '/login'],
      ['register', '/register'],
    ] as const) {
      for (const preset of ['desktop', 'mobile'] as const) {
        const flags = {
          port: chrome.port,
          output: 'json' as const,
          logLevel: 'error' as const,
          onlyCategories: ['performance', 'accessibility', 'best-practices'],
        };
        const run = await lighthouse(`${origin}${path}`, flags, preset === 'desktop' ? desktopConfig : undefined);
        const categories = run?.lhr.categories;
        const score = (name: string) => Math.round((categories?.[name]?.score ?? 0) * 100);
        results.push({
          page,
          preset,
          performance: score('performance'),
          accessibility: score('accessibility'),
          bestPractices: score('best-practices'),
        });
      }
    }
  } finally {
    await chrome.kill();
  }
  return results;
}

export async function runWebBench(): Promise<WebBenchResult | undefined> {
  if (!CHROMIUM) {
    console.error("!!! no Chromium found (install Debian's chromium or set CHROMIUM_PATH): web figures NOT measured");
    return undefined;
  }
  const { child, origin, dataDir } = await startHearth();
  try {
    const signIn = await measureSignIn(origin);
    const scores = await runLighthouse(origin);
    return { ...signIn, lighthouse: scores };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

export function webTable(result: WebBenchResult): string {
  const rows = [
    ['Sign-in page: JavaScript transferred (gzip)', `${kib(result.jsBytes)} in ${result.jsFiles} files`, '≤ 150 KiB'],
    ['Sign-in page: CSS + HTML transferred', `${kib(result.cssBytes)} + ${kib(result.htmlBytes)}`, ''],
    ['Sign-in page: first contentful paint (median, cold)', `${result.fcpMs.toFixed(0)} ms`, '≤ 1000 ms'],
    ...result.lighthouse.map((l) => [
      `Lighthouse ${l.page} (${l.preset}): performance / accessibility / best practices`,
      `${l.performance} / ${l.accessibility} / ${l.bestPractices}`,
      '≥ 90 / ≥ 95 / ≥ 95',
    ]),
  ];
  return ['| Measurement | Result | Target |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** `npm run bench:web -- --write` replaces the `web` block of docs/performance.md. */
function writeWebBlock(table: string): void {
  const path = new URL('../docs/performance.md', import.meta.url);
  const doc = readFileSync(path, 'utf8');
  const context = `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`;
  const block = `<!-- web:start -->\n${context}\n\n${table}\n<!-- web:end -->`;
  writeFileSync(path, doc.replace(/<!-- web:start -->[\s\S]*<!-- web:end -->/, block));
  console.log('docs/performance.md updated (web)');
}

if (process.argv[1]?.endsWith('bench/web.ts')) {
  const result = await runWebBench();
  if (result) {
    const table = webTable(result);
    console.log(`\n${table}\n`);
    if (process.argv.includes('--write')) writeWebBlock(table);
  }
}
