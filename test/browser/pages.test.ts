import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { setAcls } from '../support/admin.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
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

/** Every page once (axe-core, one <h1>), the locale switch, the reset flow, rate limits, and revocation. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/pages.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('every page is accessible (axe-core in Chromium)', () => {
    const signedOut: [string, string][] = [
      ['/login', 'Sign in to Hearth'],
      ['/register', 'Create your account'],
      ['/forgot', 'Reset your password'],
      ['/reset', 'Choose a new password'],
      ['/reset#token=not-a-real-token', 'Choose a new password'],
      ['/verify', 'Verify your email'],
      ['/verify#token=not-a-real-token', 'Verify your email'],
      ['/authorize-ip#token=not-a-real-token', 'Approve the new sign-in location'],
      ['/auth/email-revert#token=not-a-real-token', 'Undo the email change'],
      ['/auth/sso/callback?error=access_denied', 'Signing you in'],
      ['/oauth2/authorized', 'Authorised'],
      ['/no/such/page', 'Page not found'],
    ];
    for (const [path, title] of signedOut) {
      it(`${path} has one <h1> "${title}" and no serious violation`, async () => {
        const context = await newContext(browser);
        const page = await context.newPage();
        await page.goto(`${server.origin}${path}`);
        await h1(page, title);
        // Let the page settle into its final state (link checks, failures) before judging it.
        await page.waitForLoadState('networkidle');
        assert.equal(await page.locator('h1').count(), 1);
        assert.equal(await page.title(), `${title} · Hearth`);
        await assertAccessible(page, path);
        await context.close();
      });
    }

    it('sends a signed-out visitor of the consent page to sign in, then back to the consent page', async () => {
      const user = await registerUser(server);
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: user.token,
        body: { name: 'Calendar', redirect_uris: ['https://calendar.example/cb'] },
      });
      const context = await newContext(browser);
      const page = await context.newPage();
      const query = `client_id=${app.body.id}&scope=identify&redirect_uri=${encodeURIComponent('https://calendar.example/cb')}`;
      await page.goto(`${server.origin}/oauth2/authorize?${query}`);
      await h1(page, 'Sign in to Hearth');
      await fillSignIn(page, user);
      await h1(page, 'Calendar wants to access your account');
      assert.equal(new URL(page.url()).search, `?${query}`);
      await context.close();
    });

    it('OpenID prompt=login: the consent page names the scopes, sends a stale sign-in to log in again, then returns the code', async () => {
      const user = await registerUser(server);
      const redirect = `${server.origin}/oauth2/authorized`;
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: user.token,
        body: { name: 'Planner', redirect_uris: [redirect] },
      });
      assert.equal(app.status, 200, app.text);
      const context = await newContext(browser);
      const page = await context.newPage();
      try {
        await submitSignIn(page, server.origin, user);
        await atChatHome(page, user.username);
        // Two minutes later the tab's sign-in is too old for prompt=login.
        const shifted = await request(server, 'POST', '/v1/test/clock', {
          harness: true,
          body: { offset_ms: 120_000 },
        });
        assert.equal(shifted.status, 200);
        const query = new URLSearchParams({
          client_id: app.body.id,
          scope: 'openid profile',
          redirect_uri: redirect,
          response_type: 'code',
          prompt: 'login',
          nonce: 'browser-nonce',
        });
        await page.goto(`${server.origin}/v1/oauth2/authorize?${query}`);
        await h1(page, 'Planner wants to access your account');
        await page.getByText('Confirm who you are (your account id)').waitFor();
        await page.getByText('Know your username and display name').waitFor();
        await assertAccessible(page, 'OpenID consent page');
        await page.getByRole('button', { name: 'Authorise' }).click();

        await h1(page, 'Sign in to Hearth');
        await fillSignIn(page, user);
        await h1(page, 'Planner wants to access your account');
        assert.equal(new URL(page.url()).searchParams.get('prompt'), 'login');
        await page.getByRole('button', { name: 'Authorise' }).click();
        await h1(page, 'Authorised');
        const code = new URL(page.url()).searchParams.get('code');
        assert.ok(code);
        const tokens = await request(server, 'POST', '/v1/oauth2/token', {
          raw: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: redirect,
            client_id: app.body.id,
            client_secret: app.body.client_secret,
          }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.equal(tokens.status, 200, tokens.text);
        const claims = JSON.parse(Buffer.from(tokens.body.id_token.split('.')[1], 'base64url').toString('utf8'));
        assert.equal(claims.sub, user.id);
        assert.equal(claims.nonce, 'browser-nonce');
        assert.equal(claims.preferred_username, user.username);
        // The second sign-in, on the shifted clock.
        assert.ok(claims.auth_time >= Math.floor((Date.now() + 120_000) / 1000) - 60, `auth_time ${claims.auth_time}`);
      } finally {
        await request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 0 } });
        await context.close();
      }
    });
  });

  describe('locales', () => {
    it('follows the browser language, switches with the picker and remembers the choice', async () => {
      const context = await newContext(browser, { locale: 'fr-FR' });
      const page = await context.newPage();
      await page.goto(`${server.origin}/login`);
      await h1(page, 'Connexion à Hearth');
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'fr');
      await page.getByLabel('Adresse e-mail').waitFor();
      await assertAccessible(page, 'sign-in page in French');

      await page.getByLabel('Langue').selectOption('en');
      await h1(page, 'Sign in to Hearth');
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
      await page.reload();
      await h1(page, 'Sign in to Hearth');

      await page.getByLabel('Language').selectOption('fr');
      await h1(page, 'Connexion à Hearth');
      // Errors, plurals and dates follow the locale too.
      await page.getByLabel('Adresse e-mail').fill('nobody@example.test');
      await page.getByLabel('Mot de passe', { exact: true }).fill('wrong-password');
      await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'L’adresse e-mail ou le mot de passe est incorrect.' }).waitFor();

      const user = await registerUser(server, { username: 'marie' });
      await page.getByLabel('Adresse e-mail').fill(user.email);
      await page.getByLabel('Mot de passe', { exact: true }).fill(user.password);
      await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
      await h1(page, 'Amis');
      assert.equal(new URL(page.url()).pathname, '/channels/@me');
      await page.getByRole('navigation', { name: 'Messages privés' }).getByText('marie').first().waitFor();
      await assertAccessible(page, 'the chat in French');
      await page.getByRole('link', { name: 'Paramètres utilisateur', exact: true }).click();
      await h1(page, 'Paramètres');
      await page.getByText(/^\d+ sessions actives$/).waitFor();
      const year = new Date().getFullYear();
      await page.getByText(new RegExp(`^Membre depuis le \\d{1,2} \\p{L}+ ${year}$`, 'u')).waitFor();
      await page
        .getByRole('region', { name: 'Votre compte' })
        .getByText('La double authentification est désactivée.')
        .waitFor();
      await assertAccessible(page, 'settings in French');
      await context.close();
    });

    it('uses the account locale over the browser language when no choice was made here', async () => {
      const user = await registerUser(server);
      await server.app.services.db.query(`UPDATE users SET locale = 'fr' WHERE id = $1`, [user.id]);
      const context = await newContext(browser, { locale: 'en-US' });
      const page = await context.newPage();
      await submitSignIn(page, server.origin, user);
      await h1(page, 'Amis');
      assert.equal(new URL(page.url()).pathname, '/channels/@me');
      await context.close();
    });
  });

  describe('password reset', () => {
    it('mails a link, sets the new password on the page the link opens, and signs in', async () => {
      const user = await registerUser(server);
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/login`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await h1(page, 'Reset your password');
      await page.getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await h1(page, 'Check your email');
      await assertAccessible(page, 'reset link sent');

      const link = mailLink(await lastMail(server, user.email, 'password_reset'), server.origin, '/reset');
      await page.goto(link);
      await h1(page, 'Choose a new password');
      await page.getByLabel('New password').fill('the-new-password-1');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Your password was changed and every other session was signed out.').waitFor();
      await assertAccessible(page, 'reset done');
      const old = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(old.status, 401);
      const login = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: 'the-new-password-1' },
      });
      assert.equal(login.status, 200);
      await context.close();
    });
  });

  describe('email revert', () => {
    it('restores the old address from the link sent to it, with a new password, and signs in', async () => {
      const user = await registerUser(server);
      const verifyToken = (await lastMail(server, user.email, 'email_verification')).metadata.token;
      assert.equal((await request(server, 'POST', '/v1/auth/verify', { body: { token: verifyToken } })).status, 204);
      const step = (name: string, body: Record<string, unknown> = {}) =>
        request(server, 'POST', `/v1/users/@me/email-change/${name}`, {
          auth: user.token,
          body: { password: user.password, ...body },
        });
      const start = await step('start');
      assert.equal(start.status, 200, start.text);
      const ticket = start.body.ticket;
      const code = (await lastMail(server, user.email, 'email_change_original')).metadata.code;
      const proof = (await step('verify-original', { ticket, code })).body.original_proof;
      const newEmail = `moved.${Date.now()}@example.test`;
      assert.equal((await step('request-new', { ticket, new_email: newEmail, original_proof: proof })).status, 200);
      const newCode = (await lastMail(server, newEmail, 'email_change_new')).metadata.code;
      const done = await step('verify-new', { ticket, code: newCode, original_proof: proof });
      const patched = await request(server, 'PATCH', '/v1/users/@me', {
        auth: user.token,
        body: { email_token: done.body.email_token, password: user.password },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.email, newEmail);

      const link = mailLink(
        await lastMail(server, user.email, 'email_change_revert'),
        server.origin,
        '/auth/email-revert',
      );
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(link);
      await h1(page, 'Undo the email change');
      await page.getByLabel('New password').fill('reverted-password-1');
      await page.getByRole('button', { name: 'Restore my email and secure my account' }).click();
      await page
        .getByText('Your old email address is restored and your account is secured. You are signed in.')
        .waitFor();
      await assertAccessible(page, 'email revert done');
      await page.getByRole('link', { name: 'Go to your conversations' }).click();
      await atChatHome(page, user.username);
      await page.getByRole('link', { name: 'User settings', exact: true }).click();
      await h1(page, 'Settings');
      await page.getByRole('region', { name: 'Your account' }).getByText(`${user.email} · verified`).waitFor();
      await context.close();
    });
  });

  describe('rate limits', () => {
    it('shows RATE_LIMITED as a countdown', async () => {
      const strict = await newContext(browser);
      await strict.setExtraHTTPHeaders({ 'X-Test-Strict': 'true', 'X-Forwarded-For': '198.51.100.23' });
      const page = await strict.newPage();
      await page.goto(`${server.origin}/forgot`);
      // forgot: 5 per 60 s per IP; the sixth answers 429.
      for (let attempt = 0; attempt < 6; attempt++) {
        await page.getByLabel('Email').fill(`limit${attempt}@example.test`);
        await page.getByRole('button', { name: 'Send the link' }).click();
        const outcome = await Promise.race([
          page
            .getByRole('heading', { level: 1, name: 'Check your email' })
            .waitFor()
            .then(() => 'sent'),
          page
            .getByTestId('rate-limit')
            .waitFor()
            .then(() => 'limited'),
        ]);
        if (outcome === 'limited') break;
        await page.goto(`${server.origin}/forgot`);
      }
      const countdown = page.getByTestId('rate-limit');
      await countdown.waitFor();
      assert.match((await countdown.textContent()) ?? '', /^Too many attempts\. Try again in \d+ seconds?\.$/);
      assert.equal(await countdown.getAttribute('role'), 'alert');
      await assertAccessible(page, 'rate-limited form');
      await strict.close();
    });
  });

  describe('suspicious activity', () => {
    it('tells a flagged account what to do instead of showing its pages', async () => {
      const user = await registerUser(server, { username: 'flagged_one' });
      const flagged = await request(server, 'POST', `/v1/test/users/${user.id}/security-flags`, {
        harness: true,
        body: { suspicious_activity_flags: 1 },
      });
      assert.equal(flagged.status, 200, flagged.text);
      const context = await newContext(browser);
      const page = await context.newPage();
      await submitSignIn(page, server.origin, user);
      await h1(page, 'Your account needs attention');
      await assertAccessible(page, 'suspicious-activity page');
      await page.getByRole('button', { name: 'Send a new verification email' }).click();
      await page.getByText('We sent a new verification email.').waitFor();
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await h1(page, 'Sign in to Hearth');
      await context.close();
    });
  });

  describe('revocation', () => {
    it('signs the open tab out when an administrator disables the account', async () => {
      const user = await registerUser(server, { username: 'to_be_disabled' });
      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['admin:authenticate', 'user:update:flags']);
      const context = await newContext(browser);
      const page = await context.newPage();
      await submitSignIn(page, server.origin, user);
      await atChatHome(page, 'to_be_disabled');
      // Give the gateway connection time to identify before the account goes away.
      await page.waitForTimeout(500);
      const disabled = await request(server, 'POST', '/v1/admin/users/update-flags', {
        auth: admin.token,
        body: { user_id: user.id, add_flags: String(1n << 38n) },
      });
      assert.equal(disabled.status, 200, disabled.text);
      await h1(page, 'Sign in to Hearth');
      assert.equal(await page.evaluate(() => window.localStorage.getItem('hearth.session')), null);
      await context.close();
    });
  });
}
