import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { enableTotp, totpCode } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import {
  CHROMIUM_PATH,
  confirmWithPassword,
  serverAndChromium,
  signedInContext,
  signedInPage,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

/**
 * The sudo prompt without a refused request when the client knows a proof is needed
 * (docs/mfa-and-sudo.md#sudo-mode): an account with a second factor and no proof is asked first, and so is a
 * password-only account this browser saw sign in with its password (a refusal would be a "Failed to load
 * resource" in the console); one signed in elsewhere is refused once, then asked first.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/sudo-requests.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** The API answers of 403 the page received, by path. */
  const refusals = (page: Page): string[] => {
    const refused: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 403) refused.push(new URL(response.url()).pathname);
    });
    return refused;
  };

  /** The application page of a new application; `form`: signed in through the sign-in form, else by token. */
  const openApplication = async (user: TestUser, how: 'token' | 'form' = 'token') => {
    const created = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: user.token,
      body: { name: 'Sudo Bot' },
    });
    assert.equal(created.status, 200, created.text);
    const { context, page } =
      how === 'form'
        ? await signedInPage(browser, server.origin, user)
        : await signedInContext(browser, user).then(async (made) => ({ context: made, page: await made.newPage() }));
    const errors = watchConsole(page);
    const refused = refusals(page);
    await page.goto(`${server.origin}/developers/applications/${created.body.id}`);
    await page.getByRole('heading', { level: 1, name: 'Sudo Bot' }).waitFor();
    return { context, page, errors, refused };
  };

  describe('sudo prompt requests', () => {
    it('an account with an authenticator is asked first: no refused request, no console error', async () => {
      const user = await registerUser(server);
      const { secret } = await enableTotp(server, user.token);
      const { context, page, errors, refused } = await openApplication(user);

      await page.getByRole('button', { name: 'Reset bot token' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.waitFor();
      assert.equal(await dialog.getByLabel('Your password').count(), 0, 'a second-factor account: no password');
      await dialog.getByLabel('Authenticator or backup code').fill(totpCode(secret));
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByLabel('Bot token', { exact: true }).waitFor();

      // The proof minted then serves the next action: no prompt at all.
      await page.getByRole('button', { name: 'Reset client secret' }).click();
      await page.getByLabel('Client secret', { exact: true }).waitFor();
      assert.equal(await dialog.count(), 0);
      assert.deepEqual(refused, []);
      assert.deepEqual(errors, []);
      await context.close();
    });

    it('a password-only account signed in here is asked for its password first, every time', async () => {
      const user = await registerUser(server);
      const { context, page, errors, refused } = await openApplication(user, 'form');
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });

      await page.getByRole('button', { name: 'Reset bot token' }).click();
      await dialog.getByLabel('Your password').waitFor();
      assert.equal(await dialog.getByLabel('Authenticator or backup code').count(), 0);
      await confirmWithPassword(page, user.password);
      await page.getByLabel('Bot token', { exact: true }).waitFor();
      // No proof lasts for a password account: the next action asks again, before its request too.
      await page.getByRole('button', { name: 'Reset client secret' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByLabel('Client secret', { exact: true }).waitFor();
      assert.deepEqual(refused, []);
      assert.deepEqual(errors, []);
      await context.close();
    });

    it('a password-only account signed in elsewhere is refused once, then asked first', async () => {
      const user = await registerUser(server);
      const { context, page, errors, refused } = await openApplication(user);
      const reset = (name: string) => page.getByRole('button', { name }).click();
      await reset('Reset bot token');
      await confirmWithPassword(page, user.password);
      await page.getByLabel('Bot token', { exact: true }).waitFor();
      assert.equal(refused.length, 1, 'the first action learns from the refusal that the account has a password');
      await reset('Reset client secret');
      await confirmWithPassword(page, user.password);
      await page.getByLabel('Client secret', { exact: true }).waitFor();
      assert.equal(refused.length, 1);
      // The refusal is the console's one line.
      assert.equal(errors.length, 1);
      assert.match(errors[0] ?? '', /403/);
      await context.close();
    });
  });
}
