import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/** Server settings → Webhooks in Chromium: create (URL shown once, and it posts), delete; hidden without the right. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/guild-webhooks.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('guild webhooks', () => {
    it('creates a webhook whose shown URL posts in the channel, then deletes it', async () => {
      const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hooks', owner, member);
      const context = await signedInContext(browser, owner);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page
        .getByRole('navigation', { name: 'Settings sections' })
        .getByRole('button', { name: 'Webhooks' })
        .click();
      await page.getByText('This server has no webhooks.').waitFor();
      await page.getByLabel('Webhook name').fill('CI bot');
      assert.equal(await page.getByLabel('Channel it posts in').inputValue(), channelId);
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByText('The webhook CI bot was created.').waitFor();
      const url = await page.getByLabel('Webhook URL').inputValue();
      await page.getByRole('button', { name: 'Copy webhook url' }).waitFor();
      await page.getByRole('list', { name: 'Webhooks of this server' }).getByText('CI bot').waitFor();
      await assertAccessible(page, 'server settings, webhooks');

      // The URL is the webhook's: a POST to it (path from the page's URL) lands in the channel.
      const posted = await request(server, 'POST', `${new URL(url).pathname}?wait=true`, {
        body: { content: 'from the webhook' },
      });
      assert.equal(posted.status, 200, posted.text);
      assert.equal(posted.body.channel_id, channelId);
      assert.equal(posted.body.content, 'from the webhook');

      await page.getByRole('button', { name: 'Delete webhook CI bot' }).click();
      await page.getByText('The webhook CI bot was deleted.').waitFor();
      await page.getByText('This server has no webhooks.').waitFor();
      const left = await request(server, 'GET', `/v1/guilds/${guildId}/webhooks`, { auth: owner.token });
      assert.deepEqual(left.body, []);
      await context.close();

      // A member without MANAGE_WEBHOOKS has no such section.
      const memberContext = await signedInContext(browser, member);
      const memberPage = await memberContext.newPage();
      await memberPage.goto(`${server.origin}/channels/${guildId}/settings`);
      const sections = memberPage.getByRole('navigation', { name: 'Settings sections' });
      await sections.getByRole('button', { name: 'Server profile' }).waitFor();
      assert.equal(await sections.getByRole('button', { name: 'Webhooks' }).count(), 0);
      await memberContext.close();
    });
  });
}
