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
      // The rail redraws first and saves after: the other tab showing it is the server having it.
      await orderIs(b, ['[Work]', 'Bravo', 'Charlie']);
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

    /** The marker drawn left of a rail item (its `li`): none, the unread dot or the tall current-server pill. */
    const marker = (page: Page, title: string) =>
      page.evaluate((name) => {
        const button = document.querySelector(`nav[aria-label="Servers"] [title="${name}"]`);
        const li = button?.closest('li');
        if (!li) return 'missing';
        const style = getComputedStyle(li, '::before');
        return style.content === 'none' || style.display === 'none' ? 'none' : style.height;
      }, title);
    /** The focused element's accessible name (its label, else a menu item's words), else its tag. */
    const focusedName = (page: Page) =>
      page.evaluate(() => {
        const focused = document.activeElement;
        const label = focused?.getAttribute('aria-label');
        if (label) return label;
        return focused?.getAttribute('role') === 'menuitem' ? focused.textContent : focused?.tagName;
      });

    it('shows what a closed folder holds, and its context menu works from the keyboard and the mouse', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const alpha = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Alpha' } });
      const bravo = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Bravo' } });
      assert.equal(alpha.status, 200, alpha.text);
      assert.equal(bravo.status, 200, bravo.text);
      const delta = await guildWith(server, 'Delta', bob, alice);
      const games = [alpha.body.id as string, delta.guildId];
      const saved = await request(server, 'PATCH', '/v1/users/@me/settings', {
        auth: alice.token,
        body: {
          guild_folders: [
            { id: 77, name: 'Games', color: null, guild_ids: games },
            { id: null, name: null, color: null, guild_ids: [bravo.body.id] },
          ],
          guild_positions: [...games, bravo.body.id],
        },
      });
      assert.equal(saved.status, 200, saved.text);
      for (const content of ['hello', `<@${alice.id}> look`]) {
        const sent = await request(server, 'POST', `/v1/channels/${delta.channelId}/messages`, {
          auth: bob.token,
          body: { content },
        });
        assert.equal(sent.status, 200, sent.text);
      }

      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/@me`);
      // Closed: the folder carries its guilds' unread dot and summed mention badge, and says so.
      const folder = rail(page).getByRole('button', { name: 'Folder: Games', exact: false });
      await rail(page).getByRole('button', { name: 'Folder: Games, 1 mention', exact: true }).waitFor();
      assert.equal(await folder.getAttribute('aria-expanded'), 'false');
      assert.equal(await folder.locator('.badge').innerText(), '1');
      assert.equal(await marker(page, 'Games'), '8px');
      assert.equal(await folder.getAttribute('aria-current'), null);

      // On a guild inside it: the current-server pill on the closed folder, and its name says it.
      await page.goto(`${server.origin}/channels/${alpha.body.id}/${alpha.body.system_channel_id}`);
      await rail(page)
        .getByRole('button', { name: 'Folder: Games, 1 mention, contains the current server', exact: true })
        .waitFor();
      assert.equal(await folder.getAttribute('aria-current'), 'true');
      assert.equal(await marker(page, 'Games'), '40px');
      // Open, the guild itself is the current one, and the folder no longer stands for it.
      await folder.click();
      assert.equal(
        await rail(page).getByRole('link', { name: 'Alpha', exact: true }).getAttribute('aria-current'),
        'page',
      );
      await rail(page).getByRole('button', { name: 'Folder: Games, 1 mention', exact: true }).waitFor();
      assert.equal(await marker(page, 'Games'), 'none');
      await folder.click();

      // Shift+F10 opens the folder's menu, its first item focused; arrows wrap, Home and End, Escape gives the
      // focus back to the folder.
      await folder.focus();
      await page.keyboard.press('Shift+F10');
      const menu = page.getByRole('menu', { name: 'Options for Games' });
      await menu.waitFor();
      assert.deepEqual(await menu.getByRole('menuitem').allInnerTexts(), [
        'Mark folder as read',
        'Folder settings',
        'Ungroup folder',
      ]);
      assert.equal(await focusedName(page), 'Mark folder as read');
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedName(page), 'Folder settings');
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      assert.equal(await focusedName(page), 'Ungroup folder');
      await page.keyboard.press('Home');
      assert.equal(await focusedName(page), 'Mark folder as read');
      await page.keyboard.press('End');
      assert.equal(await focusedName(page), 'Ungroup folder');
      await assertAccessible(page, 'the rail with a folder menu open');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
      assert.equal(await focusedName(page), 'Folder: Games, 1 mention, contains the current server');

      // The ContextMenu key too: "Mark folder as read" clears the dot and the badge, and the server has it.
      await page.keyboard.press('ContextMenu');
      await menu.waitFor();
      const acked = page.waitForResponse(
        (r) => r.url().includes(`/channels/${delta.channelId}/messages/`) && r.url().endsWith('/ack'),
      );
      await page.keyboard.press('Enter');
      await menu.waitFor({ state: 'detached' });
      await rail(page)
        .getByRole('button', { name: 'Folder: Games, contains the current server', exact: true })
        .waitFor();
      assert.equal(await folder.locator('.badge').count(), 0);
      assert.equal(await marker(page, 'Games'), '40px');
      assert.equal((await acked).status(), 200);
      const fresh = await signedInContext(browser, alice);
      const other = await fresh.newPage();
      await other.goto(`${server.origin}/channels/@me`);
      await rail(other).getByRole('button', { name: 'Folder: Games', exact: true }).waitFor();
      assert.equal(await marker(other, 'Games'), 'none');
      await fresh.close();

      // "Folder settings" opens the folder's dialog.
      await folder.press('Shift+F10');
      await menu.getByRole('menuitem', { name: 'Folder settings' }).click();
      const dialog = page.getByRole('dialog', { name: 'Folder settings' });
      await dialog.getByLabel('Folder name').fill('Play');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await rail(page)
        .getByRole('button', { name: 'Folder: Play, contains the current server', exact: true })
        .waitFor();

      // A right click opens it where the pointer is; "Ungroup folder" puts its guilds back on the rail, in order.
      const box = await rail(page).getByRole('button', { name: 'Folder: Play' }).boundingBox();
      assert.ok(box);
      await page.mouse.click(box.x + 10, box.y + 12, { button: 'right' });
      const played = page.getByRole('menu', { name: 'Options for Play' });
      const menuBox = await played.boundingBox();
      assert.ok(menuBox);
      assert.deepEqual(
        [Math.round(menuBox.x), Math.round(menuBox.y)],
        [Math.round(box.x + 10), Math.round(box.y + 12)],
      );
      await played.getByRole('menuitem', { name: 'Ungroup folder' }).click();
      await orderIs(page, ['Alpha', 'Delta', 'Bravo']);
      await heard(page, 'Folder Play ungrouped');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('title')), 'Alpha');
      // The rail redraws first and saves after: read the account once the save is in.
      let settings = await request(server, 'GET', '/v1/users/@me/settings', { auth: alice.token });
      for (let tries = 0; tries < 50 && settings.body.guild_folders.length !== 3; tries++) {
        await page.waitForTimeout(100);
        settings = await request(server, 'GET', '/v1/users/@me/settings', { auth: alice.token });
      }
      assert.deepEqual(settings.body.guild_folders, [
        { id: null, name: null, color: null, guild_ids: [alpha.body.id] },
        { id: null, name: null, color: null, guild_ids: [delta.guildId] },
        { id: null, name: null, color: null, guild_ids: [bravo.body.id] },
      ]);
      await context.close();
    });

    it("a guild's context menu: read, mute, invite, settings, copy its ID, leave; on a phone too", async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const alpha = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Alpha' } });
      assert.equal(alpha.status, 200, alpha.text);
      const delta = await guildWith(server, 'Delta', bob, alice);
      const mention = async () => {
        const sent = await request(server, 'POST', `/v1/channels/${delta.channelId}/messages`, {
          auth: bob.token,
          body: { content: `<@${alice.id}> look` },
        });
        assert.equal(sent.status, 200, sent.text);
      };
      await mention();

      const context = await signedInContext(browser, alice, {
        permissions: { origin: server.origin, names: ['clipboard-read', 'clipboard-write'] },
      });
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/@me`);
      const deltaLink = rail(page).getByRole('link', { name: /^Delta/ });
      await rail(page).getByRole('link', { name: 'Delta, 1 mention', exact: true }).waitFor();
      const menu = page.getByRole('menu', { name: 'Options for Delta' });
      const choose = async (item: string) => {
        await deltaLink.click({ button: 'right' });
        await menu.getByRole('menuitem', { name: item, exact: true }).click();
        await menu.waitFor({ state: 'detached' });
      };

      // A member's menu; the owner's has no "Leave server" (the server refuses an owner leaving).
      await deltaLink.click({ button: 'right' });
      assert.deepEqual(await menu.getByRole('menuitem').allInnerTexts(), [
        'Mark as read',
        'Mute server',
        'Invite people',
        'Server settings',
        'Copy server ID',
        'Leave server',
      ]);
      await assertAccessible(page, 'the rail with a guild menu open');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
      assert.equal(await focusedName(page), 'Delta, 1 mention');
      await rail(page).getByRole('link', { name: 'Alpha', exact: true }).press('Shift+F10');
      const alphaMenu = page.getByRole('menu', { name: 'Options for Alpha' });
      await alphaMenu.waitFor();
      assert.deepEqual(await alphaMenu.getByRole('menuitem').allInnerTexts(), [
        'Mark as read',
        'Mute server',
        'Invite people',
        'Server settings',
        'Copy server ID',
      ]);
      await page.keyboard.press('Escape');

      // Mark as read: the badge goes, here and for the server.
      const acked = page.waitForResponse(
        (r) => r.url().includes(`/channels/${delta.channelId}/messages/`) && r.url().endsWith('/ack'),
      );
      await choose('Mark as read');
      await rail(page).getByRole('link', { name: 'Delta', exact: true }).waitFor();
      assert.equal(await deltaLink.locator('.badge').count(), 0);
      assert.equal((await acked).status(), 200);

      // Muted: a new mention shows no badge, and the name says it is muted; unmuted, the mention shows.
      await choose('Mute server');
      await rail(page).getByRole('link', { name: 'Delta, muted', exact: true }).waitFor();
      await mention();
      await page.waitForTimeout(500);
      assert.equal(await deltaLink.getAttribute('aria-label'), 'Delta, muted');
      assert.equal(await deltaLink.locator('.badge').count(), 0);
      await choose('Unmute server');
      await rail(page).getByRole('link', { name: 'Delta, 1 mention', exact: true }).waitFor();
      assert.equal(await deltaLink.locator('.badge').innerText(), '1');

      // Copy server ID: the clipboard holds it, and it is said.
      await choose('Copy server ID');
      await heard(page, 'Server ID copied');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), delta.guildId);

      // Invite people: the invite dialog with a working link; closed, the focus is back on Delta.
      await choose('Invite people');
      const invite = page.getByRole('dialog', { name: 'Invite people' });
      const link = invite.getByLabel('Invite link');
      await link.waitFor();
      const code = (await link.inputValue()).split('/invite/')[1];
      assert.ok(code);
      const looked = await request(server, 'GET', `/v1/invites/${code}`);
      assert.equal(looked.status, 200, looked.text);
      assert.equal((looked.body.guild as { id: string }).id, delta.guildId);
      await page.keyboard.press('Escape');
      await invite.waitFor({ state: 'detached' });
      assert.equal(await focusedName(page), 'Delta, 1 mention');

      // Server settings: the guild's settings page.
      await choose('Server settings');
      await page.waitForURL(`${server.origin}/channels/${delta.guildId}/settings`);
      await page.goto(`${server.origin}/channels/${delta.guildId}/${delta.channelId}`);
      await rail(page).getByRole('link', { name: 'Delta' }).waitFor();

      // Leave server asks first: cancelled, nothing happens; confirmed, the guild leaves the rail and the account.
      await choose('Leave server');
      const leave = page.getByRole('dialog', { name: 'Leave Delta?' });
      await leave.getByRole('button', { name: 'Cancel' }).click();
      await leave.waitFor({ state: 'detached' });
      await deltaLink.focus();
      await page.keyboard.press('ContextMenu');
      await menu.getByRole('menuitem', { name: 'Leave server' }).press('Enter');
      await leave.getByRole('button', { name: 'Leave Delta' }).click();
      await deltaLink.waitFor({ state: 'detached' });
      await heard(page, 'You left Delta');
      assert.equal(new URL(page.url()).pathname, '/channels/@me');
      const guilds = await request(server, 'GET', '/v1/users/@me/guilds', { auth: alice.token });
      assert.deepEqual(
        (guilds.body as { id: string }[]).map((g) => g.id),
        [alpha.body.id],
      );

      // A 375 px phone: the menu opened from the keyboard in the navigation drawer stays on the screen.
      await page.setViewportSize({ width: 375, height: 667 });
      await page.goto(`${server.origin}/channels/${alpha.body.id}/${alpha.body.system_channel_id}`);
      await page.getByRole('button', { name: 'Open navigation' }).click();
      // The drawer slides in: the menu is opened once it is there.
      await page.waitForFunction(() => {
        const box = document.querySelector('nav[aria-label="Servers"]')?.getBoundingClientRect();
        return box !== undefined && box.left === 0;
      });
      await rail(page).getByRole('link', { name: 'Alpha', exact: true }).press('Shift+F10');
      await alphaMenu.waitFor();
      const box = await alphaMenu.boundingBox();
      assert.ok(box);
      assert.ok(box.x >= 0 && box.x + box.width <= 375, `inside the screen across (${box.x}, ${box.width})`);
      assert.ok(box.y >= 0 && box.y + box.height <= 667, `inside the screen down (${box.y}, ${box.height})`);
      await assertAccessible(page, 'the guild menu on a phone');
      await page.keyboard.press('Escape');
      await alphaMenu.waitFor({ state: 'detached' });
      // Escape closed the menu only: the drawer is still open, the focus back on Alpha.
      assert.equal(await focusedName(page), 'Alpha');
      await context.close();
    });
  });
}
