import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  lastMail,
  newContext,
  serverAndChromium,
  warnNoChromium,
} from './support/browser.ts';

/**
 * "Your data" in the account settings (docs/accounts.md#your-data-data-export), in Chromium: the request
 * button, the state while the archive is prepared, the ready state once the email went out, and the wait
 * before the next request; in English and in French.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/settings-data.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  async function verified(): Promise<TestUser> {
    const user = await registerUser(server);
    const token = (await lastMail(server, user.email, 'email_verification')).metadata.token;
    const res = await request(server, 'POST', '/v1/auth/verify', { body: { token } });
    assert.equal(res.status, 204, res.text);
    return user;
  }

  async function openSettings(user: TestUser, locale = 'en-US'): Promise<Page> {
    const context = await newContext(browser, { locale });
    const page = await context.newPage();
    await page.goto(`${server.origin}/login`);
    // Signed in as the web client keeps a session (docs/web.md): the sign-in form has its own tests.
    await page.evaluate(
      ([token, userId]) => localStorage.setItem('hearth.session', JSON.stringify({ token, userId })),
      [user.token, user.id] as const,
    );
    await page.goto(`${server.origin}/settings`);
    return page;
  }

  describe('account settings: your data', () => {
    it('requests the archive, shows it being prepared, then ready once emailed, and the wait for the next', async () => {
      const user = await verified();
      const page = await openSettings(user);
      const section = page.getByRole('region', { name: 'Your data' });
      await section.getByRole('status').filter({ hasText: 'You have not asked for your data yet.' }).waitFor();
      await assertAccessible(page, 'settings with the data section');
      await section.getByRole('button', { name: 'Request my data' }).click();
      // The page shows the state it reads from the API: queued or being prepared, then ready.
      await section
        .getByRole('status')
        .filter({ hasText: /being prepared|the download link is in your email/ })
        .waitFor();
      await section.getByRole('status').filter({ hasText: 'the download link is in your email' }).waitFor({
        timeout: 20_000,
      });
      const mail = await lastMail(server, user.email, 'harvest_ready');
      assert.match(mail.text, /\/v1\/harvests\/\d+\/download\?/);
      assert.equal(await section.getByRole('button', { name: 'Request my data' }).isDisabled(), true);
      await section.getByText(/^You can ask again after /).waitFor();
    });

    it('is in French, and says a verified address is needed first', async () => {
      const user = await registerUser(server);
      // The account's own language too, in case the client follows it over the browser's.
      const res = await request(server, 'PATCH', '/v1/users/@me/settings', {
        auth: user.token,
        body: { locale: 'fr' },
      });
      assert.equal(res.status, 200, res.text);
      const page = await openSettings(user, 'fr-FR');
      const section = page.getByRole('region', { name: 'Vos données' });
      await section.getByRole('status').filter({ hasText: 'Vous n’avez pas encore demandé vos données.' }).waitFor();
      await section.getByText('Vérifiez d’abord votre adresse e-mail', { exact: false }).first().waitFor();
      assert.equal(await section.getByRole('button', { name: 'Demander mes données' }).isDisabled(), true);
      await assertAccessible(page, 'settings in French');
    });
  });
}
