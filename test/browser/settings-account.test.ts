import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { createApplication } from '../support/applications.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { totpCode } from '../support/mfa.ts';
import { issueTokens } from '../support/oauth2.ts';
import type { TestServer } from '../support/server.ts';
import {
  addVirtualAuthenticator,
  assertAccessible,
  CHROMIUM_PATH,
  confirmWithPassword,
  fillSignIn,
  lastMail,
  serverAndChromium,
  signedInPage,
  signInAs,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The account settings at /settings in Chromium, each section as a person uses it: profile with an avatar,
 * the email change with its codes, TOTP enrolment from the page's secret then a TOTP sign-in, backup codes,
 * sessions, authorised apps, disabling and deleting the account.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/settings-account.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  async function openSettings(user: TestUser): Promise<Page> {
    const { page } = await signedInPage(browser, server.origin, user);
    await page.goto(`${server.origin}/settings`);
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    return page;
  }

  describe('account settings', () => {
    it('saves the profile with a new avatar, banner, bio, pronouns and accent colour, and shows the avatar', async () => {
      const user = await registerUser(server);
      const page = await openSettings(user);
      await assertAccessible(page, 'settings');
      const avatar = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#2a7ab0' } })
        .png()
        .toBuffer();
      const banner = await sharp({ create: { width: 600, height: 200, channels: 3, background: '#b0602a' } })
        .jpeg()
        .toBuffer();
      await page.getByLabel('Avatar').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: avatar });
      const preview = page.getByRole('img', { name: 'Preview of your new avatar' });
      await preview.waitFor();
      assert.match((await preview.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
      await page.getByLabel('Banner').setInputFiles({ name: 'wide.jpg', mimeType: 'image/jpeg', buffer: banner });
      await page.getByRole('img', { name: 'Preview of your new banner' }).waitFor();
      const username = `renamed_${Date.now().toString(36)}`;
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('About me').fill('Writes compilers for fun.');
      await page.getByLabel('Pronouns').fill('she/her');
      await page.getByLabel('Accent colour').fill('#336699');
      await page.getByRole('button', { name: 'Save profile' }).click();
      await page.getByText('Your profile was saved.').waitFor();

      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.username, username);
      assert.equal(me.body.bio, 'Writes compilers for fun.');
      assert.equal(me.body.pronouns, 'she/her');
      assert.equal(me.body.accent_color, 0x336699);
      assert.match(me.body.avatar, /^[0-9a-f]{8}$/);
      assert.match(me.body.banner, /^[0-9a-f]{8}$/);
      // The saved avatar is what the page shows now, served by the media routes and really loaded.
      const shown = page.getByRole('img', { name: 'Your avatar' });
      await shown.waitFor();
      assert.ok(((await shown.getAttribute('src')) ?? '').includes(`/media/avatars/${user.id}/${me.body.avatar}.webp`));
      await page.waitForFunction(
        () => (document.querySelector('img.profile-avatar') as HTMLImageElement | null)?.naturalWidth === 64,
      );
      await page.getByRole('img', { name: 'Your banner' }).waitFor();
      await assertAccessible(page, 'settings after saving the profile');

      // Removing the avatar clears it.
      await page.getByRole('button', { name: 'Remove the avatar' }).click();
      await page.getByText('It will be removed when you save.').waitFor();
      // The avatar is hidden as soon as it is marked for removal, so wait for the save itself: the hint goes
      // once the server has taken the change.
      assert.equal(await page.getByRole('img', { name: 'Your avatar' }).count(), 0);
      await page.getByRole('button', { name: 'Save profile' }).click();
      await page.getByText('It will be removed when you save.').waitFor({ state: 'detached' });
      await page.getByText('Your profile was saved.').waitFor();
      assert.equal(await page.getByRole('img', { name: 'Your avatar' }).count(), 0);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).body.avatar, null);
      await page.context().close();
    });

    it('changes the email address with the codes sent to the old and the new address', async () => {
      const user = await registerUser(server);
      const verification = await lastMail(server, user.email, 'email_verification');
      const verify = await request(server, 'POST', '/v1/auth/verify', { body: { token: verification.metadata.token } });
      assert.equal(verify.status, 204);
      const page = await openSettings(user);
      await page.getByText(`Your email address is ${user.email} (verified).`).waitFor();
      await page.getByRole('button', { name: 'Change email address' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByLabel(`Code sent to ${user.email}`).waitFor();
      const original = (await lastMail(server, user.email, 'email_change_original')).metadata.code as string;
      await page.getByLabel(`Code sent to ${user.email}`).fill('000000' === original ? '111111' : '000000');
      await page.getByRole('button', { name: 'Verify the code' }).click();
      await page.getByText('This code is not right. Check it and try again.').waitFor();
      await page.getByLabel(`Code sent to ${user.email}`).fill(original);
      await page.getByRole('button', { name: 'Verify the code' }).click();

      const newEmail = `moved.${Date.now()}@example.test`;
      await page.getByLabel('New email address').fill(newEmail);
      await assertAccessible(page, 'email change');
      await page.getByRole('button', { name: 'Send a code to this address' }).click();
      await page.getByLabel(`Code sent to ${newEmail}`).waitFor();
      const code = (await lastMail(server, newEmail, 'email_change_new')).metadata.code as string;
      await page.getByLabel(`Code sent to ${newEmail}`).fill(code);
      await page.getByRole('button', { name: 'Verify the code' }).click();
      await page.getByText(`Your email address is now ${newEmail}.`, { exact: false }).waitFor();
      await page.getByText(`Your email address is ${newEmail} (verified).`).waitFor();
      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.email, newEmail);
      assert.equal(me.body.verified, true);
      // The old address got the revert link.
      await lastMail(server, user.email, 'email_change_revert');
      await page.context().close();
    });

    it('enrols TOTP from the QR code’s secret, regenerates and downloads backup codes, then signs in with TOTP', async () => {
      const user = await registerUser(server);
      const page = await openSettings(user);
      await page.getByText('No authenticator app is set up.').waitFor();
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      await assertAccessible(page, 'TOTP enrolment');
      const secret = (await page.getByLabel('Setup key').inputValue()).replace(/\s/g, '');
      assert.match(secret, /^[A-Z2-7]{32}$/);
      await page.getByLabel('Code from your authenticator app').fill(totpCode(secret));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByText('The authenticator app is on.', { exact: false }).waitFor();
      const list = page.getByRole('list', { name: 'Your backup codes' });
      const first = await list.getByRole('listitem').allInnerTexts();
      assert.equal(first.length, 10);
      for (const code of first) assert.match(code, /^[a-z0-9]{4}-[a-z0-9]{4}$/);
      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.mfa_enabled, true);

      // New codes through the sudo prompt (the account has TOTP now, so it asks for a code).
      await page.getByRole('button', { name: 'Get new backup codes' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByLabel('Authenticator or backup code').fill(totpCode(secret));
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Here are your new backup codes. The old ones no longer work.').waitFor();
      const second = await list.getByRole('listitem').allInnerTexts();
      assert.equal(second.length, 10);
      assert.equal(second.filter((code) => first.includes(code)).length, 0, 'the regenerated codes are all new');
      await assertAccessible(page, 'backup codes');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download as a text file' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), 'hearth-backup-codes.txt');
      const text = await readFile((await download.path()) as string, 'utf8');
      for (const code of second) assert.ok(text.includes(code), `${code} in the file`);
      for (const code of first) assert.ok(!text.includes(code), `old ${code} not in the file`);

      // Sign out, then in again: the password, then the authenticator code.
      await page.getByRole('button', { name: 'Sign out on this device' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      await fillSignIn(page, user);
      await page.getByRole('heading', { level: 1, name: 'Two-factor authentication' }).waitFor();
      await page.getByLabel('Code from your authenticator app').fill(totpCode(secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL((url) => url.pathname !== '/login');
      await page.goto(`${server.origin}/settings`);
      await page.getByText('An authenticator app protects your account', { exact: false }).waitFor();

      // An old backup code is refused; a new one is not (checked on the API, as a second sign-in would).
      const login = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: user.password },
      });
      assert.equal(login.body.mfa, true);
      const old = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
        body: { ticket: login.body.ticket, code: first[0] },
      });
      assert.equal(old.status, 400);
      const fresh = await request(server, 'POST', '/v1/auth/login/mfa/totp', {
        body: { ticket: login.body.ticket, code: second[0] },
      });
      assert.equal(fresh.status, 200, fresh.text);

      // Turning it off asks again: signing out forgot the sudo proof the tab held.
      await page.getByRole('button', { name: 'Turn off the authenticator app' }).click();
      const prompt = page.getByRole('dialog', { name: 'Confirm it is you' });
      await prompt.getByLabel('Authenticator or backup code').fill(totpCode(secret));
      await prompt.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('The authenticator app is off', { exact: false }).waitFor();
      const after = await request(server, 'GET', '/v1/users/@me', { auth: fresh.body.token });
      assert.equal(after.body.mfa_enabled, false);
      await page.context().close();
    });

    it('adds a passkey, renames it and removes it, each through the sudo prompt', async () => {
      const user = await registerUser(server);
      const page = await openSettings(user);
      await addVirtualAuthenticator(page);
      await page.getByLabel('Name for a new passkey').fill('Laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByText('The passkey was added. You can now sign in with it.').waitFor();
      const list = page.getByRole('list', { name: 'Your passkeys' });
      await list.getByRole('listitem').filter({ hasText: 'Laptop' }).waitFor();
      await assertAccessible(page, 'passkeys');

      // The account has a passkey now: the prompt offers it (and a code field), and the passkey confirms.
      await page.getByRole('button', { name: 'Rename Laptop' }).click();
      await page.getByLabel('New name for Laptop').fill('Work laptop');
      await page.getByRole('button', { name: 'Save the name' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByRole('button', { name: 'Confirm with a passkey' }).click();
      await page.getByText('The passkey was renamed.').waitFor();
      await list.getByRole('listitem').filter({ hasText: 'Work laptop' }).waitFor();
      const named = await request(server, 'GET', '/v1/users/@me/mfa/webauthn/credentials', { auth: user.token });
      assert.deepEqual(
        named.body.map((credential: { name: string }) => credential.name),
        ['Work laptop'],
      );

      // The proof from the passkey lasts 5 minutes: removing asks nothing more.
      await page.getByRole('button', { name: 'Remove Work laptop' }).click();
      await page.getByText('The passkey Work laptop was removed.').waitFor();
      await page.getByText('You have 0 passkeys.').waitFor();
      const left = await request(server, 'GET', '/v1/users/@me/mfa/webauthn/credentials', { auth: user.token });
      assert.deepEqual(left.body, []);
      await page.context().close();
    });

    it('lists sessions with their device, signs one out, then every other one', async () => {
      const user = await registerUser(server);
      const firefox = await request(server, 'POST', '/v1/auth/login', {
        body: { email: user.email, password: user.password },
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0' },
      });
      assert.equal(firefox.status, 200, firefox.text);
      const page = await openSettings(user);
      const sessions = page.getByRole('list', { name: 'Where you are signed in' });
      const firefoxItem = sessions.getByRole('listitem').filter({ hasText: 'Firefox on Linux' });
      await firefoxItem.waitFor();
      await sessions.getByRole('listitem').filter({ hasText: 'This device' }).waitFor();
      await assertAccessible(page, 'sessions');
      // The registration's session, the API one and this tab's.
      assert.equal(await sessions.getByRole('listitem').count(), 3);

      await page.getByRole('button', { name: 'Sign out Firefox on Linux' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByText('That session was signed out.').waitFor();
      await firefoxItem.waitFor({ state: 'detached' });
      assert.equal(await sessions.getByRole('listitem').count(), 2);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: firefox.body.token })).status, 401);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);

      await page.getByRole('button', { name: 'Sign out every other session' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByText('Every other session was signed out.').waitFor();
      assert.equal(await sessions.getByRole('listitem').count(), 1);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
      // This tab is still signed in.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      await page.context().close();
    });

    it('lists an authorised app with its scopes and revokes it', async () => {
      const owner = await registerUser(server);
      const app = await createApplication(server, owner, {
        name: `Notes ${Date.now().toString(36)}`,
        redirect_uris: ['https://notes.example/callback'],
      });
      const user = await registerUser(server);
      const tokens = await issueTokens(server, user, app, 'identify email');
      assert.equal(
        (await request(server, 'GET', '/v1/oauth2/@me', { auth: `Bearer ${tokens.access_token}` })).status,
        200,
      );
      const page = await openSettings(user);
      const apps = page.getByRole('list', { name: 'Authorised apps' });
      const item = apps.getByRole('listitem').filter({ hasText: app.body.name });
      await item.getByText('Know your username, avatar and display name').waitFor();
      await item.getByText('Know your email address').waitFor();
      await assertAccessible(page, 'authorised apps');
      await page.getByRole('button', { name: `Revoke ${app.body.name}` }).click();
      await page.getByText(`${app.body.name} can no longer use your account.`).waitFor();
      await page.getByText('You have not authorised any application.').waitFor();
      assert.equal(
        (await request(server, 'GET', '/v1/oauth2/@me', { auth: `Bearer ${tokens.access_token}` })).status,
        401,
      );
      const left = await request(server, 'GET', '/v1/oauth2/@me/authorizations', { auth: user.token });
      assert.deepEqual(left.body, []);
      await page.context().close();
    });

    it('disables the account after a confirmation and the password; signing in again turns it back on', async () => {
      const user = await registerUser(server);
      const page = await openSettings(user);
      await page.getByRole('button', { name: 'Disable account' }).click();
      const confirm = page.getByRole('dialog', { name: 'Disable your account?' });
      await confirm.waitFor();
      await assertAccessible(page, 'disable dialog');
      // Cancel first: nothing happens.
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 200);
      await page.getByRole('button', { name: 'Disable account' }).click();
      await confirm.getByRole('button', { name: 'Disable my account' }).click();
      await confirmWithPassword(page, user.password);
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
      await signInAs(page, server.origin, user);
      await page.goto(`${server.origin}/settings`);
      await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
      await page.context().close();
    });

    it('deletes the account after a confirmation and the password, and signs the tab out', async () => {
      const user = await registerUser(server);
      const page = await openSettings(user);
      await page.getByRole('button', { name: 'Delete account' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete your account?' });
      await confirm.getByText('removed for good after 14 days', { exact: false }).waitFor();
      await confirm.getByRole('button', { name: 'Delete my account' }).click();
      // A wrong password first: the prompt says so and stays.
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByLabel('Your password').fill('not the password');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await dialog.getByText('The password is not right.').waitFor();
      await dialog.getByLabel('Your password').fill(user.password);
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to Hearth' }).waitFor();
      assert.equal(await page.evaluate(() => window.localStorage.getItem('hearth.session')), null);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: user.token })).status, 401);
      await page.context().close();
    });
  });
}
