import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { friendsWithDm } from '../support/chat.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  CHROMIUM_PATH,
  guildWith,
  press,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Notification settings on the server beyond a guild's mute and level (issue 18; docs/web.md, "Notification
 * settings"; docs/chat.md#notification-settings): a direct conversation's mute follows the account (the
 * `guild_id: null` entry) to another tab and through a reload, and one an earlier version kept in this browser is
 * carried to the account; "Suppress @everyone and @here" stops an @everyone
 * ping from notifying and from counting in the tab's title; a folded category stays folded after a reload and in
 * another browser.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/notification-settings-sync.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** Resolves with the status of the next PATCH of the settings entry `entry` ('@me' for conversations). */
  const saved = (page: Page, entry: string) =>
    page
      .waitForResponse(
        (r) =>
          r.request().method() === 'PATCH' &&
          (r.url().endsWith(`/users/@me/guilds/${entry}/settings`) ||
            r.url().endsWith(`/users/@me/guilds/${encodeURIComponent(entry)}/settings`)),
      )
      .then((r) => r.status());
  /** Notifications recorded instead of shown (headless Chromium has none), already allowed. */
  async function recordNotifications(context: BrowserContext) {
    await context.addInitScript(`(() => {
      const shown = [];
      window.__notes = shown;
      function Recorder(title, options) { shown.push({ title, body: options.body }); this.onclick = null; }
      Recorder.prototype.close = function () {};
      Recorder.permission = 'granted';
      Recorder.requestPermission = function () { return Promise.resolve('granted'); };
      window.Notification = Recorder;
    })()`);
  }
  const notes = (page: Page) =>
    page.evaluate(() =>
      (window as unknown as { __notes: { title: string; body: string }[] }).__notes.map((n) => n.body),
    );
  async function titleIs(page: Page, title: string) {
    const deadline = Date.now() + 10_000;
    let seen = await page.title();
    while (seen !== title && Date.now() < deadline) {
      await page.waitForTimeout(100);
      seen = await page.title();
    }
    assert.equal(seen, title);
  }

  describe('notification settings kept on the account', () => {
    it('a DM muted in one tab is muted in the other, live, and after a reload', async () => {
      const { alice, bob, channelId: dm } = await friendsWithDm(server);
      const [oneContext, twoContext] = await Promise.all([
        signedInContext(browser, alice),
        signedInContext(browser, alice),
      ]);
      const [one, two] = await Promise.all([oneContext.newPage(), twoContext.newPage()]);
      await Promise.all([one.goto(`${server.origin}/channels/@me/${dm}`), two.goto(`${server.origin}/channels/@me`)]);
      const dmLink = (page: Page) => page.getByRole('link', { name: new RegExp(`^${bob.username}`) });
      await dmLink(two).waitFor();
      assert.equal(await dmLink(two).getAttribute('aria-label'), bob.username);

      // Muted by keyboard from the conversation's header in the first tab.
      await press(one.getByRole('button', { name: 'Conversation notifications', exact: true }));
      const dialog = one.getByRole('dialog', { name: `Notifications for ${bob.username}` });
      await dialog.waitFor();
      // A conversation has no server to follow: its level is "All messages" until chosen.
      assert.equal(await dialog.getByRole('radio', { name: 'All messages' }).isChecked(), true);
      assert.equal(await dialog.getByRole('checkbox', { name: /^Suppress/ }).count(), 0);
      const patched = saved(one, '@me');
      await press(dialog.getByRole('checkbox', { name: `Mute ${bob.username}` }), 'Space');
      assert.equal(await patched, 200);
      await press(dialog.getByRole('button', { name: 'Done' }));
      await dialog.waitFor({ state: 'detached' });
      await one.getByRole('button', { name: 'Conversation notifications, muted' }).waitFor();

      // The other tab shows it muted without a reload, and again after one; nothing of it is in this browser.
      await two.getByRole('link', { name: `${bob.username}, muted`, exact: true }).waitFor();
      await two.reload();
      await two.getByRole('link', { name: `${bob.username}, muted`, exact: true }).waitFor();
      await two.getByRole('link', { name: `${bob.username}, muted`, exact: true }).click();
      await two.getByRole('button', { name: 'Conversation notifications, muted' }).waitFor();
      assert.equal(await two.evaluate(() => window.localStorage.getItem('hearth.muted')), null);

      // A message from Bob while muted: no badge, no count in the title.
      const sent = await request(server, 'POST', `/v1/channels/${dm}/messages`, {
        auth: bob.token,
        body: { content: 'are you there?' },
      });
      assert.equal(sent.status, 200, sent.text);
      await one.goto(`${server.origin}/channels/@me`);
      await dmLink(one).waitFor();
      assert.equal(await dmLink(one).getAttribute('aria-label'), `${bob.username}, muted`);
      assert.equal(await dmLink(one).locator('.badge').count(), 0);
      await Promise.all([oneContext.close(), twoContext.close()]);
    });

    it("a conversation's mute kept in this browser by an earlier version is carried to the account once", async () => {
      const { alice, bob, channelId: dm } = await friendsWithDm(server);
      const context = await signedInContext(browser, alice);
      await context.addInitScript((id) => {
        if (!window.sessionStorage.getItem('seeded')) {
          window.sessionStorage.setItem('seeded', '1');
          window.localStorage.setItem('hearth.muted', JSON.stringify([id]));
        }
      }, dm);
      const page = await context.newPage();
      const patched = saved(page, '@me');
      await page.goto(`${server.origin}/channels/@me`);
      assert.equal(await patched, 200);
      await page.getByRole('link', { name: `${bob.username}, muted`, exact: true }).waitFor();
      await page.waitForFunction(() => window.localStorage.getItem('hearth.muted') === null);
      // The account holds it now: another browser sees it muted.
      const other = await signedInContext(browser, alice);
      const second = await other.newPage();
      await second.goto(`${server.origin}/channels/@me`);
      await second.getByRole('link', { name: `${bob.username}, muted`, exact: true }).waitFor();
      await Promise.all([context.close(), other.close()]);
    });

    it('"Suppress @everyone and @here" stops an @everyone ping from notifying and from counting', async () => {
      const [owner, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hush', owner, bob);
      const lounge = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: owner.token,
        body: { name: 'lounge', type: 0 },
      });
      assert.equal(lounge.status, 200, lounge.text);
      const post = async (content: string) => {
        const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: owner.token,
          body: { content },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.mention_everyone, content.startsWith('@everyone'));
      };
      const context = await signedInContext(browser, bob);
      await recordNotifications(context);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${lounge.body.id}`);
      await page.getByRole('textbox', { name: 'Message #lounge' }).waitFor();

      // Only mentions from this server: an @everyone ping notifies and counts, as a mention does.
      await press(page.getByRole('button', { name: 'Server notifications' }));
      const dialog = page.getByRole('dialog', { name: 'Notifications for Hush' });
      await dialog.waitFor();
      let patched = saved(page, guildId);
      await press(dialog.getByRole('radio', { name: 'Only @mentions' }), 'Space');
      assert.equal(await patched, 200);
      await press(dialog.getByRole('button', { name: 'Done' }));
      await dialog.waitFor({ state: 'detached' });
      await post('@everyone first call');
      await titleIs(page, '(1) #lounge · Hearth');
      await page.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length === 1);

      // Suppressed: the next @everyone neither notifies nor adds to the count; a ping by name still does both.
      await press(page.getByRole('button', { name: 'Server notifications' }));
      await dialog.waitFor();
      const suppress = dialog.getByRole('checkbox', { name: 'Suppress @everyone and @here' });
      assert.equal(await suppress.isChecked(), false);
      assert.equal(await dialog.getByRole('checkbox', { name: 'Suppress all role @mentions' }).isChecked(), false);
      patched = saved(page, guildId);
      await press(suppress, 'Space');
      assert.equal(await patched, 200);
      assert.equal(await suppress.isChecked(), true);
      await press(dialog.getByRole('button', { name: 'Done' }));
      await dialog.waitFor({ state: 'detached' });
      await post('@everyone second call');
      await page.waitForTimeout(700);
      assert.deepEqual(await notes(page), ['@everyone first call']);
      await titleIs(page, '(1) #lounge · Hearth');
      await post(`<@${bob.id}> just you`);
      await titleIs(page, '(2) #lounge · Hearth');
      await page.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length === 2);
      assert.deepEqual(await notes(page), ['@everyone first call', `<@${bob.id}> just you`]);

      // Kept on the account: after a reload the box is still checked, and the server's count left the suppressed
      // ping out too.
      await page.reload();
      await page.getByRole('textbox', { name: 'Message #lounge' }).waitFor();
      await titleIs(page, '(2) #lounge · Hearth');
      await press(page.getByRole('button', { name: 'Server notifications' }));
      await dialog.waitFor();
      assert.equal(await dialog.getByRole('checkbox', { name: 'Suppress @everyone and @here' }).isChecked(), true);
      await context.close();
    });

    it('a collapsed category stays collapsed after a reload and in another browser', async () => {
      const [owner, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Folds', owner, bob);
      const create = async (body: object) => {
        const res = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, { auth: owner.token, body });
        assert.equal(res.status, 200, res.text);
        return res.body.id as string;
      };
      const workshop = await create({ name: 'Workshop', type: 4 });
      await create({ name: 'bench', type: 0, parent_id: workshop });

      const [oneContext, twoContext] = await Promise.all([
        signedInContext(browser, bob),
        signedInContext(browser, bob),
      ]);
      const one = await oneContext.newPage();
      await one.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const toggle = (page: Page) =>
        page.getByRole('region', { name: 'Workshop' }).getByRole('button', { name: /Workshop$/ });
      const bench = (page: Page) => page.getByRole('link', { name: /^#bench/ });
      await bench(one).waitFor();
      assert.equal(await toggle(one).getAttribute('aria-expanded'), 'true');

      const patched = saved(one, guildId);
      await press(toggle(one));
      assert.equal(await patched, 200);
      assert.equal(await toggle(one).getAttribute('aria-expanded'), 'false');
      assert.equal(await bench(one).count(), 0);

      await one.reload();
      await one.getByRole('link', { name: /^#general/ }).waitFor();
      assert.equal(await toggle(one).getAttribute('aria-expanded'), 'false');
      assert.equal(await bench(one).count(), 0);
      const two = await twoContext.newPage();
      await two.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await two.getByRole('link', { name: /^#general/ }).waitFor();
      assert.equal(await toggle(two).getAttribute('aria-expanded'), 'false');
      assert.equal(await bench(two).count(), 0);

      // Opened again in the second browser: the first follows live.
      await press(toggle(two));
      await bench(two).waitFor();
      await bench(one).waitFor();
      assert.equal(await toggle(one).getAttribute('aria-expanded'), 'true');
      await Promise.all([oneContext.close(), twoContext.close()]);
    });
  });
}
