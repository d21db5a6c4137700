import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { befriend } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  imageLoaded,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * A group conversation's icon (docs/web.md#pictures, docs/chat.md): another member sees it in the DM list and the
 * header, changes it from the group's settings, then removes it.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/group-dm-icons.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const png = (colour: string) =>
    sharp({ create: { width: 128, height: 128, channels: 3, background: colour } })
      .png()
      .toBuffer();

  async function groupIcon(user: TestUser, channelId: string): Promise<string | null> {
    const res = await request(server, 'GET', `/v1/channels/${channelId}`, { auth: user.token });
    assert.equal(res.status, 200, res.text);
    return res.body.icon as string | null;
  }

  /** The `src` of a loaded picture inside `picture`, once the browser has decoded it. */
  async function loadedSrc(picture: Locator): Promise<string> {
    const image = picture.locator('img');
    await imageLoaded(image, 30_000);
    return image.evaluate((img: HTMLImageElement) => img.currentSrc);
  }

  const headerPicture = (page: Page) => page.locator('.channel-header h1 .avatar');
  const listPicture = (page: Page, name: string) => page.getByRole('link', { name, exact: true }).locator('.avatar');

  it('shows the icon in the list and the header; a member changes and removes it, and renames the group, from its settings', async () => {
    const [owner, viewer, third] = await Promise.all([1, 2, 3].map(() => registerUser(server)));
    await befriend(server, owner as TestUser, viewer as TestUser);
    await befriend(server, owner as TestUser, third as TestUser);
    const created = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: owner?.token,
      body: { recipients: [viewer?.id, third?.id], name: 'Icon Crew' },
    });
    assert.equal(created.status, 200, created.text);
    const id = created.body.id as string;
    const set = await request(server, 'PATCH', `/v1/channels/${id}`, {
      auth: owner?.token,
      body: { icon: `data:image/png;base64,${(await png('#c04020')).toString('base64')}` },
    });
    assert.equal(set.status, 200, set.text);
    const first = set.body.icon as string;

    const context = await signedInContext(browser, viewer as TestUser);
    context.setDefaultTimeout(30_000);
    const page = await context.newPage();
    await page.goto(`${server.origin}/channels/@me/${id}`);

    // 24 px in the list and 28 px in the header at a ratio of 1: the route's next power of two, 32.
    const url = (hash: string) => `${server.origin}/media/channel-icons/${id}/${hash}.webp?size=32`;
    assert.equal(await loadedSrc(listPicture(page, 'Icon Crew')), url(first));
    assert.equal(await loadedSrc(headerPicture(page)), url(first));
    await page.getByText(`${owner?.username} changed the group icon.`).waitFor();

    await page.getByRole('button', { name: 'Group settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Group settings' });
    await imageLoaded(dialog.getByRole('img', { name: 'Current group icon' }), 30_000);
    await assertAccessible(page, 'group settings');
    await dialog
      .getByLabel('Group icon')
      .setInputFiles({ name: 'icon.png', mimeType: 'image/png', buffer: await png('#20a040') });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });

    let second: string | null = null;
    for (let i = 0; i < 50 && (second === null || second === first); i++) {
      second = await groupIcon(owner as TestUser, id);
      if (second === first) await page.waitForTimeout(100);
    }
    assert.match(second ?? '', /^[0-9a-f]{8}$/);
    assert.notEqual(second, first);
    // CHANNEL_UPDATE redraws both pictures with the new hash.
    await page.locator(`.channel-header h1 img[src="${url(second as string)}"]`).waitFor();
    assert.equal(await loadedSrc(headerPicture(page)), url(second as string));
    assert.equal(await loadedSrc(listPicture(page, 'Icon Crew')), url(second as string));
    await page.getByText(`${viewer?.username} changed the group icon.`).waitFor();

    await page.getByRole('button', { name: 'Group settings' }).click();
    await dialog.getByRole('button', { name: 'Remove icon' }).click();
    await dialog.getByText('No icon').waitFor();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await headerPicture(page).locator('img').waitFor({ state: 'detached' });
    await listPicture(page, 'Icon Crew').locator('img').waitFor({ state: 'detached' });
    assert.equal(await groupIcon(third as TestUser, id), null);
    await assertAccessible(page, 'a group conversation without an icon');

    await page.getByRole('button', { name: 'Group settings' }).click();
    await dialog.getByLabel('Group name').fill('Renamed Crew');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'Renamed Crew', exact: true }).waitFor();
    await page.getByText(`${viewer?.username} changed the group name to Renamed Crew.`).waitFor();
    const renamed = await request(server, 'GET', `/v1/channels/${id}`, { auth: third?.token });
    assert.deepEqual([renamed.body.name, renamed.body.icon], ['Renamed Crew', null]);
    await context.close();
  });
}
