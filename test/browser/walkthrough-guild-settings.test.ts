import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import { installBot } from '../support/oauth2.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  imageLoaded,
  press,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * A newcomer's walk through the server settings by keyboard (issue 18 §2): the role editor explains each
 * permission (the checkbox's description), so does a channel's permission override; stickers are uploaded and
 * deleted beside the emojis; a member is given a role and kicked from the member editor.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/walkthrough-guild-settings.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  const section = (page: Page, name: string) =>
    press(page.getByRole('navigation', { name: 'Settings sections' }).getByRole('button', { name, exact: true }));
  /** What a screen reader reads after a control's name: the text its aria-describedby points at. */
  const description = (control: Locator) =>
    control.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' ')
        .trim(),
    );

  describe('server settings by keyboard', () => {
    it('explains each permission, uploads and deletes a sticker, gives a member a role and kicks them', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Foundry', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}`);
      await press(page.getByRole('link', { name: 'Server settings' }));
      await page.getByRole('heading', { level: 1, name: 'Server settings: Foundry' }).waitFor();

      // Roles: every permission says what it allows, under its name.
      await section(page, 'Roles');
      const newRole = page.getByLabel('Name of the new role');
      await newRole.focus();
      await page.keyboard.type('Helpers');
      await page.keyboard.press('Enter');
      const form = page.getByRole('form', { name: 'Role: Helpers' });
      await form.waitFor();
      const kick = form.getByRole('checkbox', { name: 'Kick members' });
      assert.equal(await description(kick), 'Remove members from the server; they may join again with an invite.');
      assert.equal(
        await description(form.getByRole('checkbox', { name: 'Administrator' })),
        'Every permission below, everywhere, whatever a channel says. Give it only to people you trust fully.',
      );
      const boxes = form.getByRole('checkbox');
      const count = await boxes.count();
      assert.ok(count >= 40, String(count));
      for (let i = 0; i < count; i++) {
        const box = boxes.nth(i);
        const name = await box.evaluate((el) => el.closest('label')?.textContent ?? '');
        if (
          ['Show members with this role separately', 'Allow anyone to mention this role'].some((skip) =>
            name.includes(skip),
          )
        )
          continue;
        assert.ok((await description(box)).length > 10, `an explanation for "${name}"`);
      }
      await press(kick, 'Space');
      await press(form.getByRole('button', { name: 'Save role' }));
      await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await assertAccessible(page, 'server settings: roles with explanations');

      // A channel's override explains the permission too.
      await section(page, 'Channels');
      await press(page.getByRole('button', { name: 'Edit channel general' }));
      const send = page.getByRole('group', { name: 'Send messages' });
      assert.equal(await description(send), 'Post messages in text channels.');

      // Stickers, beside the emojis.
      await section(page, 'Emojis');
      const stickers = page.getByRole('region', { name: 'Stickers' });
      await stickers.getByText('No stickers yet.').waitFor();
      await stickers.getByLabel('Sticker name').focus();
      await page.keyboard.type('wave');
      await stickers.getByLabel('Sticker tags').focus();
      await page.keyboard.type('wave');
      await stickers
        .getByLabel('Sticker image')
        .setInputFiles({ name: 'wave.png', mimeType: 'image/png', buffer: PNG });
      await stickers.getByRole('img', { name: 'Sticker preview' }).waitFor();
      await press(stickers.getByRole('button', { name: 'Upload sticker' }));
      await imageLoaded(stickers.getByRole('listitem').getByRole('img', { name: 'wave' }));
      const listed = await request(server, 'GET', `/v1/guilds/${guildId}/stickers`, { auth: bob.token });
      assert.deepEqual(
        (listed.body as { name: string; tags: string }[]).map((s) => [s.name, s.tags]),
        [['wave', 'wave']],
      );
      await assertAccessible(page, 'server settings: stickers');
      await press(stickers.getByRole('button', { name: 'Delete sticker wave' }));
      await stickers.getByText('No stickers yet.').waitFor();

      // A member given the role, then kicked.
      await section(page, 'Members');
      await press(page.getByRole('button', { name: `Manage ${bob.username}` }));
      const editor = page.getByRole('region', { name: `Member: ${bob.username}` });
      await press(editor.getByRole('checkbox', { name: 'Helpers' }), 'Space');
      await page.waitForFunction(
        async ([token, url]) => {
          const res = await fetch(url as string, { headers: { authorization: token as string } });
          return res.ok && ((await res.json()).roles as string[]).length === 1;
        },
        [alice.token, `/v1/guilds/${guildId}/members/${bob.id}`],
      );
      await press(editor.getByRole('button', { name: `Kick ${bob.username}` }));
      await editor.waitFor({ state: 'detached' });
      const gone = await request(server, 'GET', `/v1/guilds/${guildId}/members/${bob.id}`, { auth: alice.token });
      assert.equal(gone.status, 404);
      await context.close();
    });

    it('lists the bots of the server with their commands, and removes one', async () => {
      const owner = await registerUser(server);
      const { guildId } = await guildWith(server, 'Workbench', owner);
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: owner.token,
        body: { name: 'Helper bot' },
      });
      assert.equal(app.status, 200, app.text);
      const installed = await installBot(server, owner, app.body.id, guildId, (1n << 10n) | (1n << 11n));
      assert.equal(installed.status, 200, installed.text);
      const commands = await request(server, 'PUT', `/v1/applications/${app.body.id}/guilds/${guildId}/commands`, {
        auth: `Bot ${app.body.bot.token}`,
        body: [
          { name: 'remind', description: 'Reminds you later', type: 1 },
          { name: 'Thank', type: 2 },
        ],
      });
      assert.equal(commands.status, 200, commands.text);
      const context = await signedInContext(browser, owner);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await section(page, 'Bots');
      const list = page.getByRole('list', { name: 'Bots of this server' });
      await list.getByRole('heading', { level: 3, name: 'Helper bot' }).waitFor();
      assert.deepEqual(
        await list.getByRole('list', { name: 'Commands of Helper bot' }).getByRole('listitem').allInnerTexts(),
        ['/remind — Reminds you later', 'Thank (on a person, from their card)'],
      );
      await assertAccessible(page, 'server settings: bots');
      const botMember = `/v1/guilds/${guildId}/members/${app.body.bot.id}`;
      assert.equal((await request(server, 'GET', botMember, { auth: owner.token })).status, 200);
      await press(page.getByRole('button', { name: 'Remove Helper bot from the server' }));
      await page.getByText('No bot has been added to this server.').waitFor();
      assert.equal((await request(server, 'GET', botMember, { auth: owner.token })).status, 404);
      await context.close();
    });
  });
}
