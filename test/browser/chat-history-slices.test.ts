import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, guildWith, serverAndChromium, signedInContext, warnNoChromium } from './support/browser.ts';

/**
 * An older page put in a slice of rows at a time (docs/web.md#the-history-window), in Chromium: the row at the
 * top of the pane stays where it is while the rows go in above it, every older message ends up in the list in
 * order, and a channel switch during a load or mid-slice shows the new channel's messages only.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-history-slices.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** The rows the list puts in per animation frame (SLICE_ROWS in web/src/features/chat/older-slices.ts). */
  const SLICE_ROWS = 10;
  const PAGE = 50;

  /** `{prefix} 0` … `{prefix} {count - 1}`, one a minute in 2024 (ids of their time); their ids. */
  async function seed(channelId: string, author: TestUser, prefix: string, count: number): Promise<string[]> {
    const start = Date.parse('2024-01-01T00:00:00.000Z');
    const res = await harness(server, 'POST', '/messages/seed', {
      channel_id: channelId,
      author_id: author.id,
      messages: Array.from({ length: count }, (_, n) => ({ timestamp: start + n * 60_000, content: `${prefix} ${n}` })),
    });
    assert.equal(res.status, 200, res.text);
    return (res.body.messages as { message_id: string }[]).map((m) => m.message_id);
  }

  /**
   * A text channel of its own for the seeded history (the system channel also holds the "joined" messages of the
   * members); its id.
   */
  async function textChannel(guildId: string, owner: TestUser, name: string): Promise<string> {
    const res = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
      auth: owner.token,
      body: { name, type: 0 },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  const rowTexts = (page: Page) => page.locator('.message-list > li.message .content').allInnerTexts();
  const messageList = (page: Page, name: string) => page.getByRole('list', { name: `Messages in ${name}` });

  /**
   * Waits for `count` animation frames of the page. (Functions run in the page name no function of their own: the
   * test's TypeScript is compiled with a helper that keeps function names, which does not exist in the page.)
   */
  const frames = (page: Page, count: number) =>
    page.evaluate(async (wanted) => {
      for (let seen = 0; seen < wanted; seen++) await new Promise((resolve) => requestAnimationFrame(resolve));
    }, count);

  interface PageArrival {
    /** Rows added to the list per commit, in order. */
    batches: number[];
    /** The pane-top row's distance from where it was before the page came, after each commit and at the end. */
    drifts: number[];
    anchorText: string;
  }

  /**
   * Scrolls the pane to its top (which loads the next older page) and watches the list in the page until it
   * holds `rows` rows: the rows each commit added, and how far the row that was at the pane's top has moved
   * after each (read in the mutation observer, after React's layout effects, before the frame is painted).
   */
  function scrollBackOnePage(page: Page, rows: number): Promise<PageArrival> {
    return page.evaluate(
      (expected) =>
        new Promise<PageArrival>((resolve, reject) => {
          const pane = document.querySelector('.messages') as HTMLElement;
          const list = document.querySelector('.message-list') as HTMLElement;
          pane.scrollTop = 0;
          const paneTop = pane.getBoundingClientRect().top;
          const anchor = [...list.children].find((row) => row.getBoundingClientRect().bottom > paneTop);
          if (!anchor) throw new Error('no row at the top of the pane');
          // The pane does not move; the row does if the list fails to hold it.
          const before = anchor.getBoundingClientRect().top - paneTop;
          const batches: number[] = [];
          const drifts: number[] = [];
          let timer: ReturnType<typeof setTimeout> | undefined;
          const observer = new MutationObserver((records) => {
            let added = 0;
            for (const record of records) for (const node of record.addedNodes) if (node.nodeName === 'LI') added++;
            if (added === 0) return;
            batches.push(added);
            drifts.push(anchor.getBoundingClientRect().top - paneTop - before);
            if (list.children.length < expected) return;
            observer.disconnect();
            clearTimeout(timer);
            // Two frames later: nothing left to move it.
            requestAnimationFrame(() =>
              requestAnimationFrame(() => {
                drifts.push(anchor.getBoundingClientRect().top - paneTop - before);
                resolve({ batches, drifts, anchorText: anchor.querySelector('.content')?.textContent ?? '' });
              }),
            );
          });
          observer.observe(list, { childList: true });
          timer = setTimeout(() => {
            observer.disconnect();
            reject(new Error(`${list.children.length} of ${expected} rows after 30 s (batches ${batches})`));
          }, 30_000);
        }),
      rows,
    );
  }

  describe('older pages put in a slice at a time', () => {
    it('keeps the row at the top of the pane in place while a page goes in above it, newest first, until every message is there in order', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Slices', alice, bob);
      const channelId = await textChannel(guildId, alice, 'archive');
      // Five pages and a short one: the last older page (10) also reaches the channel's start.
      const SEEDED = 5 * PAGE + 10;
      const ids = await seed(channelId, alice, 'history', SEEDED);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #archive' }).waitFor();
      await page.locator(`#message-${ids[SEEDED - 1]}`).waitFor();
      assert.equal(await page.locator('.message-list > li.message').count(), PAGE);

      for (let held = PAGE; held < SEEDED; ) {
        const pageSize = Math.min(PAGE, SEEDED - held);
        const arrival = await scrollBackOnePage(page, held + pageSize);
        const label = `page ending at history ${SEEDED - held - 1}`;
        // The row that was at the top of the pane is the oldest one held before the page.
        assert.equal(arrival.anchorText, `history ${SEEDED - held}`, label);
        const sum = arrival.batches.reduce((a, b) => a + b, 0);
        assert.equal(sum, pageSize, `${label}: rows added ${arrival.batches}`);
        assert.ok(
          arrival.batches.every((n) => n <= SLICE_ROWS),
          `${label}: the page went in ${SLICE_ROWS} rows at a time at most (${arrival.batches})`,
        );
        assert.equal(arrival.batches.length, Math.ceil(pageSize / SLICE_ROWS), `${label}: ${arrival.batches}`);
        const worst = Math.max(...arrival.drifts.map(Math.abs));
        assert.ok(worst <= 2, `${label}: the row at the top moved by ${arrival.drifts.join(', ')} px`);
        held += pageSize;
      }

      // Every message, in order, once; and the channel's start above them.
      await page.getByText(/^Welcome to archive$/).waitFor();
      assert.deepEqual(
        await rowTexts(page),
        Array.from({ length: SEEDED }, (_, n) => `history ${n}`),
      );
      assert.equal(await messageList(page, 'archive').count(), 1);
      await context.close();
    });

    it('shows only the new channel after a switch during a load or in the middle of a page going in', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Slices', alice, bob);
      const channelId = await textChannel(guildId, alice, 'archive');
      const elsewhereId = await textChannel(guildId, alice, 'elsewhere');
      const ids = await seed(channelId, alice, 'history', 4 * PAGE);
      await seed(elsewhereId, alice, 'elsewhere', 5);
      const elsewhereTexts = Array.from({ length: 5 }, (_, n) => `elsewhere ${n}`);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.locator(`#message-${ids.at(-1)}`).waitFor();

      // During a load: the older page of #archive is held on its way until #elsewhere is on screen.
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let requested: () => void = () => undefined;
      const olderRequested = new Promise<void>((resolve) => {
        requested = resolve;
      });
      const olderPage = (url: URL) =>
        url.pathname === `/v1/channels/${channelId}/messages` && url.searchParams.has('before');
      await page.route(olderPage, async (route) => {
        requested();
        await released;
        await route.continue();
      });
      await page.evaluate(() => {
        (document.querySelector('.messages') as HTMLElement).scrollTop = 0;
      });
      await olderRequested;
      await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor();
      const answered = page.waitForResponse((res) => olderPage(new URL(res.url())));
      await page.getByRole('link', { name: /^#elsewhere/ }).click();
      await page.getByRole('textbox', { name: 'Message #elsewhere' }).waitFor();
      await messageList(page, 'elsewhere').waitFor();
      assert.deepEqual(await rowTexts(page), elsewhereTexts);
      release();
      await answered;
      // Frames enough for a page of #archive to have gone in, had anything been left to put it there.
      await frames(page, 2 * (PAGE / SLICE_ROWS));
      assert.deepEqual(await rowTexts(page), elsewhereTexts);
      assert.equal(await messageList(page, 'archive').count(), 0);
      await page.unroute(olderPage);

      // Mid-slice: back in #archive (its 100 messages held), a page starts going in above, and the first slice
      // to land clicks #elsewhere's link in the same task.
      await page.getByRole('link', { name: /^#archive/ }).click();
      await page.locator(`#message-${ids.at(-1)}`).waitFor();
      await page
        .locator('.message-list > li.message')
        .nth(2 * PAGE - 1)
        .waitFor();
      const link = page.getByRole('link', { name: /^#elsewhere/ });
      const linkHref = await link.getAttribute('href');
      const rowsAtSwitch = await page.evaluate(
        ({ href, before }) =>
          new Promise<number>((resolve) => {
            const list = document.querySelector('.message-list') as HTMLElement;
            const observer = new MutationObserver(() => {
              const rows = list.querySelectorAll(':scope > li.message').length;
              if (rows === before) return;
              observer.disconnect();
              (document.querySelector(`a[href="${href}"]`) as HTMLElement).click();
              resolve(rows);
            });
            observer.observe(list, { childList: true });
            (document.querySelector('.messages') as HTMLElement).scrollTop = 0;
          }),
        { href: linkHref, before: 2 * PAGE },
      );
      assert.ok(
        rowsAtSwitch > 2 * PAGE && rowsAtSwitch < 3 * PAGE,
        `the switch came with ${rowsAtSwitch} rows of #archive on the page, mid-page`,
      );
      await messageList(page, 'elsewhere').waitFor();
      assert.deepEqual(await rowTexts(page), elsewhereTexts);
      await frames(page, 2 * (PAGE / SLICE_ROWS));
      assert.deepEqual(await rowTexts(page), elsewhereTexts);
      assert.equal(await messageList(page, 'archive').count(), 0);
      await context.close();
    });
  });
}
