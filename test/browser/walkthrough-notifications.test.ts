import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  press,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * A newcomer's walk through notification settings by keyboard (issue 18): a server's and a channel's settings
 * (mute, and what notifies: all messages, only mentions, nothing, or the server's setting), their effect on the
 * browser's notifications and on the unread count in the tab's title, and the choice kept after a reload.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/walkthrough-notifications.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const notes = (page: Page) =>
    page.evaluate(() => (window as unknown as { __notes: { title: string; body: string }[] }).__notes);
  async function titleIs(page: Page, title: string | RegExp) {
    const matches = (seen: string) => (typeof title === 'string' ? seen === title : title.test(seen));
    const deadline = Date.now() + 10_000;
    let seen = await page.title();
    while (!matches(seen) && Date.now() < deadline) {
      await page.waitForTimeout(100);
      seen = await page.title();
    }
    assert.ok(matches(seen), `the title "${seen}" is ${title}`);
  }

  describe('notification settings by keyboard', () => {
    it('mutes a server and sets levels per server and channel; notifications and the tab title follow', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Bellows', alice, bob);
      const channel = async (name: string) => {
        const res = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
          auth: alice.token,
          body: { name, type: 0 },
        });
        assert.equal(res.status, 200, res.text);
        return res.body.id as string;
      };
      const quiet = await channel('quiet');
      const lounge = await channel('lounge');
      const post = async (channelId: string, content: string) => {
        const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: alice.token,
          body: { content },
        });
        assert.equal(res.status, 200, res.text);
      };

      const context = await signedInContext(browser, bob);
      // Notifications recorded instead of shown (headless Chromium has none), already allowed.
      await context.addInitScript(`(() => {
        const shown = [];
        window.__notes = shown;
        function Recorder(title, options) { shown.push({ title, body: options.body }); this.onclick = null; }
        Recorder.prototype.close = function () {};
        Recorder.permission = 'granted';
        Recorder.requestPermission = function () { return Promise.resolve('granted'); };
        window.Notification = Recorder;
      })()`);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${lounge}`);
      await page.getByRole('textbox', { name: 'Message #lounge' }).waitFor();
      await titleIs(page, '#lounge · Hearth');

      // A mention elsewhere: counted in the tab's title and notified (the server notifies every message by default).
      await post(quiet, `<@${bob.id}> over here`);
      await titleIs(page, '(1) #lounge · Hearth');
      await page.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length === 1);

      // The server muted from its own settings: no count in the title, no notification.
      await press(page.getByRole('button', { name: 'Server notifications' }));
      const serverDialog = page.getByRole('dialog', { name: 'Notifications for Bellows' });
      await serverDialog.waitFor();
      await assertAccessible(page, 'server notification settings');
      // The server's default is "All messages", shown as the current choice.
      assert.equal(await serverDialog.getByRole('radio', { name: 'All messages' }).isChecked(), true);
      await press(serverDialog.getByRole('checkbox', { name: 'Mute Bellows' }), 'Space');
      await press(serverDialog.getByRole('button', { name: 'Done' }));
      await serverDialog.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Server notifications, muted' }).waitFor();
      await titleIs(page, '#lounge · Hearth');
      await post(quiet, `<@${bob.id}> still there?`);
      await page.waitForTimeout(500);
      assert.equal((await notes(page)).length, 1);
      await titleIs(page, '#lounge · Hearth');

      // Unmuted, with only mentions for the server…
      await press(page.getByRole('button', { name: 'Server notifications, muted' }));
      await press(serverDialog.getByRole('checkbox', { name: 'Mute Bellows' }), 'Space');
      await press(serverDialog.getByRole('radio', { name: 'Only @mentions' }), 'Space');
      await page.keyboard.press('Escape');
      await serverDialog.waitFor({ state: 'detached' });
      await titleIs(page, '(2) #lounge · Hearth');

      // …and nothing at all from #quiet, set from that channel's header. Reading #quiet is acked a second later
      // (the debounced ack); the reload below waits for it, or the server would still count #quiet's mentions.
      const quietAcked = page.waitForResponse(
        (r) =>
          r.request().method() === 'POST' &&
          r.url().includes(`/channels/${quiet}/messages/`) &&
          r.url().endsWith('/ack'),
      );
      await page.getByRole('link', { name: /^#quiet/ }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('textbox', { name: 'Message #quiet' }).waitFor();
      // Read once its messages are on screen (a channel left before they load stays unread, mentions and all).
      await page.getByText('still there?').waitFor();
      await press(page.getByRole('button', { name: 'Channel notifications' }));
      const quietDialog = page.getByRole('dialog', { name: 'Notifications for #quiet' });
      assert.equal(await quietDialog.getByRole('radio', { name: 'The server’s setting' }).isChecked(), true);
      await assertAccessible(page, 'channel notification settings');
      await press(quietDialog.getByRole('radio', { name: 'Nothing' }), 'Space');
      await press(quietDialog.getByRole('button', { name: 'Done' }));
      await page.getByRole('link', { name: /^#lounge/ }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('textbox', { name: 'Message #lounge' }).waitFor();

      await post(channelId, 'plain words'); // only mentions in the server: no notification
      await post(quiet, `<@${bob.id}> in the quiet room`); // nothing from #quiet
      await post(channelId, `<@${bob.id}> a real mention`); // notified
      await page.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length >= 2);
      await page.waitForTimeout(500);
      assert.deepEqual(
        (await notes(page)).map((n) => n.body),
        [`<@${bob.id}> over here`, `<@${bob.id}> a real mention`],
      );
      assert.equal((await notes(page))[1]?.title, `${alice.username} (#general)`);

      // The count leads the title on the server settings too (a level says what notifies; only muting takes a
      // place out of the count). Which of the two newest mentions the server's read state has counted by the
      // time the page loads is not this test's matter: a count leads.
      assert.equal((await quietAcked).status(), 200);
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await titleIs(page, /^\([12]\) Server settings: Bellows · Hearth$/);
      await page.goto(`${server.origin}/channels/${guildId}/${lounge}`);

      // Kept in this browser: after a reload #quiet still says "Nothing".
      await page.getByRole('textbox', { name: 'Message #lounge' }).waitFor();
      await page.getByRole('link', { name: /^#quiet/ }).click();
      await press(page.getByRole('button', { name: 'Channel notifications' }));
      assert.equal(await quietDialog.getByRole('radio', { name: 'Nothing' }).isChecked(), true);
      await context.close();
    });
  });
}
