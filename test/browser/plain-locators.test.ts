import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import { totpCode } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  h1,
  newContext,
  serverAndChromium,
  signedInPage,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The pages found the way assistive technology and a by-name test find them: the plainest label or name, with
 * no `exact` and no second guess (docs/web.md#accessibility). A control whose name contains a field's label
 * (a "Show password" button beside "Password") or a second control with the same label makes such a lookup
 * ambiguous.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/plain-locators.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('plain locators', () => {
    it('register and sign in find "Password" as one field; the show button is still named', async () => {
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/register`);
      await h1(page, 'Create your account');
      const suffix = Math.random().toString(36).slice(2, 8);
      const email = `plain${suffix}@example.test`;
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Username').fill(`plain_${suffix}`);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Show password' }).click();
      assert.equal(await page.getByLabel('Password').getAttribute('type'), 'text');
      await page.getByRole('button', { name: 'Hide password' }).click();
      assert.equal(await page.getByLabel('Password').getAttribute('type'), 'password');
      await page.getByLabel(/agree/).check();
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL((url) => url.pathname !== '/register');

      // The signed-in landing page leads to the settings.
      await page.getByRole('link', { name: 'Settings' }).click();
      await h1(page, 'Settings');
      await page.getByRole('button', { name: 'Sign out on this device' }).click();
      await h1(page, 'Sign in to Hearth');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname !== '/login');
      await context.close();
    });

    it('settings: one "Language" field, the authenticator "Code" field alone, a "Passkeys" heading', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedInPage(browser, server.origin, user);
      await page.goto(`${server.origin}/settings`);
      await h1(page, 'Settings');
      await page.getByRole('heading', { level: 2, name: 'Passkeys' }).waitFor();

      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      await assertAccessible(page, 'settings, authenticator enrolment');
      const secret = await page.getByLabel('Setup key').inputValue();
      await page.getByLabel('Code').fill(totpCode(secret.replace(/\s/g, '')));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('button', { name: /download/i }).waitFor();
      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.mfa_enabled, true);

      await page.getByLabel('Language').selectOption('fr');
      await h1(page, 'Paramètres');
      await page.getByRole('heading', { level: 2, name: 'Clés d’accès' }).waitFor();
      await page.getByLabel('Langue').selectOption('en');
      await h1(page, 'Settings');
      await context.close();
    });
  });
}
