import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { after, before } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { harness, request, type TestUser } from '../../support/client.ts';
import { warnMissingTool } from '../../support/missing-tool.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { CHROMIUM_ARGS } from './chromium-args.ts';

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
  warnMissingTool(
    'CHROMIUM',
    'browser tests',
    file,
    "Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH",
  );
}

/** `extraArgs`: e.g. the fake media devices of the voice tests. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  assert.ok(CHROMIUM_PATH, 'no Chromium');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
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
  options: { apiHost?: string; voice?: NonNullable<Parameters<typeof startTestServer>[1]>['voice'] } = {},
): Promise<TestServer & { origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const server = await startTestServer(
    {
      PORT: String(port),
      // With `apiHost` the API is announced on another origin than the page's (same process, other name).
      HEARTH_PUBLIC_URL: options.apiHost ? `http://${options.apiHost}:${port}` : origin,
      HEARTH_WEBAPP_URL: origin,
      HEARTH_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      ...env,
    },
    options.voice ? { voice: options.voice } : {},
  );
  return Object.assign(server, { origin });
}

/**
 * Chromium flags for calls: a fake camera and microphone without a permission prompt, audio that plays without a
 * gesture, and the whole screen picked when a page asks to share one.
 */
export const FAKE_MEDIA_ARGS = [
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
  '--auto-select-desktop-capture-source=Entire screen',
];

/** A signed-in context allowed the microphone and camera on the web server's origin. */
export function signedInWithMedia(browser: Browser, origin: string, user: Pick<TestUser, 'token' | 'id'>) {
  return signedInContext(browser, user, { permissions: { origin, names: ['microphone', 'camera'] } });
}

/**
 * The usual frame of a browser test file: a web server and Chromium started together before its tests and
 * closed after them (Chromium first, so no page still talks to the server as it stops). `use` receives both
 * once started, in the same hook (a file's own `before` is not ordered after this one): the file keeps them
 * in its own variables and may set up more there. Registered where it is called: in a `describe`, for that
 * suite only.
 */
export function serverAndChromium(
  use: (started: { server: TestServer & { origin: string }; browser: Browser }) => unknown,
  options: { env?: Record<string, string>; apiHost?: string; chromiumArgs?: string[] } = {},
): void {
  let server: (TestServer & { origin: string }) | undefined;
  let browser: Browser | undefined;
  before(async () => {
    [server, browser] = await Promise.all([
      startWebServer(options.env, options.apiHost ? { apiHost: options.apiHost } : {}),
      launchChromium(options.chromiumArgs),
    ]);
    await use({ server, browser });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
}

/** Chromium alone for the file, whose suites start their own servers: launched before, closed after. */
export function chromiumForFile(use: (browser: Browser) => void): void {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchChromium();
    use(browser);
  });
  after(async () => {
    await browser?.close();
  });
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

/**
 * A context already signed in as `user`: the session the web client keeps in localStorage is stored before
 * any page of it loads (and kept if the page replaces it). `permissions` are granted to their `origin`
 * (e.g. the microphone of the voice tests).
 */
export async function signedInContext(
  browser: Browser,
  user: Pick<TestUser, 'token' | 'id'>,
  options: { permissions?: { origin: string; names: string[] } } = {},
): Promise<BrowserContext> {
  const context = await newContext(browser);
  const { permissions } = options;
  if (permissions) await context.grantPermissions(permissions.names, { origin: permissions.origin });
  await context.addInitScript(
    ([token, userId]) => {
      if (!window.localStorage.getItem('hearth.session'))
        window.localStorage.setItem('hearth.session', JSON.stringify({ token, userId }));
    },
    [user.token, user.id],
  );
  return context;
}

type Credentials = Pick<TestUser, 'email' | 'password'>;

/** Fills the sign-in form the page shows and sends it; what comes next is the caller's to wait for. */
export async function fillSignIn(page: Page, user: Credentials): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Opens `/login` and sends the form; what comes next is the caller's to wait for. */
export async function submitSignIn(page: Page, origin: string, user: Credentials): Promise<void> {
  await page.goto(`${origin}/login`);
  await fillSignIn(page, user);
}

/** Signs in through the form and waits until the client has left `/login`. */
export async function signInAs(page: Page, origin: string, user: Credentials): Promise<void> {
  await submitSignIn(page, origin, user);
  await page.waitForURL((url) => url.pathname !== '/login');
}

/** A new context and page signed in through the form; `clipboard` opens the clipboard to it (copy buttons). */
export async function signedInPage(
  browser: Browser,
  origin: string,
  user: Credentials,
  options: { clipboard?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newContext(browser);
  if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  await signInAs(page, origin, user);
  return { context, page };
}

/** Waits for the page's `<h1>` with this name. */
export const h1 = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();

/**
 * Waits until the page is the chat's home, where `/` and signing in lead: the URL `/channels/@me`, its "Friends"
 * heading, and `name` (the display name, else the username) in the user area of the direct-messages navigation.
 */
export async function atChatHome(page: Page, name: string, timeout = 15_000): Promise<void> {
  await page.getByRole('heading', { level: 1, name: 'Friends' }).waitFor({ timeout });
  assert.equal(new URL(page.url()).pathname, '/channels/@me');
  await page.getByRole('navigation', { name: 'Direct messages' }).getByText(name, { exact: true }).first().waitFor();
}

/** Answers the sudo prompt with the password (an account without a second factor); the prompt goes away. */
export async function confirmWithPassword(page: Page, password: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
  await dialog.waitFor();
  await dialog.getByLabel('Your password').fill(password);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  // The prompt is unmounted once answered.
  await dialog.waitFor({ state: 'detached' });
}

/** Chromium's virtual authenticator on the page (a platform passkey that always verifies the person). */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

/** A guild of `owner` with `members` joined through an invite of its system channel. */
export async function guildWith(
  server: Pick<TestServer, 'url'>,
  name: string,
  owner: TestUser,
  ...members: TestUser[]
) {
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name } });
  assert.equal(guild.status, 200, guild.text);
  const channel = guild.body.system_channel_id as string;
  const invite = await request(server, 'POST', `/v1/channels/${channel}/invites`, { auth: owner.token, body: {} });
  for (const member of members) {
    const joined = await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token, body: {} });
    assert.equal(joined.status, 200, joined.text);
  }
  return { guildId: guild.body.id as string, channelId: channel, code: invite.body.code as string };
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

/**
 * Waits until an image has loaded and decoded (complete with a width): an image's element appears before its
 * bytes arrive, and the first image a server derives also loads the image library (docs/performance.md#start-up).
 */
export async function imageLoaded(image: Locator, timeoutMs = 15_000): Promise<void> {
  await image.waitFor();
  const handle = await image.elementHandle();
  await image
    .page()
    .waitForFunction((img) => img instanceof HTMLImageElement && img.complete && img.naturalWidth > 0, handle, {
      timeout: timeoutMs,
    });
}

/** Focuses a control and presses a key on it (Enter by default), as a keyboard user does. */
export async function press(control: Locator, key = 'Enter'): Promise<void> {
  await control.focus();
  await control.press(key);
}
