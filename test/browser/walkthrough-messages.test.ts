import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { postAttachment } from '../support/chat.ts';
import { harness, registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  imageLoaded,
  press,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * A newcomer's walk through a message's actions, by keyboard (issue 18): each control is found by its role and
 * name, focused and pressed with Enter, never clicked. Forward to another channel, copy a message's link, go to
 * the message a reply answers, the "new messages" bar, an image's lightbox closed with Escape, and search with a
 * filter picked from its suggestions.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/walkthrough-messages.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );
  /** A message's row, found as a screen reader names it: "author, words, time". */
  const row = (page: Page, author: string, text: string) =>
    page.getByRole('listitem', { name: new RegExp(`^${author}, ${text}, `) });
  /** Focuses a control and presses Enter on it: what a keyboard does once Tab has reached it. */

  describe('a walk through messages by keyboard', () => {
    it('forwards, copies a link, goes to a replied message, follows the new-messages bar, opens a lightbox and searches', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Walkway', alice, bob);
      const random = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'random', type: 0 },
      });
      assert.equal(random.status, 200, random.text);
      // Enough history that the newest end is far below the top of the view.
      const seeded = await harness(server, 'POST', '/messages/seed', {
        channel_id: channelId,
        author_id: bob.id,
        messages: Array.from({ length: 60 }, (_, n) => ({
          timestamp: Date.parse('2025-03-01T10:00:00Z') + n * 60_000,
          content: `older line ${n}`,
        })),
      });
      assert.equal(seeded.status, 200, seeded.text);
      const original = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'the original plan' },
      });
      assert.equal(original.status, 200, original.text);
      await postAttachment(server, bob.token, channelId, { filename: 'map.png', bytes: PNG, type: 'image/png' });
      const answer = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'an answer to it', message_reference: { message_id: original.body.id } },
      });
      assert.equal(answer.status, 200, answer.text);

      const context = await signedInContext(browser, alice);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();

      // Forward: the dialog lists where the person may write; the forward (a snapshot) arrives there, the words
      // after it as a message of their own.
      const plan = row(page, bob.username, 'the original plan');
      await press(plan.getByRole('button', { name: 'Forward', exact: true }));
      const dialog = page.getByRole('dialog', { name: 'Forward message' });
      await dialog.waitFor();
      await assertAccessible(page, 'forward dialog');
      await dialog.getByLabel('Forward to').selectOption({ label: '#random' });
      await dialog.getByLabel('Add a message (optional)').fill('have a look');
      await press(dialog.getByRole('button', { name: 'Send', exact: true }));
      await dialog.getByRole('status').filter({ hasText: 'Forwarded to #random.' }).waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      const forwarded = await request(server, 'GET', `/v1/channels/${random.body.id}/messages?limit=2`, {
        auth: bob.token,
      });
      assert.equal(forwarded.status, 200);
      const [words, forward] = forwarded.body;
      assert.equal(words.content, 'have a look');
      assert.deepEqual(forward.message_reference, {
        type: 1,
        message_id: original.body.id,
        channel_id: channelId,
        guild_id: guildId,
      });
      assert.equal(forward.content, '');
      assert.equal(forward.message_snapshots[0].message.content, 'the original plan');
      const bobName = bob.username;
      // In #random the forward reads "Forwarded" over the original's words.
      await page.goto(`${server.origin}/channels/${guildId}/${random.body.id}`);
      const shown = page.locator(`#message-${forward.id}`);
      await shown.locator('.forwarded-label').getByText('Forwarded').waitFor();
      await shown.getByText('the original plan').waitFor();
      assert.equal(await shown.getByRole('button', { name: 'Edit' }).count(), 0);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();

      // Copy message link: said on screen, and the clipboard holds the message's address.
      await press(plan.getByRole('button', { name: 'Copy message link' }));
      await plan.getByRole('status').filter({ hasText: 'Message link copied.' }).waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, `${server.origin}/channels/${guildId}/${channelId}/${original.body.id}`);

      // The reply's reference is named apart from "Reply" and takes the focus to the message it answers.
      const reply = row(page, bob.username, 'an answer to it');
      assert.equal(await reply.getByRole('button', { name: 'Reply', exact: true }).count(), 1);
      await press(reply.getByRole('button', { name: `Go to the replied message of ${bobName}` }));
      await page.waitForFunction((id) => document.activeElement?.id === `message-${id}`, original.body.id as string);

      // The lightbox: opened from the image's button, closed with Escape, the focus back on that button.
      const view = page.getByRole('button', { name: 'View image map.png' });
      await press(view);
      const lightbox = page.getByRole('dialog', { name: 'map.png' });
      await imageLoaded(lightbox.getByRole('img', { name: 'map.png' }));
      await assertAccessible(page, 'lightbox');
      await page.keyboard.press('Escape');
      await lightbox.waitFor({ state: 'detached' });
      assert.equal(await view.evaluate((el) => el === document.activeElement), true);

      // Scrolled up, two new messages: the bar says so and takes the person down to them.
      // Scrolled, and the list's scroll event handled (it fires at the next frame), before anything arrives: on a
      // busy machine a message could otherwise land while the list still counted itself at the bottom.
      await page.evaluate(async () => {
        const list = document.querySelector('.messages');
        if (!list) return;
        const scrolled = new Promise((resolve) => {
          list.addEventListener('scroll', resolve, { once: true });
          setTimeout(resolve, 2000);
        });
        list.scrollTop = 0;
        await scrolled;
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      });
      for (const content of ['news one', 'news two']) {
        const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: bob.token,
          body: { content },
        });
        assert.equal(sent.status, 200, sent.text);
      }
      const bar = page.getByRole('button', { name: '2 new messages — jump to the present' });
      await press(bar);
      await bar.waitFor({ state: 'detached' });
      await page.locator('.message-list').getByText('news two', { exact: true }).waitFor();
      await page.waitForFunction(() => {
        const list = document.querySelector('.messages');
        return !!list && list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      });

      // Search by keyboard: "in:" from the suggestions, completed with the channel, then Enter.
      const search = page.getByRole('searchbox', { name: 'Search' });
      await search.focus();
      await page.keyboard.type('plan in');
      const hints = page.getByRole('listbox', { name: 'Search filters' });
      await hints.getByRole('option', { name: /^in:/ }).waitFor();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.keyboard.type('general');
      await page.keyboard.press('Enter');
      const results = page.getByRole('list', { name: 'Search results' });
      await results.getByText('the original plan').waitFor();
      await page.getByRole('status').filter({ hasText: '1 result' }).waitFor();
      await assertAccessible(page, 'search results');
      await context.close();
    });
  });
}
