import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { friendsWithDm } from '../support/chat.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  serverAndChromium,
  guildWith as sharedGuildWith,
  signedInContext,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

/** The chat client's message search and emoji picker (issue 18) in Chromium, against a real server. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-search.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const signedIn = (user: TestUser): Promise<BrowserContext> => signedInContext(browser, user);

  const guildWith = (owner: TestUser, ...members: TestUser[]) =>
    sharedGuildWith(server, 'Hearthside', owner, ...members);

  /** Back-dated messages (the test harness writes them with ids of their time, as if sent then). */
  async function seed(channelId: string, author: TestUser, messages: { at: string; content: string }[]) {
    const res = await harness(server, 'POST', '/messages/seed', {
      channel_id: channelId,
      author_id: author.id,
      messages: messages.map((m) => ({ timestamp: m.at, content: m.content })),
    });
    assert.equal(res.status, 200);
    return (res.body.messages as { message_id: string }[]).map((m) => m.message_id);
  }

  const searchBox = (page: Page) => page.getByRole('searchbox', { name: 'Search' });
  const results = (page: Page) => page.getByRole('region', { name: 'Search results' });
  const hits = (page: Page) => results(page).getByRole('list', { name: 'Search results' }).getByRole('listitem');

  async function search(page: Page, query: string) {
    await searchBox(page).fill(query);
    await searchBox(page).press('Enter');
  }

  describe('message search in the browser', () => {
    it('finds by word and by from:, pages, says when nothing matches, and a result jumps to its message', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(alice, bob);
      const [foxId] = await seed(channelId, alice, [
        { at: '2024-03-01T12:00:00.000Z', content: 'The quick brown fox jumps over the lazy dog' },
      ]);
      await seed(channelId, bob, [{ at: '2024-03-02T12:00:00.000Z', content: 'Lunch at noon, anyone?' }]);
      // Sixty newer messages: the fox is far out of the first page of history, so the jump must load back.
      await seed(
        channelId,
        alice,
        Array.from({ length: 60 }, (_, i) => ({
          at: new Date(Date.parse('2024-03-03T00:00:00.000Z') + i * 60_000).toISOString(),
          content: `filler number ${i}`,
        })),
      );

      const context = await signedIn(alice);
      const page = await context.newPage();
      const errors = watchConsole(page);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.locator('.message-list .content', { hasText: 'filler number 59' }).waitFor();
      assert.equal(await page.locator('.message-list .content', { hasText: 'quick brown fox' }).count(), 0);

      // Ctrl+F comes to the search box.
      await page.getByRole('textbox', { name: 'Message #general' }).click();
      await page.keyboard.press('Control+f');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Search');

      // By word: one hit, with its author, channel, time and the word marked.
      await search(page, 'fox');
      await results(page).getByRole('status').getByText('1 result', { exact: true }).waitFor();
      assert.equal(await hits(page).count(), 1);
      const fox = hits(page).first();
      const foxText = await fox.innerText();
      assert.match(foxText, new RegExp(alice.username));
      assert.match(foxText, /#general/);
      assert.match(foxText, /2024/);
      assert.match(foxText, /The quick brown fox jumps over the lazy dog/);
      assert.deepEqual(await fox.locator('mark').allInnerTexts(), ['fox']);

      // The filter hints: "fro" offers from:, then Bob's name completes it.
      await searchBox(page).fill('fro');
      await page
        .getByRole('listbox', { name: 'Search filters' })
        .getByRole('option', { name: /^from:/ })
        .waitFor();
      await searchBox(page).press('ArrowDown');
      await searchBox(page).press('Enter');
      assert.equal(await searchBox(page).inputValue(), 'from:');
      await searchBox(page).pressSequentially(bob.username.slice(0, 5));
      await page.getByRole('option', { name: new RegExp(`from:${bob.username}`) }).waitFor();
      await searchBox(page).press('ArrowDown');
      await searchBox(page).press('Enter');
      assert.equal(await searchBox(page).inputValue(), `from:${bob.username} `);
      await assertAccessible(page, 'search box with its filter hints');
      await searchBox(page).press('Enter');
      await hits(page).filter({ hasText: 'Lunch at noon' }).waitFor();
      assert.equal(await hits(page).count(), 1);
      assert.match(await hits(page).first().innerText(), new RegExp(bob.username));

      // Nothing matches.
      await search(page, 'zebra');
      await results(page).getByText('No results for “zebra”.').waitFor();
      assert.equal(await hits(page).count(), 0);
      await assertAccessible(page, 'search without results');

      // A filter that names nobody is said so, and nothing is searched.
      await search(page, 'from:nobody_by_that_name');
      await results(page).getByRole('alert').getByText('from: nobody called “nobody_by_that_name” here.').waitFor();

      // Pages of 25, newest first.
      await search(page, 'filler');
      await results(page).getByText('Page 1 of 3').waitFor();
      assert.equal(await hits(page).count(), 25);
      assert.match(await hits(page).first().innerText(), /filler number 59/);
      await results(page).getByRole('button', { name: 'Next' }).click();
      await results(page).getByText('Page 2 of 3').waitFor();
      await hits(page).first().filter({ hasText: 'filler number 34' }).waitFor();
      assert.equal(await hits(page).count(), 25);

      // A result opens its message: history loads back to it, it is in view and highlighted.
      await search(page, 'quick fox');
      await hits(page).filter({ hasText: 'quick brown fox' }).waitFor();
      await assertAccessible(page, 'search results');
      await hits(page).first().getByRole('button').click();
      await page.waitForURL(`**/channels/${guildId}/${channelId}/${foxId}`);
      const target = page.locator(`#message-${foxId}`);
      await target.and(page.locator('.highlighted')).waitFor();
      assert.ok(await target.isVisible());
      const box = await target.boundingBox();
      const viewport = page.viewportSize();
      assert.ok(box && viewport && box.y >= 0 && box.y + box.height <= viewport.height, 'the message is in view');
      // The results stay beside the messages: after scrolling away, the same result brings it back.
      assert.equal(await hits(page).count(), 1);
      const inView = () =>
        target.evaluate((el) => {
          const list = el.closest('.messages')?.getBoundingClientRect();
          const row = el.getBoundingClientRect();
          return !!list && row.top >= list.top && row.bottom <= list.bottom;
        });
      await page.locator('.messages').evaluate((el) => {
        el.scrollTop = el.scrollHeight;
      });
      await page.waitForFunction((id) => {
        const row = document.getElementById(`message-${id}`)?.getBoundingClientRect();
        return !!row && row.bottom < 0;
      }, foxId);
      assert.equal(await inView(), false);
      await hits(page).first().getByRole('button').click();
      await page.waitForFunction((id) => document.activeElement?.id === `message-${id}`, foxId);
      assert.equal(await inView(), true);
      // Escape in the search box closes them.
      await searchBox(page).focus();
      await searchBox(page).press('Escape');
      await results(page).waitFor({ state: 'detached' });
      assert.deepEqual(errors, []);
      await context.close();
    });

    it('searches a DM with the channel form of the route, and on a phone', async () => {
      const { alice, bob, channelId } = await friendsWithDm(server);
      for (const content of ['secret plans for saturday', 'nothing to see']) {
        const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: bob.token,
          body: { content },
        });
        assert.equal(sent.status, 200);
      }
      const context = await signedIn(alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/@me/${channelId}`);
      await page.locator('.message-list .content', { hasText: 'nothing to see' }).waitFor();
      await search(page, 'Saturday');
      await hits(page).filter({ hasText: 'secret plans for saturday' }).waitFor();
      assert.equal(await hits(page).count(), 1);
      assert.deepEqual(await hits(page).first().locator('mark').allInnerTexts(), ['saturday']);

      // On a 375 px phone the results cover the messages; opening one closes them and shows the message.
      await page.setViewportSize({ width: 375, height: 740 });
      const panel = await results(page).boundingBox();
      assert.ok(panel && panel.x <= 1 && panel.width >= 370, `the results fill the width: ${JSON.stringify(panel)}`);
      await assertAccessible(page, 'search results on a phone');
      await hits(page).first().getByRole('button').click();
      await results(page).waitFor({ state: 'detached' });
      await page.locator('.message.highlighted', { hasText: 'secret plans for saturday' }).waitFor();
      await context.close();
    });
  });
}
