import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createApplication } from '../support/applications.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { codeFrom, consent, exchangeCode, pkcePair } from '../support/oauth2.ts';
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
 * RP-initiated logout in Chromium (docs/oauth2.md#rp-initiated-logout): the end-session endpoint sends the
 * browser to the web app's sign-out page, which asks, ends the session and returns to the relying party.
 */
const REDIRECT = 'https://rp.example/callback';
const SIGNED_OUT = 'https://rp.example/signed-out';

if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/oidc-logout.test.ts');
} else {
  describe('RP-initiated logout in the browser', () => {
    let server: TestServer & { origin: string };
    let browser: Browser;
    serverAndChromium((started) => {
      ({ server, browser } = started);
    });

    /** A user, an application with two registered URIs, and an ID token of the user for it. */
    async function relyingParty(): Promise<{ user: TestUser; idToken: string }> {
      const owner = await registerUser(server);
      const user = await registerUser(server);
      const app = await createApplication(server, owner, { name: 'Logout RP', redirect_uris: [REDIRECT, SIGNED_OUT] });
      const pkce = pkcePair();
      const approved = await consent(server, user, {
        client_id: app.id,
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(approved.status, 200, approved.text);
      const tokens = await exchangeCode(server, app, codeFrom(approved), REDIRECT, { code_verifier: pkce.verifier });
      assert.equal(tokens.status, 200, tokens.text);
      return { user, idToken: tokens.body.id_token };
    }

    /** The relying party's pages answer locally: the test only needs to see the browser arrive. */
    async function fakeRelyingParty(page: Page): Promise<void> {
      await page.route('https://rp.example/**', (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<title>RP</title><h1>Back at the RP</h1>' }),
      );
    }

    const storedToken = (page: Page) =>
      page.evaluate(() => (JSON.parse(localStorage.getItem('hearth.session') ?? '{}') as { token?: string }).token);

    it('asks a signed-in user, ends the session on "Sign out" and returns to the registered URI with state', async () => {
      const { user, idToken } = await relyingParty();
      const { context, page } = await signedInPage(browser, server.origin, user);
      try {
        const token = await storedToken(page);
        assert.ok(token);
        await fakeRelyingParty(page);
        const query = new URLSearchParams({
          id_token_hint: idToken,
          post_logout_redirect_uri: SIGNED_OUT,
          state: 's-9',
        });
        await page.goto(`${server.origin}/v1/oauth2/logout?${query}`);
        await h1(page, 'Sign out of Hearth?');
        await page.getByText('An application you used asks to end your Hearth session in this browser.').waitFor();
        await assertAccessible(page, 'sign-out page');
        await page.getByRole('button', { name: 'Sign out', exact: true }).click();
        await page.waitForURL(`${SIGNED_OUT}?state=s-9`);
        await h1(page, 'Back at the RP');
        assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: token })).status, 401);
      } finally {
        await context.close();
      }
    });

    it('"Stay signed in" keeps the session; a signed-out browser is sent on without a question', async () => {
      const { user, idToken } = await relyingParty();
      const { context, page } = await signedInPage(browser, server.origin, user);
      try {
        const token = await storedToken(page);
        await page.goto(`${server.origin}/v1/oauth2/logout?${new URLSearchParams({ id_token_hint: idToken })}`);
        await h1(page, 'Sign out of Hearth?');
        await page.getByRole('button', { name: 'Stay signed in' }).click();
        await page.waitForURL(`${server.origin}/channels/@me`);
        await h1(page, 'Friends');
        assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: token as string })).status, 200);
      } finally {
        await context.close();
      }
      const anonymous = await newContext(browser);
      try {
        const page = await anonymous.newPage();
        await fakeRelyingParty(page);
        const query = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: REDIRECT, state: 'x' });
        await page.goto(`${server.origin}/v1/oauth2/logout?${query}`);
        await page.waitForURL(`${REDIRECT}?state=x`);
        // An unregistered URI never reaches the page: the endpoint answers 400 itself.
        const refused = await page.goto(
          `${server.origin}/v1/oauth2/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' })}`,
        );
        assert.equal(refused?.status(), 400);
        assert.equal(new URL(page.url()).pathname, '/v1/oauth2/logout');
      } finally {
        await anonymous.close();
      }
    });
  });
}
