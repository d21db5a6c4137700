import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, guildWith, serverAndChromium, signedInContext, warnNoChromium } from './support/browser.ts';

/**
 * Someone else's new name shows at once, without a reload (docs/gateway.md#user-changes): in the member list,
 * on their messages and in the DM list, from GUILD_MEMBER_UPDATE and PRESENCE_UPDATE.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-user-changes.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const PNG =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

  async function rename(user: TestUser, body: Record<string, unknown>): Promise<void> {
    const res = await request(server, 'PATCH', '/v1/users/@me', { auth: user.token, body });
    assert.equal(res.status, 200, res.text);
  }

  describe('a renamed user', () => {
    it('shows under the new name in the member list, on their messages and in the DM list', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      await rename(alice, { global_name: 'Alice Before' });
      const { guildId, channelId } = await guildWith(server, 'Renames', alice, bob);
      const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'hello from alice' },
      });
      assert.equal(posted.status, 200, posted.text);
      const dm = await request(server, 'POST', '/v1/users/@me/channels', {
        auth: alice.token,
        body: { recipient_id: bob.id },
      });
      assert.equal(dm.status, 200, dm.text);
      const said = await request(server, 'POST', `/v1/channels/${dm.body.id}/messages`, {
        auth: alice.token,
        body: { content: 'a direct word' },
      });
      assert.equal(said.status, 200, said.text);

      const context = await signedInContext(browser, bob);
      // Each wait is for a visible state; the machine may be loaded, so they may take longer than the default.
      context.setDefaultTimeout(30_000);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const members = page.getByRole('complementary', { name: 'Members' });
      const authorOf = (text: string) =>
        page.locator(`#message-${posted.body.id}`).locator('button.author', { hasText: text });
      await members.getByRole('button', { name: /^Alice Before\b/ }).waitFor();
      await authorOf('Alice Before').waitFor();

      await rename(alice, { global_name: 'Alice After', avatar: PNG });
      await members.getByRole('button', { name: /^Alice After\b/ }).waitFor();
      await authorOf('Alice After').waitFor();
      assert.equal(await members.getByRole('button', { name: /^Alice Before\b/ }).count(), 0);

      // The DM list, reached without reloading the page.
      await page.locator('.rail-item.home').click();
      const dmLink = page.locator(`a.channel-link[data-channel-id="${dm.body.id}"]`);
      await dmLink.filter({ hasText: 'Alice After' }).waitFor();

      await rename(alice, { global_name: 'Alice Third' });
      await dmLink.filter({ hasText: 'Alice Third' }).waitFor();
      await context.close();
    });
  });
}
