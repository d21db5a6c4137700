import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { friendsWithDm } from '../support/chat.ts';
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
 * What two newcomers met on a first walk (issue 18 QA): server settings on a phone show the chosen section on the
 * first screen (the sections are one scrolling row, not a column of eleven over it), and someone's card says
 * nothing of the friends and servers two people do not share ("0 mutual friends"), and a member's roles in a new
 * server say there are none yet rather than show an empty box.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/first-use-polish.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('first use', () => {
    it('server settings on a 375 px phone: the chosen section is on the first screen, nothing overflows', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Phone club', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.setViewportSize({ width: 375, height: 812 });
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page.getByRole('heading', { name: 'Server settings: Phone club', level: 1 }).waitFor();
      const sections = page.getByRole('navigation', { name: 'Settings sections' });
      // Each section's heading in the top half (a column of eleven sections put it at the foot, y ≈ 675).
      for (const name of ['Overview', 'Members', 'Audit log']) {
        await sections.getByRole('button', { name, exact: true }).click();
        const heading = page.getByRole('region', { name }).getByRole('heading', { name, level: 2 });
        await heading.waitFor();
        const box = await heading.boundingBox();
        assert.ok(box && box.y + box.height <= 812 / 2, `${name}: heading at ${JSON.stringify(box)}, far down`);
      }
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375);
      // The menu button is the same ☰ as on the chat's own pages.
      assert.equal(await page.getByRole('button', { name: 'Open navigation' }).innerText(), '☰');
      await assertAccessible(page, 'server settings on a phone');
      await context.close();
    });

    it('the channel header’s actions are icons with their names as tooltips, on one row of a phone', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Header club', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.setViewportSize({ width: 375, height: 812 });
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
      const centres: number[] = [];
      for (const name of ['Channel notifications', 'Pinned messages', 'Members']) {
        const button = page.getByRole('button', { name, exact: true });
        assert.equal(await button.getAttribute('title'), name);
        assert.equal((await button.innerText()).trim().length <= 2, true, `${name} shows words`);
        const box = await button.boundingBox();
        assert.ok(box);
        centres.push(box.y + box.height / 2);
      }
      assert.ok(Math.max(...centres) - Math.min(...centres) < 4, `on several rows: ${centres.join(', ')}`);
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375);
      // The bell opens the channel's notification settings.
      await page.getByRole('button', { name: 'Channel notifications', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Notifications for #general' });
      await dialog.waitFor();
      await assertAccessible(page, 'channel notifications on a phone');
      await context.close();
    });

    it('a member’s roles in a new server say there are none yet, then list the first one made', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Roleless club', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page
        .getByRole('navigation', { name: 'Settings sections' })
        .getByRole('button', { name: 'Members' })
        .click();
      await page.getByRole('button', { name: `Manage ${bob.username}` }).click();
      const editor = page.getByRole('region', { name: `Member: ${bob.username}` });
      const roles = editor.getByRole('group', { name: 'Roles' });
      await roles.getByText('No roles yet: make one in the Roles section.', { exact: true }).waitFor();
      await assertAccessible(page, 'member without roles to give');
      const made = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
        auth: alice.token,
        body: { name: 'Pilots' },
      });
      assert.equal(made.status, 200, made.text);
      await roles.getByRole('checkbox', { name: 'Pilots' }).waitFor();
      assert.equal(await roles.getByText('No roles yet', { exact: false }).count(), 0);
      await context.close();
    });

    it('a conversation starts by naming the person, not "Welcome to", and its call button is an icon', async () => {
      const { alice, bob, channelId } = await friendsWithDm(server);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.setViewportSize({ width: 375, height: 812 });
      await page.goto(`${server.origin}/channels/@me/${channelId}`);
      await page
        .getByText(`This is the beginning of your conversation with ${bob.username}.`, { exact: true })
        .waitFor();
      assert.equal(await page.getByText(/^Welcome to /).count(), 0);
      const call = page.getByRole('button', { name: 'Start call', exact: true });
      assert.equal(await call.getAttribute('title'), 'Start call');
      assert.equal((await call.innerText()).trim(), '📞');
      // The header's actions share one row beside the search box.
      const centres: number[] = [];
      for (const name of ['Start call', 'Conversation notifications', 'Pinned messages']) {
        const box = await page.getByRole('button', { name, exact: true }).boundingBox();
        assert.ok(box);
        centres.push(box.y + box.height / 2);
      }
      assert.ok(Math.max(...centres) - Math.min(...centres) < 4, `on several rows: ${centres.join(', ')}`);
      await assertAccessible(page, 'start of a conversation');
      await context.close();
    });

    it('the full reaction picker of a message fits a 375 px phone’s message pane', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Picker club', alice, bob);
      const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'react to me' },
      });
      assert.equal(posted.status, 200, posted.text);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.setViewportSize({ width: 375, height: 812 });
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const row = page.getByRole('listitem', { name: new RegExp(`^${bob.username}, react to me, `) });
      await row.click({ position: { x: 120, y: 20 } });
      await row.getByRole('button', { name: 'Add reaction' }).click();
      await row.getByRole('button', { name: 'More reactions' }).click();
      const picker = page.getByRole('dialog', { name: 'Emoji picker' });
      await picker.getByRole('searchbox', { name: 'Find emoji' }).waitFor();
      const pane = page.getByRole('list', { name: 'Messages in general' });
      const [p, l] = [await picker.boundingBox(), await pane.boundingBox()];
      assert.ok(p && l);
      assert.ok(
        p.x + p.width <= l.x + l.width + 0.5,
        `picker ends at ${p.x + p.width}, the messages at ${l.x + l.width}`,
      );
      // Nothing to scroll sideways in the messages.
      assert.equal(
        await pane.evaluate((el) => {
          const scroller = el.closest('.messages') as HTMLElement;
          return scroller.scrollWidth - scroller.clientWidth;
        }),
        0,
      );
      await context.close();
    });

    it('"Create a server" also joins one from a pasted invite link', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { code } = await guildWith(server, 'Invited club', alice);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/@me`);
      await page.getByRole('button', { name: 'Create a server' }).click();
      const dialog = page.getByRole('dialog', { name: 'Create a server' });
      const field = dialog.getByRole('textbox', { name: 'Invite link or code' });
      const join = dialog.getByRole('button', { name: 'Join a server' });
      await field.fill('not an invite at all');
      assert.equal(await join.isDisabled(), true);
      await field.fill(`https://elsewhere.example/docs/${code}`);
      assert.equal(await join.isDisabled(), true);
      await field.fill(code);
      assert.equal(await join.isDisabled(), false);
      await assertAccessible(page, 'create or join a server');
      await field.fill(`${server.origin}/invite/${code}`);
      await join.click();
      await page.getByRole('heading', { name: 'Join Invited club', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Accept invite' }).click();
      await page.getByRole('navigation', { name: 'Servers' }).getByRole('link', { name: 'Invited club' }).waitFor();
      await context.close();
    });

    it('the audit log names the invite an "Invite created" entry is about', async () => {
      const alice = await registerUser(server);
      const { guildId, code } = await guildWith(server, 'Logged club', alice);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page
        .getByRole('navigation', { name: 'Settings sections' })
        .getByRole('button', { name: 'Audit log' })
        .click();
      const row = page.getByRole('row').filter({ hasText: 'Invite created' });
      await row.waitFor();
      assert.deepEqual(
        (await row.getByRole('cell').allInnerTexts()).slice(1).map((text) => text.trim()),
        [alice.username, 'Invite created', code, ''],
      );
      await context.close();
    });

    it('a card names the servers and friends two people share, and says nothing when they share none', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Card club', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page
        .getByRole('complementary', { name: 'Members' })
        .getByRole('button', { name: new RegExp(`^${bob.username}\\b`) })
        .click();
      const card = page.getByRole('region', { name: `Profile of ${bob.username}` });
      await card.getByRole('list', { name: '1 mutual server' }).waitFor();
      await card.getByLabel('Note (only you see it)').waitFor();
      assert.equal(await card.getByText(/mutual friend/).count(), 0, await card.innerText());
      await context.close();
    });
  });
}
