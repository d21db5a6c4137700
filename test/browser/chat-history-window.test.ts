import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The chat history window (docs/web.md#the-history-window) in Chromium: scrolling far back drops the newest end
 * and offers "Jump to present"; a live message meanwhile does not land after the gap; a jump to a reply's
 * original outside the window loads the window around it.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-history-window.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** More than the window holds (400), so scrolling back to the start must drop the newest end; not a multiple of the
   * page (50), so the page that brings the first message is short and shows the channel's start at once. */
  const SEEDED = 610;

  /** `history 0` … `history 609`, one a minute in 2024 (ids of their time, as if sent then); their ids. */
  async function seedHistory(channelId: string, author: TestUser): Promise<string[]> {
    const start = Date.parse('2024-01-01T00:00:00.000Z');
    const res = await harness(server, 'POST', '/messages/seed', {
      channel_id: channelId,
      author_id: author.id,
      messages: Array.from({ length: SEEDED }, (_, n) => ({ timestamp: start + n * 60_000, content: `history ${n}` })),
    });
    assert.equal(res.status, 200, res.text);
    return (res.body.messages as { message_id: string }[]).map((m) => m.message_id);
  }

  const composer = (page: Page, name = 'general') => page.getByRole('textbox', { name: `Message #${name}` });
  const shown = (page: Page, text: string) => page.locator('.message-list .content').getByText(text, { exact: true });
  const jumpToPresent = (page: Page) => page.getByRole('button', { name: 'Jump to present' });

  /** Scrolls the history to its top until `done` holds (each poll scrolls again: older pages load on the way). */
  async function scrollUpUntil(page: Page, selector: string) {
    await page.waitForFunction(
      (sel) => {
        const el = document.querySelector('.messages');
        if (el) el.scrollTop = 0;
        return document.querySelector(sel) !== null;
      },
      selector,
      { polling: 100, timeout: 60_000 },
    );
  }

  async function scrollDownUntil(page: Page, text: string) {
    await page.waitForFunction(
      (wanted) => {
        const el = document.querySelector('.messages');
        if (el) el.scrollTop = el.scrollHeight;
        return [...document.querySelectorAll('.message-list .content')].some((c) => c.textContent === wanted);
      },
      text,
      { polling: 100, timeout: 60_000 },
    );
  }

  describe('the chat history window', () => {
    it('drops the newest end far back, keeps a live message out of the gap, and comes back to the present', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Archive', alice, bob);
      const elsewhere = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'elsewhere', type: 0 },
      });
      assert.equal(elsewhere.status, 200, elsewhere.text);
      const ids = await seedHistory(channelId, alice);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();
      await shown(page, `history ${SEEDED - 1}`).waitFor();
      assert.equal(await jumpToPresent(page).count(), 0);

      // Back to the very first message: the window keeps at most 400, so the newest are gone from the page.
      await scrollUpUntil(page, `#message-${ids[0]}`);
      await jumpToPresent(page).waitFor();
      assert.equal(await shown(page, `history ${SEEDED - 1}`).count(), 0);
      const held = await page.locator('.message-list > li.message').count();
      assert.ok(held <= 400, `${held} messages on the page`);
      await page.getByText(/^Welcome to general$/).waitFor();
      await assertAccessible(page, 'history scrolled far back, with "Jump to present"');

      // Alice posts while Bob is far back: it must not appear after the last message held (a gap lies between).
      const live = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'live while far back' },
      });
      assert.equal(live.status, 200, live.text);
      // Then in another channel: once Bob's tab shows that one unread, it has handled the first one too.
      const marker = await request(server, 'POST', `/v1/channels/${elsewhere.body.id}/messages`, {
        auth: alice.token,
        body: { content: 'over here' },
      });
      assert.equal(marker.status, 200, marker.text);
      await page.getByRole('link', { name: '#elsewhere, unread' }).waitFor();
      assert.equal(await shown(page, 'live while far back').count(), 0);

      // Scrolling down loads newer pages (dropping the oldest) up to the present, the live message last.
      await scrollDownUntil(page, 'live while far back');
      await jumpToPresent(page).waitFor({ state: 'detached' });
      assert.equal(await page.locator(`#message-${ids[0]}`).count(), 0);
      const texts = await page.locator('.message-list > li.message .content').allInnerTexts();
      assert.equal(texts.at(-1), 'live while far back');
      assert.equal(texts.at(-2), `history ${SEEDED - 1}`);
      assert.equal(new Set(texts).size, texts.length, 'no message twice');

      // Far back again, then the button: the newest page, scrolled to its bottom.
      await scrollUpUntil(page, `#message-${ids[0]}`);
      await jumpToPresent(page).click();
      await shown(page, 'live while far back').waitFor();
      await jumpToPresent(page).waitFor({ state: 'detached' });
      assert.equal(await page.locator(`#message-${ids[0]}`).count(), 0);
      await page.waitForFunction(() => {
        const el = document.querySelector('.messages');
        return !!el && el.scrollHeight - el.clientHeight - el.scrollTop < 40;
      });

      // At the present again, live messages join as before.
      const next = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'back at the present' },
      });
      assert.equal(next.status, 200, next.text);
      await shown(page, 'back at the present').waitFor();
      await context.close();
    });

    it("loads the window around a reply's original or a pinned message when it is not held, and highlights it", async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Archive', alice, bob);
      const ids = await seedHistory(channelId, alice);
      const original = ids[3] as string;
      const reply = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'answering an old one', message_reference: { message_id: original } },
      });
      assert.equal(reply.status, 200, reply.text);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();
      const replied = page.locator(`#message-${reply.body.id}`);
      await replied.waitFor();
      assert.equal(await page.locator(`#message-${original}`).count(), 0);

      await replied.locator('.reply-ref').click();
      await page.locator(`#message-${original}.highlighted`).waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.id), `message-${original}`);
      // The window around it: the start of the channel, not the newest end.
      await jumpToPresent(page).waitFor();
      assert.equal(await page.locator(`#message-${reply.body.id}`).count(), 0);
      await page.getByText(/^Welcome to general$/).waitFor();

      await jumpToPresent(page).click();
      await replied.waitFor();
      await jumpToPresent(page).waitFor({ state: 'detached' });

      // A pinned message far back: "Jump to the message" in the pinned messages opens its link, loaded around it.
      const pinnedId = ids[5] as string;
      const pin = await request(server, 'PUT', `/v1/channels/${channelId}/pins/${pinnedId}`, { auth: alice.token });
      assert.equal(pin.status, 204, pin.text);
      await page.getByRole('button', { name: 'Pinned messages' }).click();
      const pins = page.getByRole('dialog', { name: 'Pinned messages' });
      await pins
        .getByRole('listitem')
        .filter({ hasText: 'history 5' })
        .getByRole('button', { name: 'Jump to the message' })
        .click();
      await page.locator(`#message-${pinnedId}.highlighted`).waitFor();
      await page.waitForURL(`${server.origin}/channels/${guildId}/${channelId}/${pinnedId}`);
      await jumpToPresent(page).waitFor();

      // Back at the present, the same pin again: the address is already its link, and the jump still happens.
      await jumpToPresent(page).click();
      await jumpToPresent(page).waitFor({ state: 'detached' });
      assert.equal(await page.locator(`#message-${pinnedId}`).count(), 0);
      await page.getByRole('button', { name: 'Pinned messages' }).click();
      await pins
        .getByRole('listitem')
        .filter({ hasText: 'history 5' })
        .getByRole('button', { name: 'Jump to the message' })
        .click();
      await page.locator(`#message-${pinnedId}.highlighted`).waitFor();
      await context.close();
    });
  });
}
