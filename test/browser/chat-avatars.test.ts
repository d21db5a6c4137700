import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  imageLoaded,
  newContext,
  serverAndChromium,
  signInAs,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Pictures of people and guilds in the chat (docs/web.md#pictures): what another person sees after an avatar or
 * icon is uploaded through the API, the initials when there is none or it does not load, and live changes.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-avatars.test.ts');
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

  async function patch(user: TestUser, path: string, body: Record<string, unknown>) {
    const res = await request(server, 'PATCH', path, { auth: user.token, body });
    assert.equal(res.status, 200, res.text);
    return res.body as Record<string, unknown>;
  }

  async function post(user: TestUser, channelId: string, content: string): Promise<string> {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: user.token,
      body: { content },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  /** A signed-in page at a device pixel ratio (what the requested sizes follow). */
  async function pageOf(user: TestUser, scale = 1): Promise<Page> {
    const context =
      scale === 1 ? await newContext(browser) : await browser.newContext({ locale: 'en-US', deviceScaleFactor: scale });
    // The machine may be loaded: each wait is for a visible state, so a longer limit costs nothing when it passes.
    context.setDefaultTimeout(30_000);
    const page = await context.newPage();
    await signInAs(page, server.origin, user);
    return page;
  }

  const authorPicture = (page: Page, messageId: string) => page.locator(`#message-${messageId} button.author .avatar`);
  const memberPicture = (page: Page, name: RegExp) =>
    page.getByRole('complementary', { name: 'Members' }).getByRole('button', { name }).locator('.avatar');

  /** The letters a picture without an image shows (drawn from the attribute by CSS). */
  const letters = (picture: Locator) =>
    picture.locator('.avatar-initials').evaluate((el) => getComputedStyle(el, '::before').content);

  /** Images the browser gave up on: a broken-image icon a person would see. */
  const brokenImages = (page: Page) =>
    page.evaluate(() => [...document.images].filter((img) => img.complete && img.naturalWidth === 0).length);

  async function loadedImage(picture: Locator): Promise<{ src: string; alt: string | null; width: number }> {
    const image = picture.locator('img');
    await imageLoaded(image);
    return image.evaluate((img: HTMLImageElement) => ({
      src: img.currentSrc,
      alt: img.getAttribute('alt'),
      width: img.naturalWidth,
    }));
  }

  describe('pictures in the chat', () => {
    let alice: TestUser;
    let bob: TestUser;
    let carol: TestUser;
    let aliceAvatar: string;
    let guildId: string;
    let channelId: string;
    let plainGuildId: string;
    let icon: string;
    let fromAlice: string;
    let fromCarol: string;

    // A guild with an icon, a member with an avatar (Alice), one without (Carol), and the viewer (Bob).
    before(async () => {
      [alice, bob, carol] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
      const uploaded = await patch(alice, '/v1/users/@me', {
        global_name: 'Alice Picture',
        avatar: await pngUri('#2a7ab0'),
      });
      aliceAvatar = uploaded.avatar as string;
      assert.match(aliceAvatar, /^[0-9a-f]{8}$/);
      await patch(bob, '/v1/users/@me', { global_name: 'Bob Viewer' });
      await patch(carol, '/v1/users/@me', { global_name: 'Carol Nopic' });
      ({ guildId, channelId } = await guildWith(server, 'Picture Hall', alice, bob, carol));
      ({ guildId: plainGuildId } = await guildWith(server, 'Plain Room', alice, bob));
      icon = (await patch(alice, `/v1/guilds/${guildId}`, { icon: await pngUri('#b0602a') })).icon as string;
      assert.match(icon, /^[0-9a-f]{8}$/);
      fromAlice = await post(alice, channelId, 'a message with a face');
      fromCarol = await post(carol, channelId, 'a message without one');
    });

    it('shows an uploaded avatar to another member on the message author and in the member list', async () => {
      const page = await pageOf(bob);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);

      const author = await loadedImage(authorPicture(page, fromAlice));
      // 40 CSS pixels at a ratio of 1: the route's next power of two.
      assert.equal(author.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=64`);
      assert.equal(author.width, 64);
      // The author's name is beside it: the picture is decorative.
      assert.equal(author.alt, '');
      assert.equal(await authorPicture(page, fromAlice).getAttribute('aria-hidden'), 'true');
      const image = authorPicture(page, fromAlice).locator('img');
      assert.equal(await image.getAttribute('loading'), 'lazy');
      assert.equal(await image.getAttribute('decoding'), 'async');
      assert.equal(await image.getAttribute('width'), '40');
      assert.equal(await image.getAttribute('height'), '40');
      // The author's button is still named by the name alone.
      await page.locator(`#message-${fromAlice}`).getByRole('button', { name: 'Alice Picture', exact: true }).waitFor();

      const listed = await loadedImage(memberPicture(page, /^Alice Picture\b/));
      assert.equal(listed.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=32`);
      assert.equal(listed.alt, '');

      assert.equal(await brokenImages(page), 0);
      await assertAccessible(page, 'a channel with avatars');
      await page.context().close();
    });

    it('asks for the size the screen needs at a device pixel ratio of 2', async () => {
      const page = await pageOf(bob, 2);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const author = await loadedImage(authorPicture(page, fromAlice));
      assert.equal(author.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=128`);
      const listed = await loadedImage(memberPicture(page, /^Alice Picture\b/));
      assert.equal(listed.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=64`);
      await page.context().close();
    });

    it("shows the guild's icon in the rail, named by the guild; a guild without one shows its initials", async () => {
      const page = await pageOf(bob);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const rail = page.getByRole('navigation', { name: 'Servers' });
      const iconImage = rail.getByRole('img', { name: 'Picture Hall', exact: true });
      await imageLoaded(iconImage);
      assert.equal(await iconImage.getAttribute('src'), `${server.origin}/media/icons/${guildId}/${icon}.webp?size=64`);
      assert.equal(await iconImage.evaluate((img) => img.tagName), 'IMG');

      const plain = rail.getByRole('img', { name: 'Plain Room', exact: true });
      await plain.waitFor();
      assert.equal(await plain.locator('img').count(), 0);
      assert.equal(await letters(plain), '"PR"');
      assert.ok(await rail.locator(`a[href*="/channels/${plainGuildId}"]`).count());

      // The guild's header beside its channels shows the icon too, beside its name.
      const header = page.getByRole('heading', { level: 2, name: 'Picture Hall' });
      const headerIcon = await loadedImage(header.locator('.avatar'));
      assert.equal(headerIcon.src, `${server.origin}/media/icons/${guildId}/${icon}.webp?size=32`);
      await page.context().close();
    });

    it('shows the initials of a member without an avatar, and no image', async () => {
      const page = await pageOf(bob);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const picture = authorPicture(page, fromCarol);
      await picture.waitFor();
      assert.equal(await picture.locator('img').count(), 0);
      assert.equal(await letters(picture), '"CN"');
      const listed = memberPicture(page, /^Carol Nopic\b/);
      await listed.waitFor();
      assert.equal(await listed.locator('img').count(), 0);
      assert.equal(await letters(listed), '"CN"');
      await page.context().close();
    });

    it('falls back to the initials when an avatar fails to load, with no broken image', async () => {
      const page = await pageOf(bob);
      let refused = 0;
      // The avatar routes cannot be reached from this page (as when the media host is down).
      await page.route('**/media/avatars/**', (route) => {
        refused++;
        return route.abort('connectionrefused');
      });
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const picture = authorPicture(page, fromAlice);
      await picture.locator('.avatar-initials').waitFor();
      await page.waitForFunction(
        (id) => !document.querySelector(`#message-${id} button.author .avatar img`),
        fromAlice,
      );
      assert.equal(await letters(picture), '"AP"');
      const listed = memberPicture(page, /^Alice Picture\b/);
      await listed.locator('.avatar-initials').waitFor();
      assert.equal(await listed.locator('img').count(), 0);
      assert.ok(refused >= 2, `the avatars were asked for (${refused})`);
      assert.equal(await brokenImages(page), 0);
      await page.context().close();
    });

    it('changes the pictures live: a new avatar, a per-guild avatar, one’s own avatar, the DM list', async () => {
      const dm = await request(server, 'POST', '/v1/users/@me/channels', {
        auth: alice.token,
        body: { recipient_id: bob.id },
      });
      assert.equal(dm.status, 200, dm.text);
      await post(alice, dm.body.id as string, 'hello in private');

      const page = await pageOf(bob);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.evaluate(() => {
        (window as unknown as { notReloaded: boolean }).notReloaded = true;
      });
      const carolPicture = authorPicture(page, fromCarol);
      await carolPicture.locator('.avatar-initials').waitFor();

      // Carol uploads an avatar: her message and her row in the member list show it (PRESENCE_UPDATE,
      // GUILD_MEMBER_UPDATE).
      const carolAvatar = (await patch(carol, '/v1/users/@me', { avatar: await pngUri('#3a9a40') })).avatar as string;
      const carolShown = await loadedImage(carolPicture);
      assert.equal(carolShown.src, `${server.origin}/media/avatars/${carol.id}/${carolAvatar}.webp?size=64`);
      const carolListed = await loadedImage(memberPicture(page, /^Carol Nopic\b/));
      assert.equal(carolListed.src, `${server.origin}/media/avatars/${carol.id}/${carolAvatar}.webp?size=32`);
      assert.equal(await carolPicture.locator('.avatar-initials').count(), 0);

      // Alice sets a picture for this guild only: it replaces her account's one here (GUILD_MEMBER_UPDATE).
      const member = await patch(alice, `/v1/guilds/${guildId}/members/@me`, { avatar: await pngUri('#9a3a80') });
      const guildAvatar = member.avatar as string;
      assert.match(guildAvatar, /^[0-9a-f]{8}$/);
      const memberAvatarUrl = `${server.origin}/media/guilds/${guildId}/users/${alice.id}/avatars/${guildAvatar}.webp`;
      await page.waitForFunction(
        ([id, url]) =>
          (document.querySelector(`#message-${id} button.author .avatar img`) as HTMLImageElement | null)?.src === url,
        [fromAlice, `${memberAvatarUrl}?size=64`] as const,
      );
      await loadedImage(authorPicture(page, fromAlice));
      const aliceListed = await loadedImage(memberPicture(page, /^Alice Picture\b/));
      assert.equal(aliceListed.src, `${memberAvatarUrl}?size=32`);

      // Bob's own new avatar shows in the panel at the bottom of the sidebar (USER_UPDATE).
      const userArea = page.locator('.user-area');
      await userArea.locator('.avatar-initials').waitFor();
      const bobAvatar = (await patch(bob, '/v1/users/@me', { avatar: await pngUri('#c0c020') })).avatar as string;
      const own = await loadedImage(userArea.locator('.avatar'));
      assert.equal(own.src, `${server.origin}/media/avatars/${bob.id}/${bobAvatar}.webp?size=32`);

      // Outside the guild, Alice's account avatar: in the DM list, and beside the conversation's name.
      await page.locator('.rail-item.home').click();
      const dmLink = page.locator(`a.channel-link[data-channel-id="${dm.body.id}"]`);
      const inList = await loadedImage(dmLink.locator('.avatar'));
      assert.equal(inList.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=32`);
      await dmLink.click();
      const heading = page.getByRole('heading', { level: 1, name: 'Alice Picture' });
      const inHeader = await loadedImage(heading.locator('.avatar'));
      assert.equal(inHeader.src, `${server.origin}/media/avatars/${alice.id}/${aliceAvatar}.webp?size=32`);

      // A new account avatar reaches the DM list too.
      const newer = (await patch(alice, '/v1/users/@me', { avatar: await pngUri('#205090') })).avatar as string;
      await page.waitForFunction(
        ([id, url]) =>
          (document.querySelector(`a.channel-link[data-channel-id="${id}"] .avatar img`) as HTMLImageElement | null)
            ?.src === url,
        [dm.body.id as string, `${server.origin}/media/avatars/${alice.id}/${newer}.webp?size=32`] as const,
      );
      await loadedImage(dmLink.locator('.avatar'));
      assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true);
      assert.equal(await brokenImages(page), 0);
      await assertAccessible(page, 'a conversation with avatars');
      await page.context().close();
    });

    it('animates an animated avatar (a_) unless the person asked for reduced motion', async () => {
      const frames = await Promise.all(
        ['#ff0000', '#0000ff'].map((colour) =>
          sharp({ create: { width: 64, height: 64, channels: 3, background: colour } })
            .png()
            .toBuffer(),
        ),
      );
      const gif = await sharp(frames, { join: { animated: true } })
        .gif()
        .toBuffer();
      const animated = (
        await patch(carol, '/v1/users/@me', { avatar: `data:image/gif;base64,${gif.toString('base64')}` })
      ).avatar as string;
      assert.match(animated, /^a_[0-9a-f]{8}$/);

      // Her earlier message (a later one of hers would be grouped under it, without a head) shows it.
      const page = await pageOf(bob);
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const shown = await loadedImage(authorPicture(page, fromCarol));
      const url = `${server.origin}/media/avatars/${carol.id}/${animated}.webp?size=64&animated=true`;
      assert.equal(shown.src, url);
      // What the route answered is an animated image: both frames are there.
      const served = await fetch(url);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), 'image/webp');
      assert.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).pages, 2);

      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.reload();
      const still = await loadedImage(authorPicture(page, fromCarol));
      assert.equal(still.src, `${server.origin}/media/avatars/${carol.id}/${animated}.webp?size=64`);
      await page.context().close();
    });
  });
}
