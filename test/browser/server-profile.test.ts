import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  launchChromium,
  newContext,
  startWebServer,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The own server profile in Chromium: a plain member opens the server settings, sets a nickname, an avatar and
 * a bio for this server only; the API reads them back on the member; axe on the section.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/server-profile.test.ts');
} else {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  describe('server profile', () => {
    let server: TestServer & { origin: string };
    let owner: TestUser;
    let member: TestUser;
    let guildId: string;
    let page: Page;
    before(async () => {
      server = await startWebServer();
      [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Cafe' } });
      guildId = guild.body.id as string;
      const channelId = guild.body.system_channel_id as string;
      const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
        auth: owner.token,
        body: {},
      });
      const joined = await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token, body: {} });
      assert.equal(joined.status, 200, joined.text);
      const context = await newContext(browser);
      await context.addInitScript(
        ([token, userId]) => {
          if (!window.localStorage.getItem('hearth.session'))
            window.localStorage.setItem('hearth.session', JSON.stringify({ token, userId }));
        },
        [member.token, member.id],
      );
      page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
    });
    after(async () => {
      await server?.close();
    });

    it('lets a member without any moderation permission set their nickname, avatar and bio here', async () => {
      await page.getByRole('link', { name: 'Server settings' }).click();
      const nav = page.getByRole('navigation', { name: 'Settings sections' });
      await nav.getByRole('button', { name: 'Server profile', exact: true }).click();
      const form = page.getByRole('form', { name: 'Your server profile' });
      await form.waitFor();
      await form.getByLabel('Server nickname').fill('Barista');
      await form.getByLabel('Server avatar', { exact: true }).setInputFiles({
        name: 'me.png',
        mimeType: 'image/png',
        buffer: PNG,
      });
      await form.getByRole('img', { name: 'Server avatar preview' }).waitFor();
      await form.getByLabel('Server bio').fill('Coffee first.');
      await assertAccessible(page, 'server settings: server profile');
      await form.getByRole('button', { name: 'Save profile' }).click();
      await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const res = await request(server, 'GET', `/v1/guilds/${guildId}/members/${member.id}`, { auth: owner.token });
      assert.equal(res.status, 200);
      assert.equal(res.body.nick, 'Barista');
      assert.match(res.body.avatar, /^[0-9a-f]{8}$/);
      assert.equal(res.body.bio, 'Coffee first.');
      // The preview now comes from the media proxy.
      const preview = form.getByRole('img', { name: 'Server avatar preview' });
      assert.equal(
        await preview.getAttribute('src'),
        `${server.origin}/media/guilds/${guildId}/users/${member.id}/avatars/${res.body.avatar}.webp?size=64`,
      );
    });
  });
}
