import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { harness } from '../../support/client.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';

/**
 * Debian's package first. CHROMIUM_PATH, when set, is the only candidate (so `CHROMIUM_PATH=/none npm test`
 * shows what a machine without Chromium does). Never a downloaded browser.
 */
const CANDIDATES =
  process.env.CHROMIUM_PATH !== undefined
    ? [process.env.CHROMIUM_PATH]
    : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export const CHROMIUM_PATH = CANDIDATES.find((path) => !!path && existsSync(path));

/** Says loudly, once per file, that the browser suite did not run (the caller then defines no browser test). */
export function warnNoChromium(file: string): void {
  const line = '!'.repeat(100);
  process.stderr.write(
    `\n${line}\n!!! NO CHROMIUM FOUND: the browser tests in ${file} DID NOT RUN.\n` +
      `!!! Install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.\n${line}\n\n`,
  );
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** `extraArgs`: e.g. the fake media devices of the voice tests. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  assert.ok(CHROMIUM_PATH, 'no Chromium');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...ARGS, ...extraArgs], headless: true });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A test server whose public and webapp URL is `http://localhost:<port>`: a secure context for WebAuthn
 * with a valid RP ID (`localhost`), the same origin the browser opens.
 */
export async function startWebServer(
  env: Record<string, string> = {},
  options: { apiHost?: string } = {},
): Promise<TestServer & { origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const server = await startTestServer({
    PORT: String(port),
    // With `apiHost` the API is announced on another origin than the page's (same process, other name).
    HEARTH_PUBLIC_URL: options.apiHost ? `http://${options.apiHost}:${port}` : origin,
    HEARTH_WEBAPP_URL: origin,
    HEARTH_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
    ...env,
  });
  return Object.assign(server, { origin });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page (evaluated over DevTools, so the page's CSP stays on) and fails on any serious
 * or critical violation.
 */
export async function assertAccessible(page: Page, label: string): Promise<void> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    `window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    severe.map((v) => `${v.impact} ${v.id}: ${v.help} @ ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${label}`,
  );
}

/** Collects console errors and CSP reports, so a test can assert the page ran cleanly. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

export async function newContext(
  browser: Browser,
  options: { ip?: string; locale?: string } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    locale: options.locale ?? 'en-US',
    ...(options.ip ? { extraHTTPHeaders: { 'X-Forwarded-For': options.ip } } : {}),
  });
  context.setDefaultTimeout(10_000);
  return context;
}

export interface Mail {
  to: string;
  type: string;
  metadata: Record<string, string>;
  html: string;
  text: string;
}

/** The newest captured email of a type to an address; the link inside it is what a person would open. */
export async function lastMail(server: TestServer, to: string, type: string): Promise<Mail> {
  const res = await harness(server, 'GET', `/emails?recipient=${encodeURIComponent(to)}`);
  assert.equal(res.status, 200);
  const mail = (res.body.emails as Mail[]).filter((m) => m.type === type).at(-1);
  assert.ok(mail, `a ${type} email to ${to}`);
  return mail;
}

/** The first link in an email that points at the given webapp path. */
export function mailLink(mail: Mail, origin: string, path: string): string {
  const match = new RegExp(`${origin}${path}#token=[A-Za-z0-9%]+`).exec(mail.text + mail.html);
  assert.ok(match, `a ${path} link in the ${mail.type} email`);
  return match[0];
}
