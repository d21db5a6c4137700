import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { setAcls } from '../support/admin.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { enableTotp } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  atChatHome,
  CHROMIUM_PATH,
  h1,
  serverAndChromium,
  signedInPage,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The admin panel in Chromium, with the administrator's session token (docs/admin.md#credentials-and-checks): find a user and
 * disable them (their open tab is signed out), rights, sessions, deletion; IP bans; the audit log with
 * filters; instance settings; Admin API keys through the sudo prompt. axe on every page.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/admin.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));
  const signedIn = (user: TestUser) => signedInPage(browser, server.origin, user, { clipboard: true });

  describe('admin panel', () => {
    it('finds a user and disables them: their open tab is signed out; rights, sessions and deletion', async () => {
      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['*']);
      const target = await registerUser(server, { username: 'to_disable' });
      const victim = await signedIn(target);
      await atChatHome(victim.page, 'to_disable');
      // Give the gateway connection time to identify before the account goes away.
      await victim.page.waitForTimeout(500);

      // The chat's user area offers the panel to an administrator; it is reached from the keyboard.
      const { context, page } = await signedIn(admin);
      await atChatHome(page, admin.username);
      await page.getByRole('link', { name: 'Administration', exact: true }).focus();
      await page.keyboard.press('Enter');
      await h1(page, 'Users · Administration');
      await assertAccessible(page, 'admin users');
      await page.getByLabel('Find a user').fill(target.email);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name: `Open to_disable (${target.email})` }).click();
      await page.getByRole('heading', { level: 2, name: 'User to_disable' }).waitFor();
      await page.getByText('Active', { exact: true }).waitFor();
      await assertAccessible(page, 'admin user details');

      await page.getByRole('button', { name: 'Disable account' }).click();
      await page.getByText('The account is disabled and every session of it was signed out.').waitFor();
      await page.getByText('Disabled', { exact: true }).waitFor();
      await page.getByText('No session.').waitFor();
      await h1(victim.page, 'Sign in to Hearth');
      assert.equal(await victim.page.evaluate(() => window.localStorage.getItem('hearth.session')), null);
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: target.token })).status, 401);

      await page.getByRole('button', { name: 'Enable account' }).click();
      await page.getByText('The account is enabled again.').waitFor();
      await page.getByText('Active', { exact: true }).waitFor();
      const again = await request(server, 'POST', '/v1/auth/login', {
        body: { email: target.email, password: target.password },
      });
      assert.equal(again.status, 200, again.text);

      // Rights: one per line; an unknown name is refused with its sentence.
      await page.getByLabel('Rights (one per line)').fill('admin:authenticate\nno:such:right');
      await page.getByRole('button', { name: 'Save rights' }).click();
      await page.getByText('One of these administrative rights does not exist.').waitFor();
      await page.getByLabel('Rights (one per line)').fill('admin:authenticate\nuser:lookup');
      await page.getByRole('button', { name: 'Save rights' }).click();
      await page.getByText('The rights were saved.').waitFor();
      const me = await request(server, 'GET', '/v1/admin/users/me', { auth: again.body.token });
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(me.body.acls, ['admin:authenticate', 'user:lookup']);

      // Sessions: the new sign-in shows, then "Sign out every session" ends it.
      await page.getByRole('button', { name: 'Sign out every session' }).click();
      await page.getByText('Every session of this account was signed out.').waitFor();
      assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: again.body.token })).status, 401);

      // Deletion: scheduled, then cancelled.
      await page.getByLabel('Days until deletion').fill('30');
      await page.getByRole('button', { name: 'Schedule deletion' }).click();
      await page.getByText('The deletion is scheduled and every session was signed out.').waitFor();
      await page.getByText(/Active · Deletion scheduled for /).waitFor();
      await page.getByRole('button', { name: 'Cancel the deletion' }).click();
      await page.getByText('The deletion was cancelled.').waitFor();
      await page.getByRole('button', { name: 'Schedule deletion' }).waitFor();

      // The audit log, filtered by action and by target.
      await page.getByRole('link', { name: 'Audit log' }).click();
      await h1(page, 'Audit log · Administration');
      await assertAccessible(page, 'admin audit log');
      await page.getByLabel('Action', { exact: true }).fill('user.update_flags');
      await page.getByRole('button', { name: 'Show entries' }).click();
      await page.getByText('2 entries', { exact: true }).waitFor();
      await page.getByLabel('Action', { exact: true }).fill('');
      await page.getByLabel('Target type').selectOption('user');
      await page.getByLabel('Target ID').fill(target.id);
      await page.getByRole('button', { name: 'Show entries' }).click();
      // update_flags ×2, set_acls, terminate_sessions, schedule_deletion, cancel_deletion.
      await page.getByText('6 entries', { exact: true }).waitFor();
      assert.equal(await page.locator('table.data tbody tr').count(), 6);
      await page.getByRole('cell', { name: 'user.set_acls' }).waitFor();
      await context.close();
      await victim.context.close();
    });

    it('bans an address, changes the registration mode and SSO name, and manages Admin API keys', async () => {
      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['*']);
      const { context, page } = await signedIn(admin);

      await page.goto(`${server.origin}/admin/bans`);
      await h1(page, 'IP bans · Administration');
      await page.getByText('No address is banned.').waitFor();
      await page.getByLabel('IP address or range').fill('203.0.113.9/24');
      await page.getByLabel('Duration in hours').fill('2');
      await page.getByRole('button', { name: 'Ban', exact: true }).click();
      await page.getByText('203.0.113.9/24 is banned.').waitFor();
      await page.getByRole('button', { name: 'Lift the ban on 203.0.113.0/24' }).waitFor();
      await assertAccessible(page, 'admin IP bans');
      const banned = await request(server, 'GET', '/v1/users/@me', {
        auth: admin.token,
        headers: { 'X-Forwarded-For': '203.0.113.50' },
      });
      assert.equal(banned.status, 403);
      assert.equal(banned.body.code, 'GLOBAL_IP_TEMPORARILY_BANNED');
      await page.getByRole('button', { name: 'Lift the ban on 203.0.113.0/24' }).click();
      await page.getByText('The ban on 203.0.113.0/24 was lifted.').waitFor();
      await page.getByText('No address is banned.').waitFor();

      await page.getByRole('link', { name: 'Instance settings' }).click();
      await h1(page, 'Instance settings · Administration');
      await assertAccessible(page, 'admin instance settings');
      // Each form says "Saved." in its own section, once its own save is done.
      const registration = page.getByRole('region', { name: 'Registration' });
      const singleSignOn = page.getByRole('region', { name: 'Single sign-on' });
      await page.getByLabel('Who may create an account').selectOption('approval');
      await page.getByRole('button', { name: 'Save registration' }).click();
      await registration.getByText('Saved.', { exact: true }).waitFor();
      const discovery = await request(server, 'GET', '/.well-known/service');
      assert.equal(discovery.body.registration.mode, 'approval');
      try {
        assert.equal(await singleSignOn.getByText('Saved.', { exact: true }).count(), 0);
        await page.getByLabel('Button name').fill('Company login');
        await page.getByRole('button', { name: 'Save single sign-on' }).click();
        await singleSignOn.getByText('Saved.', { exact: true }).waitFor();
        assert.equal(await page.getByLabel('Button name').inputValue(), 'Company login');
        const config = await request(server, 'POST', '/v1/admin/instance-config/get', {
          auth: admin.token,
          body: {},
        });
        assert.equal(config.body.sso.display_name, 'Company login');
      } finally {
        // Later tests register accounts: registration must be open again whatever happened above.
        await page.getByLabel('Who may create an account').selectOption('open');
        await page.getByRole('button', { name: 'Save registration' }).click();
        const deadline = Date.now() + 10_000;
        while ((await request(server, 'GET', '/.well-known/service')).body.registration.mode !== 'open') {
          assert.ok(Date.now() < deadline, 'registration is open again');
          await page.waitForTimeout(50);
        }
      }
      await registration.getByText('Saved.', { exact: true }).waitFor();

      await page.getByRole('link', { name: 'Admin API keys' }).click();
      await h1(page, 'Admin API keys · Administration');
      await page.getByText('You have no key.').waitFor();
      await assertAccessible(page, 'admin API keys');
      await page.getByLabel('Key name').fill('lookup script');
      await page.getByLabel('Rights of the key (one per line)').fill('admin:authenticate\nuser:lookup');
      await page.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByLabel('Your password').fill(admin.password);
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('The key lookup script was created.').waitFor();
      await page.getByRole('button', { name: 'Copy new key' }).click();
      const key = await page.evaluate(() => navigator.clipboard.readText());
      assert.match(key, /^fa_\d+_[A-Za-z0-9]{32}$/);
      const asKey = await request(server, 'GET', '/v1/admin/users/me', { auth: `Admin ${key}` });
      assert.equal(asKey.status, 200, asKey.text);
      assert.deepEqual(asKey.body.acls, ['admin:authenticate', 'user:lookup']);
      await assertAccessible(page, 'admin API keys with a new key');
      await page.getByRole('button', { name: 'Revoke lookup script' }).click();
      await page.getByText('The key lookup script was revoked.').waitFor();
      assert.equal((await request(server, 'GET', '/v1/admin/users/me', { auth: `Admin ${key}` })).status, 401);
      await context.close();
    });

    it('resets a user’s two-factor authentication', async () => {
      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['*']);
      const target = await registerUser(server, { username: 'lost_phone' });
      await enableTotp(server, target.token);
      const before = await request(server, 'POST', '/v1/auth/login', {
        body: { email: target.email, password: target.password },
      });
      assert.equal(before.body.mfa, true, before.text);

      const { context, page } = await signedIn(admin);
      await page.goto(`${server.origin}/admin`);
      await page.getByLabel('Find a user').fill('lost_phone');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name: `Open lost_phone (${target.email})` }).click();
      const facts = page.locator('dl.facts');
      await facts.getByText('On', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Reset two-factor authentication' }).click();
      await page.getByText('Every second factor of this account was removed.').waitFor();
      await facts.getByText('Off', { exact: true }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Reset two-factor authentication' }).isDisabled(), true);
      const after = await request(server, 'POST', '/v1/auth/login', {
        body: { email: target.email, password: target.password },
      });
      assert.equal(after.status, 200, after.text);
      assert.equal(typeof after.body.token, 'string');
      assert.equal(after.body.mfa, undefined);
      await context.close();
    });

    it('tells an account without admin rights that the panel is not for it', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedIn(user);
      await page.goto(`${server.origin}/admin/audit-log`);
      await h1(page, 'Administration');
      await page.getByText('Your account holds no administrative rights.', { exact: false }).waitFor();
      await assertAccessible(page, 'admin panel, not an admin');
      // Its way back leads to the chat, whose user area offers no admin panel to this account.
      await page.getByRole('link', { name: 'Back to your conversations' }).click();
      await atChatHome(page, user.username);
      await page.getByRole('link', { name: 'Developer portal', exact: true }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Administration', exact: true }).count(), 0);
      await context.close();
    });
  });
}
