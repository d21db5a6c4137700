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
 * and for the chat view (issue 18):
 *   - message round trip: Enter in context A → the message rendered in context B, p95 over 40 messages  ≤ 150 ms
 *   - JavaScript transferred to open a channel (gzip, cold)                                             ≤ 300 KiB
 *   - Lighthouse on the chat view and the settings page (desktop and mobile), signed in   targets ≥ 90 / ≥ 95
 * `npm run bench:web` prints them; `npm run bench -- --write` also writes them into docs/performance.md.
 */

export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path): path is string => !!path && existsSync(path),
);
export const FLAGS = [
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
  chat?: ChatBenchResult;
}

export interface ChatBenchResult {
  roundTripP50Ms: number;
  roundTripP95Ms: number;
  roundTrips: number;
  jsBytes: number;
  jsFiles: number;
  cssBytes: number;
}

interface ChatFixture {
  path: string;
  a: { token: string; id: string };
  b: { token: string; id: string };
}

export async function api(origin: string, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Two accounts in one guild with some history, as the chat measurements need. */
async function chatFixture(origin: string): Promise<ChatFixture> {
  const register = async (name: string) => {
    const r = await api(origin, 'POST', '/auth/register', null, {
      email: `${name}${Date.now()}@bench.test`,
      password: 'bench-password-123',
      username: `${name}${Date.now() % 1e6}`,
    });
    return { token: r.token as string, id: r.user_id as string };
  };
  const a = await register('alice');
  const b = await register('bob');
  const guild = await api(origin, 'POST', '/guilds', a.token, { name: 'Bench' });
  const invite = await api(origin, 'POST', `/channels/${guild.system_channel_id}/invites`, a.token, {});
  await api(origin, 'POST', `/invites/${invite.code}`, b.token, {});
  // Within the server's own limits (20 messages per 10 s per account): two accounts, paced.
  for (let i = 0; i < 40; i += 2) {
    await Promise.all(
      [a, b].map((user, k) =>
        api(origin, 'POST', `/channels/${guild.system_channel_id}/messages`, user.token, {
          content: `history **${i + k}** with a [link](https://example.com) and \`code\``,
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 520));
  }
  return { path: `/channels/${guild.id}/${guild.system_channel_id}`, a, b };
}

export const sessionScript = (user: { token: string; id: string }) =>
  `localStorage.setItem('hearth.session', ${JSON.stringify(JSON.stringify({ token: user.token, userId: user.id }))})`;

async function measureChat(origin: string, fixture: ChatFixture): Promise<ChatBenchResult> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  try {
    // Cold load of the chat view: what a signed-in person downloads to see a channel.
    const cold = await browser.newContext();
    await cold.addInitScript(sessionScript(fixture.b));
    const page = await cold.newPage();
    await page.goto(`${origin}${fixture.path}`);
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
    await page.waitForLoadState('networkidle');
    const bytes = (await page.evaluate(`(() => {
      const resources = performance.getEntriesByType('resource');
      const js = resources.filter((r) => new URL(r.name).pathname.endsWith('.js'));
      const css = resources.filter((r) => new URL(r.name).pathname.endsWith('.css'));
      return { js: js.reduce((n, r) => n + r.encodedBodySize, 0), jsFiles: js.length, css: css.reduce((n, r) => n + r.encodedBodySize, 0) };
    })()`)) as { js: number; jsFiles: number; css: number };
    await cold.close();

    // Round trip: the Enter keydown in A (capture phase) to the message's node appearing in B.
    const ca = await browser.newContext();
    const cb = await browser.newContext();
    await ca.addInitScript(sessionScript(fixture.a));
    await cb.addInitScript(sessionScript(fixture.b));
    const a = await ca.newPage();
    const b = await cb.newPage();
    await Promise.all([a.goto(`${origin}${fixture.path}`), b.goto(`${origin}${fixture.path}`)]);
    const boxA = a.getByRole('textbox', { name: 'Message #general' });
    await Promise.all([boxA.waitFor(), b.getByRole('textbox', { name: 'Message #general' }).waitFor()]);
    await a.evaluate(`(() => {
      window.__sent = {};
      window.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') window.__sent[e.target.value] = performance.timeOrigin + performance.now();
      }, true);
    })()`);
    await b.evaluate(`(() => {
      window.__arrived = {};
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('.message-list .md-p')) {
          const text = el.textContent;
          if (text && text.startsWith('rt-') && !(text in window.__arrived)) window.__arrived[text] = performance.timeOrigin + performance.now();
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    })()`);
    const samples: number[] = [];
    const rounds = 45;
    for (let i = 0; i < rounds; i++) {
      const text = `rt-${i}`;
      await boxA.fill(text);
      await boxA.press('Enter');
      await b.waitForFunction((t) => t in (window as unknown as { __arrived: object }).__arrived, text, {
        timeout: 5000,
      });
      const sent = (await a.evaluate(`window.__sent['${text}']`)) as number;
      const arrived = (await b.evaluate(`window.__arrived['${text}']`)) as number;
      if (i >= 5) samples.push(arrived - sent); // the first few warm up the JIT and the connection
      await a.waitForTimeout(520); // the server allows 20 messages per 10 s per account
    }
    await Promise.all([ca.close(), cb.close()]);
    samples.sort((x, y) => x - y);
    const pct = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? Number.NaN;
    return {
      roundTripP50Ms: pct(0.5),
      roundTripP95Ms: pct(0.95),
      roundTrips: samples.length,
      jsBytes: bytes.js,
      jsFiles: bytes.jsFiles,
      cssBytes: bytes.css,
    };
  } finally {
    await browser.close();
  }
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

export async function startHearth(
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; origin: string; dataDir: string }> {
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
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Up to 60 s: a first start on a busy machine compiles the TypeScript and creates the database.
  for (let attempt = 0; attempt < 600; attempt++) {
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

export function median(values: number[]): number {
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

async function runLighthouse(origin: string, chat?: ChatFixture): Promise<WebBenchResult['lighthouse']> {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: FLAGS });
  const results: WebBenchResult['lighthouse'] = [];
  const pages: [string, string][] = [
    ['sign-in', '/login'],
    ['register', '/register'],
  ];
  try {
    if (chat) {
      // The chat view needs a session: put it in this Chrome's localStorage and keep storage between runs.
      const cdp = await chromium.connectOverCDP(`http://127.0.0.1:${chrome.port}`);
      const page = await (cdp.contexts()[0] ?? (await cdp.newContext())).newPage();
      await page.goto(`${origin}/login`);
      await page.evaluate(sessionScript(chat.b));
      await page.close();
      await cdp.close();
      pages.push(['chat view', chat.path], ['settings', '/settings']);
    }
    for (const [page, path] of pages) {
      for (const preset of ['desktop', 'mobile'] as const) {
        const flags = {
          port: chrome.port,
          output: 'json' as const,
          logLevel: 'error' as const,
          onlyCategories: ['performance', 'accessibility', 'best-practices'],
          disableStorageReset: page === 'chat view' || page === 'settings',
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
    const fixture = await chatFixture(origin);
    const chat = await measureChat(origin, fixture);
    const scores = await runLighthouse(origin, fixture);
    return { ...signIn, lighthouse: scores, chat };
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
    ...(result.chat
      ? [
          [
            'Chat: message round trip, Enter in A → rendered in B (p50 / p95)',
            `${result.chat.roundTripP50Ms.toFixed(0)} / ${result.chat.roundTripP95Ms.toFixed(0)} ms over ${result.chat.roundTrips}`,
            'p95 ≤ 150 ms',
          ],
          [
            'Chat view: JavaScript transferred (gzip, cold)',
            `${kib(result.chat.jsBytes)} in ${result.chat.jsFiles} files (+ ${kib(result.chat.cssBytes)} CSS)`,
            '≤ 300 KiB',
          ],
        ]
      : []),
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
