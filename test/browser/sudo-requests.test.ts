import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { enableTotp, totpCode } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, serverAndChromium, signedInContext, warnNoChromium, watchConsole } from './support/browser.ts';

/**
 * The sudo prompt without a refused request when the client knows a proof is needed
 * (docs/mfa-and-sudo.md#sudo-mode): an account with a second factor and no proof is asked first (a refusal
 * would be a "Failed to load resource" in the console).
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

  const openApplication = async (user: TestUser) => {
    const created = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: user.token,
      body: { name: 'Sudo Bot' },
    });
    assert.equal(created.status, 200, created.text);
    const context = await signedInContext(browser, user);
    const page = await context.newPage();
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
  });
}
