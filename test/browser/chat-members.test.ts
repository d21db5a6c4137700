import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { harness, registerUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/** A large guild's member list (docs/web.md#member-list): a page of rows at a time, the rest as it is reached. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-members.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('member list of a large guild', () => {
    it('shows the first 100 members, then the rest as the end of the list is reached', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Crowd', alice, bob);
      const seeded = await harness(server, 'POST', `/guilds/${guildId}/members/seed`, { count: 248 });
      assert.equal(seeded.status, 200, seeded.text);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const list = page.getByRole('complementary', { name: 'Members' });
      const rows = list.getByRole('listitem');
      await list.getByRole('button', { name: 'Show 150 more members' }).waitFor();
      assert.equal(await rows.count(), 100);
      await assertAccessible(page, 'a large member list');
      // Reaching the end of the list (by scrolling, or the button) adds the next page, then the rest.
      await list.getByRole('button', { name: /^Show \d+ more members?$/ }).scrollIntoViewIfNeeded();
      await page.waitForFunction(() => document.querySelectorAll('.member-list li').length === 250);
      assert.equal(await list.getByRole('button', { name: /^Show \d+ more/ }).count(), 0);
      await context.close();
    });
  });
}
