import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  confirmWithPassword,
  imageLoaded,
  serverAndChromium,
  signedInPage,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

/**
 * The developer portal in Chromium: create an application, add a redirect URI, reset the client secret and
 * see it once, reset the bot token and copy it (then prove it against the API), edit the bot profile, build
 * an invite link and follow it to the consent page, delete the application through the sudo prompt.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/developers.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));
  const signedIn = (user: TestUser) => signedInPage(browser, server.origin, user, { clipboard: true });

  const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

  describe('developer portal', () => {
    it('creates an application, manages its redirect URIs, secret, bot and invite link', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedIn(user);
      const errors = watchConsole(page);

      await page.goto(`${server.origin}/developers`);
      await page.getByRole('heading', { level: 1, name: 'Developer portal' }).waitFor();
      await page.getByText('You have no applications yet.').waitFor();
      await assertAccessible(page, 'developer portal');

      // Create: the page of the new application shows the client secret and the bot token once.
      await page.getByLabel('Application name').fill('Weather Bot');
      await page.getByRole('button', { name: 'Create application' }).click();
      await page.getByRole('heading', { level: 1, name: 'Weather Bot' }).waitFor();
      const appId = new URL(page.url()).pathname.split('/').at(-1) as string;
      assert.match(appId, /^\d+$/);
      const firstSecret = await page.getByLabel('Client secret', { exact: true }).inputValue();
      const firstToken = await page.getByLabel('Bot token', { exact: true }).inputValue();
      assert.ok(firstSecret.length >= 20, firstSecret);
      assert.ok(firstToken.length >= 20, firstToken);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${firstToken}` })).status, 200);
      await assertAccessible(page, 'application page');

      // Reopened, the page shows no secret any more.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Weather Bot' }).waitFor();
      await page.getByRole('button', { name: 'Reset client secret' }).waitFor();
      assert.equal(await page.getByLabel('Client secret', { exact: true }).count(), 0);
      assert.equal(await page.getByLabel('Bot token', { exact: true }).count(), 0);

      // Redirect URIs: add two, remove one; the server keeps what the page shows.
      await page.getByText('No redirect URI yet.').waitFor();
      await page.getByLabel('New redirect URI').fill('https://weather.example/callback');
      await page.getByRole('button', { name: 'Add redirect URI' }).click();
      await page.getByRole('button', { name: 'Remove https://weather.example/callback' }).waitFor();
      await page.getByLabel('New redirect URI').fill('http://127.0.0.1:9999/cb');
      await page.getByRole('button', { name: 'Add redirect URI' }).click();
      await page.getByRole('button', { name: 'Remove http://127.0.0.1:9999/cb' }).click();
      await page.getByRole('button', { name: 'Remove http://127.0.0.1:9999/cb' }).waitFor({ state: 'detached' });
      // A plain-http URI off this computer is refused, said at the field.
      await page.getByLabel('New redirect URI').fill('http://weather.example/cb');
      await page.getByRole('button', { name: 'Add redirect URI' }).click();
      await page.getByText('Use an https address, or http on this computer (localhost, 127.0.0.1 or [::1]).').waitFor();
      assert.equal(await page.getByLabel('New redirect URI').getAttribute('aria-invalid'), 'true');
      let stored = await request(server, 'GET', `/v1/oauth2/applications/${appId}`, { auth: user.token });
      assert.deepEqual(stored.body.redirect_uris, ['https://weather.example/callback']);

      // Public client: the box saves public_client, and the token endpoint then takes the client id alone.
      const publicBox = page.getByLabel('Public client (no client secret; PKCE required)');
      assert.equal(await publicBox.isChecked(), false);
      await publicBox.check();
      const publicState = async () =>
        (await request(server, 'GET', `/v1/oauth2/applications/${appId}`, { auth: user.token })).body.public_client;
      for (let tries = 0; (await publicState()) !== true; tries++) {
        assert.ok(tries < 50, 'public_client was not saved');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const noSecret = await fetch(`${server.url}/v1/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'unknown', client_id: appId }),
      });
      assert.equal(noSecret.status, 400, 'authenticated as a public client, then the unknown refresh token');
      assert.equal((await noSecret.json()).error, 'invalid_grant');
      await assertAccessible(page, 'public client setting');
      await publicBox.uncheck();
      for (let tries = 0; (await publicState()) !== false; tries++) {
        assert.ok(tries < 50, 'public_client was not cleared');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // Client secret reset through the sudo prompt: shown once, and it is the one the token endpoint accepts.
      await page.getByRole('button', { name: 'Reset client secret' }).click();
      await confirmWithPassword(page, user.password);
      const secret = await page.getByLabel('Client secret', { exact: true }).inputValue();
      assert.notEqual(secret, firstSecret);
      await page.getByText('Copy it now: it will not be shown again.').first().waitFor();
      await page.getByRole('button', { name: 'Copy client secret' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await clipboard(page), secret);
      const introspect = async (clientSecret: string) =>
        (
          await fetch(`${server.url}/v1/oauth2/introspect`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ token: 'nothing', client_id: appId, client_secret: clientSecret }),
          })
        ).status;
      assert.equal(await introspect(secret), 200);
      assert.equal(await introspect(firstSecret), 401);

      // Bot token reset through the prompt, copied, and real: GET /users/@me answers the bot.
      await page.getByRole('button', { name: 'Reset bot token' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByRole('button', { name: 'Copy bot token' }).click();
      const token = await clipboard(page);
      assert.equal(token, await page.getByLabel('Bot token', { exact: true }).inputValue());
      const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${token}` });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.id, appId);
      assert.equal(me.body.bot, true);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${firstToken}` })).status, 401);

      // Bot profile: username and an avatar with its preview.
      await page.getByLabel('Bot username').fill('weather_helper');
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
        'base64',
      );
      await page.getByLabel('Bot avatar').setInputFiles({ name: 'avatar.png', mimeType: 'image/png', buffer: png });
      await page.getByRole('img', { name: 'Avatar preview' }).waitFor();
      await page.getByRole('button', { name: 'Save bot profile' }).click();
      await page.getByText('The bot profile was saved.').waitFor();
      const bot = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${token}` });
      assert.equal(bot.body.username, 'weather_helper');
      assert.match(String(bot.body.avatar), /^[0-9a-f]{8,}$/);
      // The stored avatar loads.
      await imageLoaded(page.getByRole('img', { name: 'Current avatar' }));

      // Invite link: the checkboxes add up to the permissions integer.
      await page.getByRole('checkbox', { name: 'Send messages', exact: true }).check();
      await page.getByRole('checkbox', { name: 'Add reactions', exact: true }).check();
      const expected = String((1n << 11n) | (1n << 6n));
      await page.getByText(`Permissions integer: ${expected}`).waitFor();
      const invite = new URL(await page.getByLabel('Invite URL').inputValue());
      assert.equal(invite.origin + invite.pathname, `${server.origin}/oauth2/authorize`);
      assert.equal(invite.searchParams.get('client_id'), appId);
      assert.equal(invite.searchParams.get('permissions'), expected);
      assert.deepEqual(invite.searchParams.get('scope')?.split(' '), ['bot']);
      await assertAccessible(page, 'application page with secrets');
      // The refused redirect URI (400) is the only failed load: signed in here with a password, the sudo prompt
      // asks before each reset instead of after a 403; no script error.
      assert.deepEqual(
        errors.filter((line) => !line.startsWith('Failed to load resource')),
        [],
      );
      assert.deepEqual(
        errors.map((line) => line.match(/status of (\d+)/)?.[1]),
        ['400'],
      );

      await page.getByRole('link', { name: 'Open the invite link' }).click();
      await page.getByRole('heading', { level: 1, name: 'Weather Bot wants to access your account' }).waitFor();
      await page.getByText('Send messages', { exact: true }).waitFor();
      await page.getByText('Add reactions', { exact: true }).waitFor();

      // The list shows it; deletion goes through the prompt and takes the bot's token with it.
      await page.goto(`${server.origin}/developers`);
      await page.getByRole('link', { name: 'Weather Bot' }).click();
      await page.getByRole('heading', { level: 1, name: 'Weather Bot' }).waitFor();
      await page.getByRole('button', { name: 'Delete application' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByRole('heading', { level: 1, name: 'Developer portal' }).waitFor();
      await page.getByText('You have no applications yet.').waitFor();
      stored = await request(server, 'GET', `/v1/oauth2/applications/${appId}`, { auth: user.token });
      assert.equal(stored.status, 404);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${token}` })).status, 401);
      await context.close();
    });
  });
}
