import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Locator } from 'playwright-core';
import sharp from 'sharp';
import { setAcls } from '../support/admin.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  h1,
  imageLoaded,
  newContext,
  serverAndChromium,
  signedInPage,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Pictures outside the chat (docs/web.md#pictures): the guild's icon on the invite landing page (signed out), and
 * the avatars and icons on the admin pages that list users and reports.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/pictures-elsewhere.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const pngUri = async (colour: string) =>
    `data:image/png;base64,${(
      await sharp({ create: { width: 128, height: 128, channels: 3, background: colour } })
        .png()
        .toBuffer()
    ).toString('base64')}`;

  async function patch(user: TestUser, path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await request(server, 'PATCH', path, { auth: user.token, body });
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  /** The `src` of the loaded image inside `picture`, once decoded. */
  async function loadedSrc(picture: Locator): Promise<string> {
    const image = picture.locator('img');
    await imageLoaded(image, 30_000);
    return image.evaluate((img: HTMLImageElement) => img.currentSrc);
  }

  describe('pictures outside the chat', () => {
    it('shows the guild icon on the invite landing page, signed out', async () => {
      const owner = await registerUser(server);
      const { guildId, code } = await guildWith(server, 'Iconic Hall', owner);
      const icon = (await patch(owner, `/v1/guilds/${guildId}`, { icon: await pngUri('#8040c0') })).icon as string;
      assert.match(icon, /^[0-9a-f]{8}$/);
      const invite = await request(server, 'GET', `/v1/invites/${code}`);
      assert.equal(invite.body.guild.icon, icon);

      const context = await newContext(browser);
      context.setDefaultTimeout(30_000);
      const page = await context.newPage();
      await page.goto(`${server.origin}/invite/${code}`);
      await h1(page, 'Join Iconic Hall');
      // 64 CSS pixels at a ratio of 1.
      assert.equal(
        await loadedSrc(page.locator('.invite-guild .avatar')),
        `${server.origin}/media/icons/${guildId}/${icon}.webp?size=64`,
      );
      await page.getByRole('link', { name: 'Create an account' }).waitFor();
      await assertAccessible(page, 'invite with a guild icon');

      // Without an icon: the initials, and no image at all.
      const { code: plainCode } = await guildWith(server, 'Plain Hall', owner);
      await page.goto(`${server.origin}/invite/${plainCode}`);
      await h1(page, 'Join Plain Hall');
      await page.locator('.invite-guild .avatar .avatar-initials').waitFor();
      assert.equal(await page.locator('.invite-guild img').count(), 0);
      await context.close();
    });

    it('shows avatars and icons on the admin pages that list users and reports', async () => {
      const admin = await registerUser(server);
      await setAcls(server, admin.id, ['*']);
      const pictured = await registerUser(server, { username: 'pictured_one' });
      const avatar = (await patch(pictured, '/v1/users/@me', { avatar: await pngUri('#2080a0') })).avatar as string;
      const reporter = await registerUser(server, { username: 'reporting_one' });
      const reporterAvatar = (await patch(reporter, '/v1/users/@me', { avatar: await pngUri('#a08020') }))
        .avatar as string;
      const { guildId } = await guildWith(server, 'Reported Hall', pictured, reporter);
      const icon = (await patch(pictured, `/v1/guilds/${guildId}`, { icon: await pngUri('#a02040') })).icon as string;
      for (const [path, body] of [
        ['/v1/reports/user', { user_id: pictured.id, category: 'spam' }],
        ['/v1/reports/guild', { guild_id: guildId, category: 'other' }],
      ] as const) {
        const filed = await request(server, 'POST', path, { auth: reporter.token, body });
        assert.equal(filed.status, 200, filed.text);
      }

      const { context, page } = await signedInPage(browser, server.origin, admin);
      context.setDefaultTimeout(30_000);
      await page.goto(`${server.origin}/admin`);
      await h1(page, 'Users · Administration');
      await page.getByLabel('Find a user').fill(pictured.email);
      await page.getByRole('button', { name: 'Search' }).click();
      const open = page.getByRole('button', { name: `Open pictured_one (${pictured.email})` });
      const avatarUrl = (size: number) => `${server.origin}/media/avatars/${pictured.id}/${avatar}.webp?size=${size}`;
      assert.equal(await loadedSrc(page.locator('li', { has: open }).locator('.avatar')), avatarUrl(32));
      await open.click();
      const heading = page.getByRole('heading', { level: 2, name: 'User pictured_one', exact: true });
      assert.equal(await loadedSrc(heading.locator('.avatar')), avatarUrl(64));
      await assertAccessible(page, 'admin user with an avatar');

      await page.goto(`${server.origin}/admin/reports`);
      const userCard = page.getByRole('article', { name: /^User reported by reporting_one on / });
      const guildCard = page.getByRole('article', { name: /^Community reported by reporting_one on / });
      assert.equal(
        await loadedSrc(userCard.getByRole('heading').locator('.avatar')),
        `${server.origin}/media/avatars/${reporter.id}/${reporterAvatar}.webp?size=32`,
      );
      assert.equal(await loadedSrc(userCard.locator('dd.with-picture .avatar')), avatarUrl(32));
      assert.equal(
        await loadedSrc(guildCard.locator('dd.with-picture .avatar')),
        `${server.origin}/media/icons/${guildId}/${icon}.webp?size=32`,
      );
      await assertAccessible(page, 'admin reports with pictures');
      await context.close();
    });
  });
}
