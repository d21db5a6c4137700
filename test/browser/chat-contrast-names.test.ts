import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
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

/**
 * Two faults axe found in the chat view (docs/web.md#accessibility): a channel link whose name did not contain its
 * visible mention badge (label-content-name-mismatch), and role colours drawn as they were picked, unreadable on
 * the theme's background (color-contrast). Each is caught here by `assertAccessible` on a view that shows it.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-contrast-names.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** sRGB 0–255 → the hue in degrees. */
  function hue([r, g, b]: number[]): number {
    const [rr, gg, bb] = [(r ?? 0) / 255, (g ?? 0) / 255, (b ?? 0) / 255];
    const max = Math.max(rr, gg, bb);
    const d = max - Math.min(rr, gg, bb);
    if (d === 0) return 0;
    const h = max === rr ? ((gg - bb) / d + 6) % 6 : max === gg ? (bb - rr) / d + 2 : (rr - gg) / d + 4;
    return h * 60;
  }
  function luminance(rgb: number[]): number {
    const [r, g, b] = rgb.map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
  }
  const ratio = (a: number[], b: number[]) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
    return (x + 0.05) / (y + 0.05);
  };
  /** The member's name colour and the member list's background, as rendered. */
  async function drawn(page: Page, name: string) {
    // `rgb(r, g, b)`, or `color(srgb r g b)` in 0–1 for a color-mix().
    const parse = (css: string) => {
      const numbers = (css.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number);
      return css.startsWith('color(srgb') ? numbers.map((n) => Math.round(n * 255)) : numbers;
    };
    const member = page.getByRole('complementary', { name: 'Members' }).getByRole('button', { name });
    await member.waitFor();
    const color = await member.evaluate((el) => getComputedStyle(el).color);
    const background = await page
      .getByRole('complementary', { name: 'Members' })
      .evaluate((el) => getComputedStyle(el).backgroundColor);
    return { color: parse(color), background: parse(background) };
  }

  describe('colours and names axe checks in the chat view', () => {
    it('a role colour too light for the light theme, or too dark for the dark one, is drawn readable with its hue', async () => {
      const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Palette', owner, member);
      const roles = [
        { name: 'Sunny', color: 0xf1c40f },
        { name: 'Night', color: 0x1c2a6b },
      ];
      const made: string[] = [];
      for (const role of roles) {
        const created = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
          auth: owner.token,
          body: { ...role, hoist: true },
        });
        assert.equal(created.status, 200, created.text);
        made.push(created.body.id as string);
      }
      // Sunny (yellow) for the member, Night (navy) for the owner.
      for (const [user, roleId] of [
        [member, made[0]],
        [owner, made[1]],
      ] as const) {
        const added = await request(server, 'PUT', `/v1/guilds/${guildId}/members/${user.id}/roles/${roleId}`, {
          auth: owner.token,
        });
        assert.equal(added.status, 204, added.text);
      }
      const context = await signedInContext(browser, member);
      const page = await context.newPage();
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
      // As picked, yellow on the light member list is about 1.5:1.
      const light = await drawn(page, member.username);
      assert.ok(ratio([0xf1, 0xc4, 0x0f], light.background) < 2);
      assert.ok(ratio(light.color, light.background) >= 4.5, `${light.color} on ${light.background}`);
      assert.ok(Math.abs(hue(light.color) - hue([0xf1, 0xc4, 0x0f])) < 3, `hue of ${light.color}`);
      await assertAccessible(page, 'the member list with a light role colour, light theme');

      // The dark theme: navy on the dark member list is about 1.3:1 as picked.
      // The theme follows the system's scheme, live.
      await page.emulateMedia({ colorScheme: 'dark' });
      const before = (await drawn(page, owner.username)).background.join();
      let dark = await drawn(page, owner.username);
      for (let i = 0; i < 50 && dark.background.join() === before; i++) {
        await page.waitForTimeout(100);
        dark = await drawn(page, owner.username);
      }
      await page.waitForTimeout(200);
      dark = await drawn(page, owner.username);
      assert.ok(ratio([0x1c, 0x2a, 0x6b], dark.background) < 2);
      assert.ok(ratio(dark.color, dark.background) >= 4.5, `${dark.color} on ${dark.background}`);
      assert.ok(Math.abs(hue(dark.color) - hue([0x1c, 0x2a, 0x6b])) < 3, `hue of ${dark.color}`);
      await assertAccessible(page, 'the member list with a dark role colour, dark theme');
      await context.close();
    });

    it("a channel link's name contains its visible mention badge", async () => {
      const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Badges', owner, member);
      const news = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: owner.token,
        body: { name: 'news', type: 0 },
      });
      assert.equal(news.status, 200, news.text);
      const context = await signedInContext(browser, member);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
      for (let i = 0; i < 3; i++) {
        const sent = await request(server, 'POST', `/v1/channels/${news.body.id}/messages`, {
          auth: owner.token,
          body: { content: `<@${member.id}> look ${i}` },
        });
        assert.equal(sent.status, 200, sent.text);
      }
      const link = page.getByRole('link', { name: '#news, 3 mentions' });
      await link.waitFor();
      assert.equal(await link.locator('.badge').textContent(), '3');
      await assertAccessible(page, 'the channel list with a mention badge');
      await context.close();
    });
  });
}
