import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { request, type TestUser } from '../support/client.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import type { TestServer } from '../support/server.ts';
import { adminSession, configureSso } from '../support/sso.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  newContext,
  serverAndChromium,
  signedInPage,
  warnNoChromium,
} from './support/browser.ts';

/** Single sign-on in the browser against a real OpenID provider (oidc-provider on loopback). */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/sso.test.ts');
} else {
  const CLIENT_SECRET = 'browser-sso-client-secret-0123456789';
  let server: TestServer & { origin: string };
  let browser: Browser;
  let idp: TestIdp;
  let admin: TestUser;

  const sso = (patch: Record<string, unknown>) =>
    configureSso(server, admin, {
      enabled: true,
      display_name: 'Example ID',
      issuer: idp.issuer,
      client_id: 'hearth',
      client_secret: CLIENT_SECRET,
      allow_private_issuer: true,
      auto_provision: true,
      ...patch,
    });

  /**
   * The provider's login screen, played by the test: when the browser reaches the provider's interaction
   * page, sign in there as `subject` (the provider's cookies are the browser's own).
   */
  async function signInAtProvider(page: Page, subject: string) {
    await page.waitForURL((url) => url.origin === idp.issuer && /^\/interaction\/[^/]+$/.test(url.pathname));
    await page.goto(`${page.url()}/login?account=${encodeURIComponent(subject)}`);
  }

  serverAndChromium(async (started) => {
    ({ server, browser } = started);
    const redirectUri = `${server.origin}/auth/sso/callback`;
    idp = await startTestIdp(
      [{ client_id: 'hearth', client_secret: CLIENT_SECRET, redirect_uris: [redirectUri] }],
      redirectUri,
    );
    idp.accounts.set('alice', {
      email: 'alice.sso@example.test',
      email_verified: true,
      name: 'Alice Liddell',
      preferred_username: 'alice',
    });
    admin = await adminSession(server);
  });
  after(async () => {
    await idp?.close();
  });

  describe('single sign-on (Chromium)', () => {
    it('offers SSO next to the password form and signs in through the provider', async () => {
      await sso({ enforced: false });
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/login`);
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await page.getByLabel('Email').waitFor();
      await assertAccessible(page, 'sign-in page with SSO');
      await page.getByRole('button', { name: 'Sign in with Example ID' }).click();
      await signInAtProvider(page, 'alice');
      // No `?next=`: the sign-in lands in the chat.
      await page.getByRole('heading', { level: 1, name: 'Friends' }).waitFor({ timeout: 15_000 });
      assert.equal(new URL(page.url()).pathname, '/channels/@me');
      assert.equal(new URL(page.url()).search, '', 'the single-use code and state leave the address bar');
      await page.getByRole('link', { name: 'User settings', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      await page.getByRole('region', { name: 'Your account' }).getByText('alice.sso@example.test').waitFor();
      await context.close();
    });

    it('tests the connection to the provider from the admin panel before anything is saved', async () => {
      await sso({ enabled: false, issuer: null, client_id: null });
      const { context, page } = await signedInPage(browser, server.origin, admin);
      await page.goto(`${server.origin}/admin/settings`);
      await page.getByRole('heading', { level: 1, name: 'Instance settings · Administration' }).waitFor();
      const test = page.getByRole('button', { name: 'Test the connection' });
      await test.click();
      await page
        .getByRole('status')
        .filter({ hasText: 'The test failed while reading the settings: no issuer is set.' })
        .waitFor();
      await page.getByLabel('Issuer URL').fill(idp.issuer);
      await test.click();
      const answered = page.getByRole('status').filter({ hasText: /^The provider answered: sign-in goes to / });
      await answered.waitFor();
      assert.match(
        (await answered.textContent()) ?? '',
        new RegExp(`goes to ${idp.issuer}/\\S+, with \\d+ signing keys?\\.$`),
      );
      await assertAccessible(page, 'admin SSO connection test');
      const saved = await request(server, 'POST', '/v1/admin/instance-config/get', { auth: admin.token, body: {} });
      assert.equal(saved.body.sso.issuer, null, 'a test saves nothing');
      await context.close();
    });

    it('shows only SSO when it is enforced', async () => {
      await sso({ enforced: true });
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/login`);
      await page.getByText('This server signs people in through Example ID only.').waitFor();
      assert.equal(await page.getByLabel('Email').count(), 0);
      assert.equal(await page.getByLabel('Password', { exact: true }).count(), 0);
      await assertAccessible(page, 'SSO-only sign-in page');
      await page.getByRole('button', { name: 'Sign in with Example ID' }).click();
      await signInAtProvider(page, 'alice');
      await page.getByRole('heading', { level: 1, name: 'Friends' }).waitFor({ timeout: 15_000 });
      assert.equal(new URL(page.url()).pathname, '/channels/@me');
      await context.close();
      await sso({ enabled: false, enforced: false });
    });
  });
}
