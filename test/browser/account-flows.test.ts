import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import { totpCode } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import {
  addVirtualAuthenticator,
  assertAccessible,
  atChatHome,
  CHROMIUM_PATH,
  fillSignIn,
  h1,
  lastMail,
  mailLink,
  newContext,
  serverAndChromium,
  submitSignIn,
  warnNoChromium,
} from './support/browser.ts';

/**
 * One person's whole life in the browser, step by step in one Chromium context: register, verify the email
 * from the captured message, sign in, TOTP, backup code, passkeys (Chromium's virtual authenticator), a
 * sudo-gated change through the prompt, OAuth2 consent to a client's redirect URI and a bot install.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/account-flows.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = `flow.${Date.now()}@example.test`;
  const username = `flow_${Date.now().toString(36)}`;
  const password = 'a-long-browser-password';
  let totpSecret = '';
  let backupCodes: string[] = [];

  const heading = (name: string) => h1(page, name);
  const inChat = () => atChatHome(page, 'Flow Tester');
  const settings = async () => {
    await page.goto(`${server.origin}/settings`);
    await heading('Settings');
  };
  const unverifiedBanner = () => page.getByRole('region', { name: 'Your email address is not verified yet.' });
  const storedToken = async () =>
    JSON.parse((await page.evaluate(() => window.localStorage.getItem('hearth.session'))) ?? '{}').token as string;

  async function signOut() {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await heading('Sign in to Hearth');
  }

  serverAndChromium(async (started) => {
    ({ server, browser } = started);
    context = await newContext(browser);
    page = await context.newPage();
  });

  describe('an account from registration to OAuth2 consent (Chromium)', () => {
    it('registers through the form', async () => {
      await page.goto(`${server.origin}/register`);
      await heading('Create your account');
      await assertAccessible(page, 'register page');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Display name (optional)').fill('Flow Tester');
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('I agree to the terms of service and privacy policy').check();
      await page.getByRole('button', { name: 'Create account' }).click();
      await inChat();
      await unverifiedBanner()
        .getByText(`Your email address ${email} is not verified yet. Check your inbox for the link.`)
        .waitFor();
      await assertAccessible(page, 'the chat with the unverified-email banner');
    });

    it('follows the banner to the settings, sends the verification email again, and dismisses the banner', async () => {
      await unverifiedBanner().getByRole('link', { name: 'Verify your email address' }).click();
      await heading('Settings');
      assert.equal(new URL(page.url()).hash, '#account-heading');
      const account = page.getByRole('region', { name: 'Your account' });
      assert.equal(
        await page.evaluate(() => document.activeElement?.textContent),
        'Your account',
        'the linked section has the focus',
      );
      await account.getByText('Your email address is not verified yet.').waitFor();
      await account.getByText(email, { exact: true }).waitFor();
      await assertAccessible(page, 'settings with an unverified email');
      await account.getByRole('button', { name: 'Send the verification email again' }).click();
      await account.getByText('We sent a new verification email.').waitFor();

      await page.goBack();
      await inChat();
      await unverifiedBanner().getByRole('button', { name: 'Hide the email reminder' }).click();
      await unverifiedBanner().waitFor({ state: 'detached' });
      await page.reload();
      await inChat();
      assert.equal(await unverifiedBanner().count(), 0, "dismissed for the rest of the tab's session");
    });

    it('verifies the email from the link in the captured message', async () => {
      const link = mailLink(await lastMail(server, email, 'email_verification'), server.origin, '/verify');
      await page.goto(link);
      await heading('Verify your email');
      await page.getByRole('status').filter({ hasText: 'Your email address is verified. Thank you!' }).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
      await assertAccessible(page, 'verify page');
      // The same link a second time (a fresh page load, as from the mail client) says it is used up.
      await page.goto('about:blank');
      await page.goto(link);
      await page.getByRole('alert').filter({ hasText: 'This verification link is invalid or has expired.' }).waitFor();
      await page.goto(`${server.origin}/`);
      await inChat();
      assert.equal(await unverifiedBanner().count(), 0);
      await settings();
      const account = page.getByRole('region', { name: 'Your account' });
      await account.getByText(`${email} · verified`, { exact: true }).waitFor();
      assert.equal(await account.getByText('Your email address is not verified yet.').count(), 0);
    });

    it('signs out from the settings and back in there, then from the chat and back into it', async () => {
      // Signed out on a signed-in page, the sign-in page remembers it (`?next=`) and signing in returns there.
      await signOut();
      assert.equal(new URL(page.url()).search, `?next=${encodeURIComponent('/settings')}`);
      await fillSignIn(page, { email, password });
      await heading('Settings');
      assert.equal(new URL(page.url()).pathname, '/settings');
      await page.goto(`${server.origin}/`);
      await inChat();
      await signOut();
      assert.equal(new URL(page.url()).search, `?next=${encodeURIComponent('/channels/@me')}`);
      await fillSignIn(page, { email, password });
      await inChat();
    });

    it('signs in with a TOTP code once TOTP is on', async () => {
      const token = await storedToken();
      const { enableTotp } = await import('../support/mfa.ts');
      ({ secret: totpSecret, backupCodes } = await enableTotp(server, token));
      await signOut();
      await fillSignIn(page, { email, password });
      await heading('Two-factor authentication');
      await assertAccessible(page, 'MFA step');
      await page.getByLabel('Code from your authenticator app').fill('000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('alert').filter({ hasText: 'This code is not right.' }).waitFor();
      await page.getByLabel('Code from your authenticator app').fill(totpCode(totpSecret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await inChat();
      await settings();
      await page.getByRole('region', { name: 'Your account' }).getByText('Two-factor authentication is on.').waitFor();
    });

    it('signs in with a backup code', async () => {
      await signOut();
      await fillSignIn(page, { email, password });
      await heading('Two-factor authentication');
      await page.getByRole('button', { name: 'Use a backup code' }).click();
      await page.getByLabel('Backup code').fill(backupCodes[0] as string);
      await page.getByRole('button', { name: 'Verify' }).click();
      await heading('Settings');
    });

    it('adds a passkey through the sudo prompt and signs in with it', async () => {
      await settings();
      await addVirtualAuthenticator(page);
      await page.getByText('You have 0 passkeys.').waitFor();
      await page.getByLabel('Name for a new passkey').fill('Test laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.waitFor();
      await assertAccessible(page, 'sudo prompt');
      await dialog.getByLabel('Authenticator or backup code').fill(totpCode(totpSecret));
      await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
      await page.getByText('The passkey was added. You can now sign in with it.').waitFor();
      await page.getByText('You have 1 passkey.').waitFor();

      // Discoverable sign-in: no email, no password.
      await signOut();
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await heading('Settings');

      // The passkey as the second factor after the password.
      await signOut();
      await fillSignIn(page, { email, password });
      await heading('Two-factor authentication');
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.getByRole('button', { name: 'Use my passkey' }).click();
      await heading('Settings');
    });

    it('signs out every other session through the sudo prompt', async () => {
      const other = await request(server, 'POST', '/v1/auth/login', { body: { email, password } });
      assert.equal(other.status, 200);
      const ticket = other.body.ticket as string;
      const second = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
        body: { ticket, code: backupCodes[1] },
      });
      assert.equal(second.status, 200);
      await settings();
      await page.getByText(/\d+ active sessions/).waitFor();

      await page.getByRole('button', { name: 'Sign out every other session' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByLabel('Authenticator or backup code').fill('999999');
      await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
      await dialog.getByRole('alert').filter({ hasText: 'This code is not right.' }).waitFor();
      await dialog.getByLabel('Authenticator or backup code').fill(totpCode(totpSecret));
      await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
      await page.getByText('Every other session was signed out.').waitFor();
      await page.getByText('1 active session', { exact: true }).waitFor();
      const revoked = await request(server, 'GET', '/v1/users/@me', { auth: second.body.token });
      assert.equal(revoked.status, 401);
    });

    it('consents to an OAuth2 client and lands on its redirect URI with a code', async () => {
      const token = await storedToken();
      const redirectUri = 'http://127.0.0.1:9/callback';
      const created = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: token,
        body: { name: 'Photo Printer', redirect_uris: [redirectUri] },
      });
      assert.equal(created.status, 200, created.text);
      const clientId = created.body.id as string;
      await context.route(`${redirectUri}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<title>client</title><h1>client</h1>' }),
      );
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'identify email',
        state: 'st-123',
      });
      await page.goto(`${server.origin}/v1/oauth2/authorize?${query}`);
      await heading('Photo Printer wants to access your account');
      await page.getByText('Know your username, avatar and display name').waitFor();
      await page.getByText('Know your email address').waitFor();
      await assertAccessible(page, 'consent page');
      await page.getByRole('button', { name: 'Authorise' }).click();
      await page.waitForURL(`${redirectUri}?**`);
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('state'), 'st-123');
      const code = landed.searchParams.get('code');
      assert.match(code ?? '', /^[A-Za-z0-9_-]{43}$/);
      const exchanged = await fetch(`${server.url}/v1/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code as string,
          redirect_uri: redirectUri,
          client_id: clientId,
          client_secret: created.body.client_secret,
        }),
      });
      assert.equal(exchanged.status, 200);
      const me = await request(server, 'GET', '/v1/users/@me', {
        auth: `Bearer ${((await exchanged.json()) as { access_token: string }).access_token}`,
      });
      assert.equal(me.body.username, username);

      // Deny sends the refusal to the registered redirect URI.
      await page.goto(`${server.origin}/v1/oauth2/authorize?${query}`);
      await heading('Photo Printer wants to access your account');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.waitForURL(`${redirectUri}?**`);
      assert.equal(new URL(page.url()).searchParams.get('error'), 'access_denied');
    });

    it('adds a bot to a chosen community with the permissions listed', async () => {
      await page.goto(`${server.origin}/`);
      await inChat();
      const token = await storedToken();
      const guild = await request(server, 'POST', '/v1/guilds', { auth: token, body: { name: 'Book Club' } });
      assert.equal(guild.status, 200, guild.text);
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: token,
        body: { name: 'Helper Bot' },
      });
      const permissions = String((1n << 11n) | (1n << 6n)); // SEND_MESSAGES, ADD_REACTIONS
      await page.goto(
        `${server.origin}/v1/oauth2/authorize?${new URLSearchParams({ client_id: app.body.id, scope: 'bot', permissions })}`,
      );
      await heading('Helper Bot wants to access your account');
      await page.getByText('Send messages', { exact: true }).waitFor();
      await page.getByText('Add reactions', { exact: true }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Authorise' }).isDisabled(), true);
      await page.getByLabel('Add to community').selectOption({ label: 'Book Club' });
      await assertAccessible(page, 'bot consent page');
      await page.getByRole('button', { name: 'Authorise' }).click();
      await heading('Authorised');
      await assertAccessible(page, 'authorised page');
      const members = await request(server, 'GET', `/v1/guilds/${guild.body.id}/members/${app.body.id}`, {
        auth: token,
      });
      assert.equal(members.status, 200, members.text);
    });
  });

  describe('new-location approval (Chromium, two contexts)', () => {
    it('holds the sign-in from a new address until the emailed link is opened elsewhere, then continues by itself', async () => {
      const user = await registerUser(server, { username: 'far_away' });
      const away = await newContext(browser, { ip: '203.0.113.77' });
      const awayPage = await away.newPage();
      await submitSignIn(awayPage, server.origin, user);
      await awayPage.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
      await awayPage.getByText(`We sent a link to ${user.email}.`, { exact: false }).waitFor();
      await assertAccessible(awayPage, 'new-location waiting page');

      const link = mailLink(await lastMail(server, user.email, 'ip_authorization'), server.origin, '/authorize-ip');
      const home = await newContext(browser);
      const homePage = await home.newPage();
      await homePage.goto(link);
      await homePage.getByRole('heading', { level: 1, name: 'Approve the new sign-in location' }).waitFor();
      await homePage.getByRole('status').filter({ hasText: 'The new location is approved.' }).waitFor();
      await assertAccessible(homePage, 'authorize-ip page');

      await atChatHome(awayPage, 'far_away');
      await away.close();
      await home.close();
    });

    it('offers to send the email again once its cooldown has passed, and the new link works', async () => {
      const user = await registerUser(server, { username: 'resender' });
      const away = await newContext(browser, { ip: '203.0.113.78' });
      const page = await away.newPage();
      await page.clock.install();
      await submitSignIn(page, server.origin, user);
      await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
      const resend = page.getByRole('button', { name: 'Send the email again' });
      assert.equal(await resend.isDisabled(), true);
      await page.getByText(/^You can ask for another email in \d+ seconds\.$/).waitFor();
      const firstLink = mailLink(
        await lastMail(server, user.email, 'ip_authorization'),
        server.origin,
        '/authorize-ip',
      );

      // 31 s later for the page and for the server (the test clock moves every expiry and cooldown).
      const clock = await request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 31_000 } });
      assert.equal(clock.status, 200);
      try {
        await page.clock.fastForward(31_000);
        await page.getByRole('button', { name: 'Send the email again', disabled: false }).click();
        await page.getByText('We sent the email again.').waitFor();
        const secondLink = mailLink(
          await lastMail(server, user.email, 'ip_authorization'),
          server.origin,
          '/authorize-ip',
        );
        assert.notEqual(secondLink, firstLink);
        const home = await newContext(browser);
        const homePage = await home.newPage();
        await homePage.goto(secondLink);
        await homePage.getByRole('status').filter({ hasText: 'The new location is approved.' }).waitFor();
        await page.clock.fastForward(2_500);
        await atChatHome(page, 'resender');
        await home.close();
      } finally {
        await request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 0 } });
        await away.close();
      }
    });
  });
}
