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
 * The guild rail's own order and folders (docs/web.md#the-guild-rail), in two tabs of one account: moved from
 * the keyboard and by dragging, saved in the account's settings (so a reload keeps it), followed live by the
 * other tab; a folder made by dropping a guild on another, its summed badge, opened and closed, renamed, a guild
 * dragged out of it.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/guild-rail.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const rail = (page: Page) => page.getByRole('navigation', { name: 'Servers' });
  /** The rail's items from top to bottom as a person sees them: guild names, folders as "[their names]". */
  const order = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll('nav[aria-label="Servers"] > ul > li')].flatMap((li) => {
        const button = li.querySelector(':scope > div > button');
        if (button) return [`[${button.getAttribute('title')}]`];
        const link = li.querySelector(':scope > a[title]');
        return link ? [link.getAttribute('title') as string] : [];
      }),
    );
  const orderIs = async (page: Page, expected: string[]) => {
    await page
      .waitForFunction((want) => {
        const shown = [...document.querySelectorAll('nav[aria-label="Servers"] > ul > li')].flatMap((li) => {
          const button = li.querySelector(':scope > div > button');
          if (button) return [`[${button.getAttribute('title')}]`];
          const link = li.querySelector(':scope > a[title]');
          return link ? [link.getAttribute('title') as string] : [];
        });
        return JSON.stringify(shown) === JSON.stringify(want);
      }, expected)
      .catch(() => undefined);
    assert.deepEqual(await order(page), expected);
  };

  type AXNode = { nodeId: string; childIds?: string[]; role?: { value?: string }; name?: { value?: string } };
  /** The polite status regions' words, as a screen reader has them (the live announcer's shadow root too). */
  const announcements = async (page: Page): Promise<string[]> => {
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
    await cdp.detach();
    const byId = new Map(nodes.map((node) => [node.nodeId, node]));
    const text = (node: AXNode): string =>
      node.role?.value === 'StaticText'
        ? (node.name?.value ?? '')
        : (node.childIds ?? [])
            .map((id) => byId.get(id))
            .map((child) => (child ? text(child) : ''))
            .join('');
    return nodes.filter((node) => node.role?.value === 'status').map(text);
  };
  const heard = async (page: Page, words: string) => {
    for (let tries = 0; tries < 50 && !(await announcements(page)).includes(words); tries++) {
      await page.waitForTimeout(100);
    }
    assert.ok((await announcements(page)).includes(words), JSON.stringify(await announcements(page)));
  };

  describe('guild rail', () => {
    it('reorders by keyboard and drag, makes folders, and keeps both in the account across tabs', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const ids: Record<string, string> = {};
      for (const name of ['Alpha', 'Bravo', 'Charlie']) {
        const made = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name } });
        assert.equal(made.status, 200, made.text);
        ids[name] = made.body.id as string;
      }
      const delta = await guildWith(server, 'Delta', bob, alice);
      ids.Delta = delta.guildId;
      const mention = await request(server, 'POST', `/v1/channels/${delta.channelId}/messages`, {
        auth: bob.token,
        body: { content: `<@${alice.id}> look` },
      });
      assert.equal(mention.status, 200, mention.text);

      const [one, two] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, alice)]);
      const [a, b] = await Promise.all([one.newPage(), two.newPage()]);
      await Promise.all([a.goto(`${server.origin}/channels/@me`), b.goto(`${server.origin}/channels/@me`)]);
      await Promise.all([
        orderIs(a, ['Alpha', 'Bravo', 'Charlie', 'Delta']),
        orderIs(b, ['Alpha', 'Bravo', 'Charlie', 'Delta']),
      ]);
      await rail(a).getByRole('link', { name: 'Delta, 1 mention' }).waitFor();

      // Keyboard: Alpha one down; the focus stays on it, the other tab follows.
      const alpha = rail(a).getByRole('link', { name: 'Alpha', exact: true });
      await alpha.focus();
      await a.keyboard.press('Alt+Shift+ArrowDown');
      await orderIs(a, ['Bravo', 'Alpha', 'Charlie', 'Delta']);
      assert.equal(await a.evaluate(() => document.activeElement?.getAttribute('title')), 'Alpha');
      await a.keyboard.press('Alt+Shift+ArrowDown');
      await orderIs(a, ['Bravo', 'Charlie', 'Alpha', 'Delta']);
      await heard(a, 'Alpha: position 3 of 4');
      await orderIs(b, ['Bravo', 'Charlie', 'Alpha', 'Delta']);

      // Drag by hand: a bar shows where Delta lands (above Bravo), then it is there.
      const box = async (name: string) => {
        const found = await rail(a)
          .getByRole('link', { name: new RegExp(`^${name}`) })
          .boundingBox();
        assert.ok(found);
        return found;
      };
      const from = await box('Delta');
      const to = await box('Bravo');
      await a.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await a.mouse.down();
      await a.mouse.move(to.x + to.width / 2, to.y + 4, { steps: 5 });
      await a.locator('nav[aria-label="Servers"] li.drop-before a[title="Bravo"]').waitFor();
      await a.mouse.up();
      await orderIs(a, ['Delta', 'Bravo', 'Charlie', 'Alpha']);
      // And with dragTo: Alpha onto the bottom edge of Delta.
      await rail(a)
        .getByRole('link', { name: 'Alpha', exact: true })
        .dragTo(rail(a).getByRole('link', { name: 'Delta, 1 mention' }), { targetPosition: { x: 24, y: 44 } });
      await orderIs(a, ['Delta', 'Alpha', 'Bravo', 'Charlie']);
      await orderIs(b, ['Delta', 'Alpha', 'Bravo', 'Charlie']);
      await a.reload();
      await orderIs(a, ['Delta', 'Alpha', 'Bravo', 'Charlie']);

      // A folder: Charlie dropped on Alpha's centre, then Delta on the folder's centre.
      await rail(a)
        .getByRole('link', { name: 'Charlie', exact: true })
        .dragTo(rail(a).getByRole('link', { name: 'Alpha', exact: true }));
      await orderIs(a, ['Delta', '[Alpha, Charlie]', 'Bravo']);
      const folder = rail(a).getByRole('button', { name: 'Folder: Alpha, Charlie' });
      assert.equal(await folder.getAttribute('aria-expanded'), 'false');
      await rail(a).getByRole('link', { name: 'Delta, 1 mention' }).dragTo(folder);
      await orderIs(a, ['[Alpha, Charlie, Delta]', 'Bravo']);
      await orderIs(b, ['[Alpha, Charlie, Delta]', 'Bravo']);
      // Closed, the folder is one item with the sum of its guilds' mentions, and none of their links.
      const closed = rail(a).getByRole('button', { name: 'Folder: Alpha, Charlie, Delta, 1 mention' });
      assert.equal(await closed.getAttribute('aria-expanded'), 'false');
      assert.equal(await closed.locator('.badge').innerText(), '1');
      assert.equal(await rail(a).getByRole('link', { name: 'Alpha', exact: true }).count(), 0);
      await closed.click();
      assert.equal(await closed.getAttribute('aria-expanded'), 'true');
      await rail(a)
        .getByRole('list', { name: 'Alpha, Charlie, Delta' })
        .getByRole('link', { name: 'Charlie' })
        .waitFor();
      await assertAccessible(a, 'the rail with an open folder');
      await closed.press('Enter');
      assert.equal(await closed.getAttribute('aria-expanded'), 'false');
      assert.equal(await rail(a).getByRole('link', { name: 'Charlie', exact: true }).count(), 0);
      await closed.press('Enter');

      // Renamed and coloured.
      await rail(a).getByRole('button', { name: 'Folder settings: Alpha, Charlie, Delta' }).click();
      const dialog = a.getByRole('dialog', { name: 'Folder settings' });
      await dialog.getByLabel('Folder name').fill('Work');
      await dialog.getByLabel('Colour').selectOption({ label: 'Green' });
      await dialog.getByRole('button', { name: 'Save' }).click();
      await rail(a).getByRole('button', { name: 'Folder: Work, 1 mention' }).waitFor();
      await rail(b).getByRole('button', { name: 'Folder: Work, 1 mention' }).waitFor();

      // Charlie dragged out of the open folder, to below Bravo; from the keyboard, Alpha out above the folder.
      await rail(a)
        .getByRole('link', { name: 'Charlie', exact: true })
        .dragTo(rail(a).getByRole('link', { name: 'Bravo', exact: true }), { targetPosition: { x: 24, y: 44 } });
      await orderIs(a, ['[Work]', 'Bravo', 'Charlie']);
      const settings = await request(server, 'GET', '/v1/users/@me/settings', { auth: alice.token });
      assert.equal(settings.status, 200);
      const folders = settings.body.guild_folders as { id: number }[];
      assert.equal(typeof folders[0]?.id, 'number');
      assert.deepEqual(settings.body.guild_folders, [
        { id: folders[0]?.id, name: 'Work', color: 0x3ba55c, guild_ids: [ids.Alpha, ids.Delta] },
        { id: null, name: null, color: null, guild_ids: [ids.Bravo] },
        { id: null, name: null, color: null, guild_ids: [ids.Charlie] },
      ]);
      assert.deepEqual(settings.body.guild_positions, [ids.Alpha, ids.Delta, ids.Bravo, ids.Charlie]);

      await rail(a).getByRole('link', { name: 'Alpha', exact: true }).focus();
      await a.keyboard.press('Alt+Shift+ArrowUp');
      // Out of the folder, which, with one guild left, is that guild alone again.
      await orderIs(a, ['Alpha', 'Delta', 'Bravo', 'Charlie']);
      await heard(a, 'Alpha: position 1 of 4');
      // And into a folder with the guild under it, from the keyboard too.
      await a.keyboard.press('Alt+Shift+ArrowRight');
      await orderIs(a, ['[Delta, Alpha]', 'Bravo', 'Charlie']);
      await heard(a, 'Alpha: position 2 of 2 in the folder');
      assert.equal(
        await rail(a).getByRole('button', { name: 'Folder: Delta, Alpha, 1 mention' }).getAttribute('aria-expanded'),
        'true',
      );
      await orderIs(b, ['[Delta, Alpha]', 'Bravo', 'Charlie']);
      assert.equal(await a.evaluate(() => document.activeElement?.getAttribute('title')), 'Alpha');
      await assertAccessible(b, 'the rail in the other tab');
      await Promise.all([one.close(), two.close()]);
    });
  });
}
