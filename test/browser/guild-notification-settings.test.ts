import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, guildWith, serverAndChromium, signedInContext, warnNoChromium } from './support/browser.ts';

/**
 * Notification settings kept on the server (docs/web.md, "Notification settings"; docs/chat.md#notification-settings):
 * a server muted in one tab is muted live in another tab of the account, after a reload, and in a browser that never
 * saw the change; a level chosen in one tab shows in the other's dialog.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/guild-notification-settings.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const rail = (page: Page) => page.getByRole('navigation', { name: 'Servers' });

  describe('notification settings across tabs and devices', () => {
    it('a mute and a level follow the account: live in the other tab, after a reload, in a fresh browser', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const delta = await guildWith(server, 'Delta', bob, alice);
      const mention = async () => {
        const sent = await request(server, 'POST', `/v1/channels/${delta.channelId}/messages`, {
          auth: bob.token,
          body: { content: `<@${alice.id}> look` },
        });
        assert.equal(sent.status, 200, sent.text);
      };

      const [oneContext, twoContext] = await Promise.all([
        signedInContext(browser, alice),
        signedInContext(browser, alice),
      ]);
      const [one, two] = await Promise.all([oneContext.newPage(), twoContext.newPage()]);
      await Promise.all([one.goto(`${server.origin}/channels/@me`), two.goto(`${server.origin}/channels/@me`)]);
      await Promise.all([
        rail(one).getByRole('link', { name: 'Delta', exact: true }).waitFor(),
        rail(two).getByRole('link', { name: 'Delta', exact: true }).waitFor(),
      ]);

      // Muted from the rail's menu in one tab: the other shows it muted without a reload.
      const saved = one.waitForResponse(
        (r) => r.url().endsWith(`/users/@me/guilds/${delta.guildId}/settings`) && r.request().method() === 'PATCH',
      );
      await rail(one).getByRole('link', { name: 'Delta', exact: true }).click({ button: 'right' });
      await one.getByRole('menu', { name: 'Options for Delta' }).getByRole('menuitem', { name: 'Mute server' }).click();
      assert.equal((await saved).status(), 200);
      await rail(one).getByRole('link', { name: 'Delta, muted', exact: true }).waitFor();
      await rail(two).getByRole('link', { name: 'Delta, muted', exact: true }).waitFor();

      // A mention while muted: no badge in either tab.
      await mention();
      await one.waitForTimeout(500);
      for (const page of [one, two]) {
        const link = rail(page).getByRole('link', { name: /^Delta/ });
        assert.equal(await link.getAttribute('aria-label'), 'Delta, muted');
        assert.equal(await link.locator('.badge').count(), 0);
      }

      // After a reload, and in a browser that never saw the change (nothing in its storage): still muted.
      await two.reload();
      await rail(two).getByRole('link', { name: 'Delta, muted', exact: true }).waitFor();
      const fresh = await signedInContext(browser, alice);
      const third = await fresh.newPage();
      await third.goto(`${server.origin}/channels/@me`);
      await rail(third).getByRole('link', { name: 'Delta, muted', exact: true }).waitFor();
      assert.equal(await third.evaluate(() => window.localStorage.getItem('hearth.muted')), null);

      // Unmuted in the second tab: the first shows the mention's badge again, live.
      await rail(two).getByRole('link', { name: 'Delta, muted', exact: true }).click({ button: 'right' });
      await two
        .getByRole('menu', { name: 'Options for Delta' })
        .getByRole('menuitem', { name: 'Unmute server' })
        .click();
      await rail(one).getByRole('link', { name: 'Delta, 1 mention', exact: true }).waitFor();
      await rail(third).getByRole('link', { name: 'Delta, 1 mention', exact: true }).waitFor();

      // A level chosen in one tab is the one the other tab's dialog shows.
      await one.goto(`${server.origin}/channels/${delta.guildId}/${delta.channelId}`);
      await two.goto(`${server.origin}/channels/${delta.guildId}/${delta.channelId}`);
      const dialogOf = (page: Page) => page.getByRole('dialog', { name: 'Notifications for Delta' });
      for (const page of [one, two]) {
        await page.getByRole('button', { name: 'Server notifications' }).click();
        await dialogOf(page).waitFor();
        assert.equal(await dialogOf(page).getByRole('radio', { name: 'All messages' }).isChecked(), true);
      }
      await dialogOf(one).getByRole('radio', { name: 'Only @mentions' }).check();
      const mentionsOnly = dialogOf(two).getByRole('radio', { name: 'Only @mentions' });
      for (let tries = 0; tries < 50 && !(await mentionsOnly.isChecked()); tries++) await two.waitForTimeout(100);
      assert.equal(await dialogOf(two).getByRole('radio', { name: 'Only @mentions' }).isChecked(), true);
      assert.equal(await dialogOf(two).getByRole('radio', { name: 'All messages' }).isChecked(), false);
      await Promise.all([oneContext.close(), twoContext.close(), fresh.close()]);
    });

    it('a mute kept in this browser before is carried to the account once, then forgotten here', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const echo = await guildWith(server, 'Echo', bob, alice);
      const context = await signedInContext(browser, alice);
      await context.addInitScript((guildId) => {
        if (!window.sessionStorage.getItem('seeded')) {
          window.sessionStorage.setItem('seeded', '1');
          window.localStorage.setItem('hearth.muted', JSON.stringify([guildId]));
        }
      }, echo.guildId);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/@me`);
      await rail(page).getByRole('link', { name: 'Echo, muted', exact: true }).waitFor();
      await page.waitForFunction(() => window.localStorage.getItem('hearth.muted') === null);
      // The account holds it now: another browser sees it muted.
      const other = await signedInContext(browser, alice);
      const second = await other.newPage();
      await second.goto(`${server.origin}/channels/@me`);
      await rail(second).getByRole('link', { name: 'Echo, muted', exact: true }).waitFor();
      await Promise.all([context.close(), other.close()]);
    });
  });
}
