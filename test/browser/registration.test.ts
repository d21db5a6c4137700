import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { request, uniqueEmail } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { adminSession } from '../support/sso.ts';
import {
  assertAccessible,
  atChatHome,
  CHROMIUM_PATH,
  launchChromium,
  newContext,
  startWebServer,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Registration with a CAPTCHA provider configured (the provider's script and verification endpoint are
 * stand-ins on this machine: no request leaves it) and in the approval and closed modes.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/registration.test.ts');
} else {
  const SITE_KEY = '10000000-ffff-ffff-ffff-000000000001';
  /** What the stand-in hCaptcha widget answers with; the stand-in verifier accepts only this token. */
  const GOOD_TOKEN = 'browser-test-captcha-pass';
  const WIDGET = `window.hcaptcha = { render(el, opts) {
    const b = document.createElement('button'); b.type = 'button'; b.textContent = 'I am a person';
    b.onclick = () => opts.callback(${JSON.stringify(GOOD_TOKEN)}); el.append(b); return 1; } };`;

  let server: TestServer & { origin: string };
  let verifier: Server;
  let browser: Browser;
  const verified: string[] = [];

  before(async () => {
    verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const token = new URLSearchParams(body).get('response') ?? '';
        verified.push(token);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ success: token === GOOD_TOKEN }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
    [server, browser] = await Promise.all([
      startWebServer({
        HEARTH_CAPTCHA_PROVIDER: 'hcaptcha',
        HEARTH_CAPTCHA_SECRET: 'browser-test-secret',
        HEARTH_HCAPTCHA_SITE_KEY: SITE_KEY,
        HEARTH_CAPTCHA_VERIFY_URL: verifyUrl,
      }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => verifier?.close(() => resolve()));
  });

  async function strictPage(): Promise<Page> {
    const context = await newContext(browser);
    // Test mode waives the CAPTCHA unless the request asks to be treated strictly.
    await context.setExtraHTTPHeaders({ 'X-Test-Strict': 'true' });
    await context.route('https://js.hcaptcha.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: WIDGET }),
    );
    return context.newPage();
  }

  /** Fills the form (not the CAPTCHA) and answers the username it chose. */
  async function fillForm(page: Page, email: string): Promise<string> {
    const username = `cap${Date.now().toString(36)}`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill('a-captcha-password');
    return username;
  }

  describe('registration with a CAPTCHA (Chromium)', () => {
    it('shows the widget, refuses without it, and registers with its answer', async () => {
      const page = await strictPage();
      const response = await page.goto(`${server.origin}/register`);
      assert.match(
        response?.headers()['content-security-policy'] ?? '',
        /script-src 'self' https:\/\/hcaptcha\.com https:\/\/\*\.hcaptcha\.com/,
      );
      await page.getByRole('group', { name: 'Prove you are a person' }).waitFor();
      await page.getByRole('button', { name: 'I am a person' }).waitFor();
      await assertAccessible(page, 'register page with CAPTCHA');

      const username = await fillForm(page, uniqueEmail('captcha'));
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('alert').filter({ hasText: 'Please complete the check that you are a person.' }).waitFor();

      await page.getByRole('button', { name: 'I am a person' }).click();
      await page.getByRole('button', { name: 'Create account' }).click();
      await atChatHome(page, username);
      assert.ok(verified.includes(GOOD_TOKEN), 'the server verified the widget answer');
      await page.context().close();
    });
  });

  describe('registration modes (Chromium)', () => {
    it('explains approval mode before and after registering', async () => {
      const admin = await adminSession(server);
      const set = (mode: string) =>
        request(server, 'POST', '/v1/admin/instance-config/update', {
          auth: admin.token,
          body: { registration: { mode } },
        });
      assert.equal((await set('approval')).status, 200);
      try {
        const page = await strictPage();
        await page.goto(`${server.origin}/register`);
        await page
          .getByText('This server reviews new accounts. After you register, an administrator approves your account')
          .waitFor();
        await fillForm(page, uniqueEmail('approval'));
        await page.getByRole('button', { name: 'I am a person' }).click();
        await page.getByRole('button', { name: 'Create account' }).click();
        await page.getByRole('heading', { level: 1, name: 'Waiting for approval' }).waitFor();
        await assertAccessible(page, 'registration pending approval');
        await page.context().close();

        assert.equal((await set('closed')).status, 200);
        const closed = await strictPage();
        await closed.goto(`${server.origin}/register`);
        await closed
          .getByRole('alert')
          .filter({ hasText: 'This server is not accepting new accounts right now.' })
          .waitFor();
        assert.equal(await closed.getByLabel('Email').count(), 0);
        await closed.goto(`${server.origin}/login`);
        await closed.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
        assert.equal(await closed.getByRole('link', { name: 'Create an account' }).count(), 0);
        await closed.context().close();
      } finally {
        await set('open');
      }
    });
  });
}
