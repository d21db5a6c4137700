import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { GatewayClient } from '../gateway/gateway-client.ts';
import { harness, registerUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, guildWith, serverAndChromium, signedInContext, warnNoChromium } from './support/browser.ts';

/**
 * A large guild's member statuses (docs/web.md#member-list, docs/gateway.md#large-guilds): over 250 members the
 * server sends member presences only to sessions that follow the guild, so the web client subscribes (op 14)
 * to the guild on screen and reads the statuses of now (op 8); a member's status change shows live.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-large-guild-presence.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('member statuses of a large guild', () => {
    it('show who is online when the guild opens, and change live', async () => {
      // Names that sort before the seeded members' (`seed_…`), so the rows are among the first rendered.
      const early = () => ({ username: `a${Math.random().toString(36).slice(2, 10)}` });
      const [alice, bob, carol] = await Promise.all([
        registerUser(server, early()),
        registerUser(server),
        registerUser(server, early()),
      ]);
      const { guildId, channelId } = await guildWith(server, 'Crowd', alice, bob, carol);
      const seeded = await harness(server, 'POST', `/guilds/${guildId}/members/seed`, { count: 260 });
      assert.equal(seeded.status, 200, seeded.text);
      // Carol is online before Bob opens the guild: the guild payload (large) does not say so, op 8 does.
      const carolGw = GatewayClient.connect(server);
      await carolGw.ready(carol.token);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const list = page.getByRole('complementary', { name: 'Members' });
      const row = (user: { username: string }, status: string) =>
        // The row's text: the name, then its status (read out to screen readers, shown as a dot).
        list.locator('button.member', { hasText: new RegExp(`^${user.username}, ${status}$`) });
      await row(carol, 'online').waitFor();
      await row(alice, 'offline').waitFor();

      const aliceGw = GatewayClient.connect(server);
      await aliceGw.ready(alice.token);
      await row(alice, 'online').waitFor();
      aliceGw.send({ op: 3, d: { status: 'dnd', afk: false, since: null, activities: [] } });
      await row(alice, 'do not disturb').waitFor();
      await aliceGw.close(1000);
      await row(alice, 'offline').waitFor();
      await carolGw.close(1000);
      await context.close();
    });
  });
}
