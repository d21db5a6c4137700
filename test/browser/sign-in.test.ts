import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  atChatHome,
  CHROMIUM_PATH,
  h1,
  newContext,
  serverAndChromium,
  submitSignIn,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/sign-in.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('sign in with email and password (Chromium)', () => {
    it('sends a signed-out visitor from / to the sign-in page, signs in into the chat, and signs out', async () => {
      const user = await registerUser(server, { username: 'ada_browser' });
      const context = await newContext(browser);
      const page = await context.newPage();
      const errors = watchConsole(page);
      await page.goto(`${server.origin}/`);
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/login');
      await assertAccessible(page, 'sign-in page');

      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(`${user.password}-wrong`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'The email or password is not right.' }).waitFor();
      await assertAccessible(page, 'sign-in page with an error');

      await page.getByLabel('Password', { exact: true }).fill(user.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await atChatHome(page, 'ada_browser');
      await assertAccessible(page, 'the chat, where signing in leads');
      const stored = await page.evaluate(() => window.localStorage.getItem('hearth.session'));
      assert.match(stored ?? '', /"token":"flx_[A-Za-z0-9]{36}"/);

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      assert.equal(await page.evaluate(() => window.localStorage.getItem('hearth.session')), null);
      // Expected API answers (the 400 of the wrong password) are logged as failed loads; nothing else may be.
      assert.deepEqual(
        errors.filter((e) => !e.startsWith('Failed to load resource')),
        [],
      );
      await context.close();
    });

    it('shares the sign-in between tabs and signs every tab out together', async () => {
      const user = await registerUser(server, { username: 'two_tabs' });
      const context = await newContext(browser);
      const first = await context.newPage();
      await submitSignIn(first, server.origin, user);
      await atChatHome(first, 'two_tabs');
      const second = await context.newPage();
      await second.goto(`${server.origin}/settings`);
      await h1(second, 'Settings');
      // Signed in, `/` opens the chat in place of itself: Back returns to the page before, not to `/`.
      await second.goto(`${server.origin}/`);
      await atChatHome(second, 'two_tabs');
      await second.goBack();
      await h1(second, 'Settings');

      await first.getByRole('button', { name: 'Sign out', exact: true }).click();
      await first.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await second.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await context.close();
    });

    it('signs out when the session is revoked elsewhere and the next API call is refused', async () => {
      const user = await registerUser(server, { username: 'revoked_tab' });
      const context = await newContext(browser);
      await context.routeWebSocket(/\/gateway/, (socket) => socket.close());
      const page = await context.newPage();
      await submitSignIn(page, server.origin, user);
      // Without a gateway the chat waits to connect; the settings page works over HTTP alone.
      await page.waitForURL((url) => url.pathname === '/channels/@me');
      await page.getByRole('status').filter({ hasText: 'Connecting…' }).waitFor();
      await page.goto(`${server.origin}/settings`);
      await h1(page, 'Settings');
      const token = JSON.parse(
        (await page.evaluate(() => window.localStorage.getItem('hearth.session'))) ?? '{}',
      ).token;
      // The session is revoked over the API; only the HTTP path (no gateway socket here) can notice.
      const logout = await request(server, 'POST', '/v1/auth/logout', { auth: token });
      assert.equal(logout.status, 204);
      await page.getByLabel('Name for a new passkey').waitFor();
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      // Signed in here with its password, the account is asked for it before the request, which then goes out.
      const prompt = page.getByRole('dialog', { name: 'Confirm it is you' });
      await prompt.getByLabel('Your password').fill(user.password);
      await prompt.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await context.close();
    });

    it('keeps the session when the server cannot be reached, and recovers on retry', async () => {
      const user = await registerUser(server, { username: 'patient' });
      const context = await newContext(browser);
      const page = await context.newPage();
      await submitSignIn(page, server.origin, user);
      await atChatHome(page, 'patient');
      await context.route('**/v1/users/@me', (route) => route.abort('connectionrefused'));
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Hearth is not answering' }).waitFor();
      await page
        .getByRole('alert')
        .filter({ hasText: 'The server could not be reached. Check your connection and try again.' })
        .waitFor();
      await assertAccessible(page, 'server unreachable page');
      assert.notEqual(await page.evaluate(() => window.localStorage.getItem('hearth.session')), null);
      await context.unroute('**/v1/users/@me');
      await page.getByRole('button', { name: 'Try again' }).click();
      await atChatHome(page, 'patient');
      await context.close();
    });

    it('is usable from the keyboard alone', async () => {
      const user = await registerUser(server);
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/login`);
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await page.keyboard.press('Tab'); // skip link
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'email');
      await page.keyboard.type(user.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(user.password);
      await page.keyboard.press('Enter');
      await atChatHome(page, user.username);
      await context.close();
    });
  });
}

if (CHROMIUM_PATH) {
  describe('API on another origin (Chromium)', () => {
    let server: TestServer & { origin: string };
    let browser: Browser;
    serverAndChromium((started) => ({ server, browser } = started), { apiHost: '127.0.0.1' });

    it('finds the API and the gateway through discovery, not on its own origin', async () => {
      const user = await registerUser(server, { username: 'elsewhere' });
      const context = await newContext(browser);
      const page = await context.newPage();
      const apiCalls: string[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname.startsWith('/v1/') || url.pathname === '/gateway') apiCalls.push(url.origin);
      });
      const sockets: string[] = [];
      page.on('websocket', (socket) => sockets.push(new URL(socket.url()).origin));
      await submitSignIn(page, server.origin, user);
      await atChatHome(page, 'elsewhere');
      await page.waitForLoadState('networkidle');
      const apiOrigin = server.origin.replace('localhost', '127.0.0.1');
      assert.ok(apiCalls.length >= 3, `API calls seen: ${apiCalls.length}`);
      assert.deepEqual([...new Set(apiCalls)], [apiOrigin]);
      assert.deepEqual([...new Set(sockets)], [apiOrigin.replace('http', 'ws')]);
      await context.close();
    });
  });
}
