import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { assertAccessible, CHROMIUM_PATH, serverAndChromium, signedInPage, warnNoChromium } from './support/browser.ts';

/** Account settings in Chromium: display name, language kept on the account, password change. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/settings.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('settings', () => {
    it('changes the display name, the language (kept on the account) and the password', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedInPage(browser, server.origin, user);
      await page.goto(`${server.origin}/settings`);
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      await assertAccessible(page, 'settings');

      await page.getByLabel('Display name').fill('Ada L.');
      await page.getByRole('button', { name: 'Save profile' }).click();
      await page.getByText('Your profile was saved.').waitFor();
      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.global_name, 'Ada L.');

      await page.getByLabel('Account language').selectOption('fr');
      await page.getByRole('heading', { level: 1, name: 'Paramètres' }).waitFor();
      await page.getByText('Votre langue est enregistrée sur votre compte.').waitFor();
      const settings = await request(server, 'GET', '/v1/users/@me/settings', { auth: user.token });
      assert.equal(settings.body.locale, 'fr');
      await page.getByLabel('Langue du compte').selectOption('en');
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();

      await page.getByLabel('Current password').fill(user.password);
      await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Your password was changed. Your other sessions were signed out.').waitFor();
      // The old session is gone; the new password signs in; this tab is still signed in.
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
      const login = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: 'a brand new passphrase' },
      });
      assert.equal(login.status, 200, login.text);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      await context.close();
    });

    it('the chat sidebar’s settings link opens it', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedInPage(browser, server.origin, user);
      await page.goto(`${server.origin}/settings`);
      await page.getByRole('link', { name: 'Back to your conversations' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/channels/'));
      await context.close();
    });
  });
}
