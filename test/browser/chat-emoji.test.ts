import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
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

/** The chat client's emoji picker (issue 18) in Chromium, two people, against a real server. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-emoji.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const signedIn = (user: TestUser): Promise<BrowserContext> => signedInContext(browser, user);

  const guildWith = (owner: TestUser, ...members: TestUser[]) =>
    sharedGuildWith(server, 'Hearthside', owner, ...members);

  /** A 1×1 PNG: the guild's custom emoji. */
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  const composer = (page: Page) => page.getByRole('textbox', { name: 'Message #general' });
  const picker = (page: Page) => page.getByRole('dialog', { name: 'Emoji picker' });
  /** The name of the emoji the picker's search field points at. */
  const activeEmoji = (page: Page) =>
    picker(page)
      .getByRole('searchbox', { name: 'Find emoji' })
      .evaluate((input) => {
        const id = input.getAttribute('aria-activedescendant');
        return id ? document.getElementById(id)?.getAttribute('aria-label') : null;
      });

  describe('the emoji picker in the browser', () => {
    it('puts a custom emoji into a sent message, moves by keyboard and reacts with a standard emoji', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(alice, bob);
      const created = await request(server, 'POST', `/v1/guilds/${guildId}/emojis`, {
        auth: alice.token,
        body: { name: 'hearth_spark', image: `data:image/png;base64,${PNG.toString('base64')}` },
      });
      assert.equal(created.status, 200);
      const emojiId = created.body.id as string;

      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      const errors = watchConsole(a);
      await Promise.all([
        a.goto(`${server.origin}/channels/${guildId}/${channelId}`),
        b.goto(`${server.origin}/channels/${guildId}/${channelId}`),
      ]);
      await Promise.all([composer(a).waitFor(), composer(b).waitFor()]);

      // The composer's Emoji button opens the picker with the focus in its search field.
      await composer(a).fill('Look ');
      const button = a.getByRole('button', { name: 'Emoji', exact: true });
      await button.click();
      assert.equal(await button.getAttribute('aria-expanded'), 'true');
      await picker(a).waitFor();
      assert.equal(await a.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Find emoji');
      // The guild's own emojis come first, under the guild's name, then the standard categories.
      await picker(a)
        .getByRole('group', { name: 'Emojis of Hearthside' })
        .getByRole('option', { name: ':hearth_spark:' })
        .waitFor();
      assert.equal(await activeEmoji(a), ':hearth_spark:');
      await assertAccessible(a, 'emoji picker');

      // Arrow keys: right to the first smiley, down one row of eight.
      await a.keyboard.press('ArrowRight');
      assert.equal(await activeEmoji(a), ':grinning:');
      await a.keyboard.press('ArrowDown');
      assert.equal(await activeEmoji(a), ':slight_smile:');
      await a.keyboard.press('ArrowUp');
      await a.keyboard.press('ArrowUp');
      assert.equal(await activeEmoji(a), ':hearth_spark:');
      // A category button moves to its first emoji.
      await picker(a).getByRole('button', { name: 'Food and drink' }).click();
      assert.equal(await activeEmoji(a), ':apple:');

      // Searching and Enter insert the custom emoji where the caret was; the picker closes.
      await picker(a).getByRole('searchbox', { name: 'Find emoji' }).fill('spark');
      // Names that start with the words first (:sparkles: …), the others after (:hearth_spark:).
      assert.equal(await activeEmoji(a), ':sparkles:');
      assert.equal(await picker(a).getByRole('option').last().getAttribute('aria-label'), ':hearth_spark:');
      await picker(a).getByRole('searchbox', { name: 'Find emoji' }).fill('hearth');
      await picker(a).getByRole('option', { name: ':hearth_spark:', selected: true }).waitFor();
      assert.equal(await picker(a).getByRole('option').count(), 1);
      await a.keyboard.press('Enter');
      await picker(a).waitFor({ state: 'detached' });
      assert.equal(await composer(a).inputValue(), `Look <:hearth_spark:${emojiId}>`);
      // The composer takes the focus back on the next animation frame after the picker closes.
      await a.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message #general');
      await composer(a).press('Enter');

      // Bob sees the emoji's image in the message.
      const shown = b.locator('.message-list .content').getByRole('img', { name: ':hearth_spark:' });
      await shown.waitFor();
      assert.equal(await shown.getAttribute('src'), `/media/emojis/${emojiId}.png`);
      await b.waitForFunction((id) => {
        const img = document.querySelector<HTMLImageElement>(`.message-list img[src="/media/emojis/${id}.png"]`);
        return !!img && img.complete && img.naturalWidth === 1;
      }, emojiId);

      // :shortcode: completion offers the guild's emoji too.
      await composer(a).pressSequentially(':hearth');
      await a.getByRole('option', { name: ':hearth_spark:' }).waitFor();
      await composer(a).press('Tab');
      assert.equal(await composer(a).inputValue(), `<:hearth_spark:${emojiId}> `);
      await composer(a).fill('');
      // Text selected before the completion's caret frame stays selected (Ctrl+A then Delete must clear the box):
      // the completion and the selection in one task, as a slow frame makes them.
      await composer(a).pressSequentially(':hearth');
      await a.getByRole('option', { name: ':hearth_spark:' }).waitFor();
      const selection = await a.evaluate(async () => {
        const box = document.activeElement as HTMLTextAreaElement;
        box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', bubbles: true, cancelable: true }));
        await Promise.resolve();
        const completed = box.value;
        box.select();
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
        return { completed, start: box.selectionStart, end: box.selectionEnd, length: box.value.length };
      });
      assert.deepEqual(selection, {
        completed: `<:hearth_spark:${emojiId}> `,
        start: 0,
        end: selection.completed.length,
        length: selection.completed.length,
      });
      await composer(a).fill('');

      // Bob reacts with a standard emoji from the full picker of the message's reactions; Alice sees it live.
      const message = b.locator('.message', { hasText: 'Look' });
      await message.hover();
      await message.getByRole('button', { name: 'Add reaction' }).click();
      await message.getByRole('button', { name: 'More reactions' }).click();
      await picker(b).getByRole('searchbox', { name: 'Find emoji' }).fill('rock');
      await picker(b).getByRole('option', { name: ':rocket:', selected: true }).waitFor();
      await assertAccessible(b, 'emoji picker of a message');
      await b.keyboard.press('Enter');
      await picker(b).waitFor({ state: 'detached' });
      // The focus is back on the message (not lost to the page's start).
      await b.waitForFunction(() => document.activeElement?.matches('.message-list > li.message') === true);
      assert.match((await b.evaluate(() => document.activeElement?.textContent)) ?? '', /Look/);
      const mine = message.getByRole('button', { name: '🚀: 1 reaction' });
      await mine.waitFor();
      assert.equal(await mine.getAttribute('aria-pressed'), 'true');
      const theirs = a.locator('.message', { hasText: 'Look' }).getByRole('button', { name: '🚀: 1 reaction' });
      await theirs.waitFor();
      assert.equal(await theirs.getAttribute('aria-pressed'), 'false');

      // Escape closes the picker without picking and gives the focus back to the composer.
      await composer(a).click();
      await button.click();
      await picker(a).waitFor();
      await a.keyboard.press('Escape');
      await picker(a).waitFor({ state: 'detached' });
      assert.equal(await composer(a).inputValue(), '');
      await a.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Message #general');
      assert.deepEqual(errors, []);
      await Promise.all([ca.close(), cb.close()]);
    });
  });
}
