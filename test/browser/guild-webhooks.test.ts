import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { as, ok } from '../support/chat.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  imageLoaded,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Server settings → Webhooks in Chromium: create (URL shown once, and it posts), edit (name, channel, avatar),
 * delete; hidden without the right.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/guild-webhooks.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** A 1×1 PNG: the webhook's avatar. */
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

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

    it('renames a webhook, moves it to another channel, gives it an avatar and takes it away', async () => {
      const owner = await registerUser(server);
      const { guildId, channelId } = await guildWith(server, 'Hooks edited', owner);
      const second = await ok(as(server, owner, 'POST', `/guilds/${guildId}/channels`, { name: 'deploys', type: 0 }));
      const hook = await ok(as(server, owner, 'POST', `/channels/${channelId}/webhooks`, { name: 'CI bot' }));
      const context = await signedInContext(browser, owner);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page
        .getByRole('navigation', { name: 'Settings sections' })
        .getByRole('button', { name: 'Webhooks' })
        .click();
      const list = page.getByRole('list', { name: 'Webhooks of this server' });
      await list.getByText('posts in #general').waitFor();

      await page.getByRole('button', { name: 'Edit webhook CI bot' }).click();
      const form = page.getByRole('form', { name: 'Webhook CI bot' });
      assert.equal(await form.getByLabel('New name').inputValue(), 'CI bot');
      assert.equal(await form.getByLabel('Move to channel').inputValue(), channelId);
      await form.getByText('No avatar').waitFor();
      await form.getByLabel('New name').fill('Deploy bot');
      await form.getByLabel('Move to channel').selectOption({ label: '#deploys' });
      await form.getByLabel('Avatar').setInputFiles({ name: 'hook.png', mimeType: 'image/png', buffer: PNG });
      await form.getByRole('img', { name: 'Preview' }).waitFor();
      await assertAccessible(page, 'server settings, editing a webhook');
      await form.getByRole('button', { name: 'Save webhook' }).click();
      await page.getByText('The webhook Deploy bot was saved.').waitFor();
      await list.getByText('Deploy bot').waitFor();
      await list.getByText('posts in #deploys').waitFor();
      assert.equal(await form.count(), 0, 'the editor closes');
      const saved = await ok(as(server, owner, 'GET', `/webhooks/${hook.id}`));
      assert.equal(saved.name, 'Deploy bot');
      assert.equal(saved.channel_id, second.id);
      assert.match(saved.avatar, /^[0-9a-f]+$/);
      // The row shows the picture, from the media proxy.
      const avatar = list.locator(`img[src*="/avatars/${hook.id}/${saved.avatar}."]`);
      await imageLoaded(avatar);

      // It posts in the new channel, under its new name.
      const posted = await request(server, 'POST', `/v1/webhooks/${hook.id}/${hook.token}?wait=true`, {
        body: { content: 'moved' },
      });
      assert.equal(posted.status, 200, posted.text);
      assert.equal(posted.body.channel_id, second.id);
      assert.equal(posted.body.author.username, 'Deploy bot');

      // The avatar taken away: the editor shows it first, then "No avatar".
      await page.getByRole('button', { name: 'Edit webhook Deploy bot' }).click();
      const again = page.getByRole('form', { name: 'Webhook Deploy bot' });
      await imageLoaded(again.getByRole('img', { name: 'Preview' }));
      await again.getByRole('button', { name: 'Remove avatar' }).click();
      await again.getByText('No avatar').waitFor();
      await again.getByRole('button', { name: 'Save webhook' }).click();
      await page.getByText('The webhook Deploy bot was saved.').waitFor();
      assert.equal(await list.locator('img').count(), 0);
      assert.equal((await ok(as(server, owner, 'GET', `/webhooks/${hook.id}`))).avatar, null);

      // Cancel leaves it as it was; a name cleared cannot be saved.
      await page.getByRole('button', { name: 'Edit webhook Deploy bot' }).click();
      await again.getByLabel('New name').fill('');
      assert.equal(await again.getByRole('button', { name: 'Save webhook' }).isDisabled(), true);
      await again.getByRole('button', { name: 'Cancel' }).click();
      assert.equal(await again.count(), 0);
      await list.getByText('Deploy bot').waitFor();

      await page.getByRole('button', { name: 'Delete webhook Deploy bot' }).click();
      await page.getByText('The webhook Deploy bot was deleted.').waitFor();
      assert.equal((await as(server, owner, 'GET', `/webhooks/${hook.id}`)).status, 404);
      await context.close();
    });
  });
}
