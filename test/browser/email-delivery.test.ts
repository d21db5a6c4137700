import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { setAcls } from '../support/admin.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { freePort } from '../support/spawn.ts';
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
 * With the SMTP server down (docs/deployment.md#email-delivery): a person who asked for an email is told it
 * may not arrive, instead of only "check your email", and the administrator sees since when and why.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/email-delivery.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  // Nothing listens on this port: every delivery is refused at connect.
  const deadSmtp = `smtp://127.0.0.1:${await freePort()}`;
  serverAndChromium((started) => ({ server, browser } = started), { env: { SMTP_URL: deadSmtp } });

  const failing =
    'This server cannot send email right now, so the email may not arrive. Try again later, or tell the server’s administrator.';

  describe('email delivery failing', () => {
    it('tells the person who asked for a reset link, and the administrator', async () => {
      const user = await registerUser(server);
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/forgot`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await h1(page, 'Check your email');
      await page.getByRole('alert').filter({ hasText: failing }).waitFor();
      await assertAccessible(page, 'reset link asked while email is failing');
      await context.close();

      const discovery = await request(server, 'GET', '/.well-known/service');
      assert.equal(discovery.body.features.email_delivery, 'failing');

      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['*']);
      const signedIn = await signedInPage(browser, server.origin, admin);
      await signedIn.page.goto(`${server.origin}/admin`);
      await signedIn.page.getByRole('link', { name: 'Instance settings' }).click();
      await h1(signedIn.page, 'Instance settings · Administration');
      const status = signedIn.page.getByRole('alert').filter({ hasText: /^Failing since .+: .*ECONNREFUSED/ });
      await status.waitFor();
      await assertAccessible(signedIn.page, 'admin instance settings with failing email');
      await signedIn.context.close();
    });
  });
}
