import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { as, befriend, ok } from '../support/chat.ts';
import { registerUser, request } from '../support/client.ts';
import { totpCode } from '../support/mfa.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  h1,
  newContext,
  serverAndChromium,
  signedInContext,
  signedInPage,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The pages found the way assistive technology and a by-name test find them: the plainest label or name, with
 * no `exact` and no second guess (docs/web.md#accessibility). A control whose name contains a field's label
 * (a "Show password" button beside "Password") or a second control with the same label makes such a lookup
 * ambiguous.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/plain-locators.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  /** The controls a by-name lookup finds (getByRole's name matches a case-insensitive substring). */
  const CONTROL_ROLES = new Set([
    'button',
    'link',
    'textbox',
    'searchbox',
    'combobox',
    'checkbox',
    'radio',
    'switch',
    'tab',
    'menuitem',
    'slider',
    'spinbutton',
    'listbox',
  ]);

  /**
   * Pairs of controls of one role, both in the accessibility tree, whose different names contain one another
   * ("Search" and "Search emoji"): a by-name lookup of the shorter finds both. The same name twice is a
   * control repeated per row (a message's "Reply"), found within its row; a person's name (a message's author)
   * is in every control about that person (their entry in the member list), found within its region.
   */
  async function nameCollisions(page: Page, people: string[]): Promise<string[]> {
    const persons = new Set(people.map((name) => name.toLowerCase()));
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: { ignored?: boolean; role?: { value?: string }; name?: { value?: string } }[];
    };
    await cdp.detach();
    const names = new Map<string, Set<string>>();
    for (const node of nodes) {
      const role = node.role?.value ?? '';
      const name = (node.name?.value ?? '').trim().toLowerCase();
      if (node.ignored || !CONTROL_ROLES.has(role) || !name) continue;
      names.set(role, (names.get(role) ?? new Set()).add(name));
    }
    const found: string[] = [];
    for (const [role, set] of names) {
      for (const a of set) {
        if (persons.has(a)) continue;
        for (const b of set) if (a !== b && b.includes(a)) found.push(`${role}: "${a}" in "${b}"`);
      }
    }
    return found.sort();
  }

  describe('plain locators', () => {
    it('register and sign in find "Password" as one field; the show button is still named', async () => {
      const context = await newContext(browser);
      const page = await context.newPage();
      await page.goto(`${server.origin}/register`);
      await h1(page, 'Create your account');
      const suffix = Math.random().toString(36).slice(2, 8);
      const email = `plain${suffix}@example.test`;
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Username').fill(`plain_${suffix}`);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Show password' }).click();
      assert.equal(await page.getByLabel('Password').getAttribute('type'), 'text');
      await page.getByRole('button', { name: 'Hide password' }).click();
      assert.equal(await page.getByLabel('Password').getAttribute('type'), 'password');
      await page.getByLabel(/agree/).check();
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL((url) => url.pathname !== '/register');

      // Registering leads to the chat, whose user area leads to the settings.
      await page.getByRole('link', { name: 'Settings' }).click();
      await h1(page, 'Settings');
      await page.getByRole('button', { name: 'Sign out on this device' }).click();
      await h1(page, 'Sign in to Hearth');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname !== '/login');
      await context.close();
    });

    it('settings: one "Language" field, the authenticator "Code" field alone, a "Passkeys" heading', async () => {
      const user = await registerUser(server);
      const { context, page } = await signedInPage(browser, server.origin, user);
      await page.goto(`${server.origin}/settings`);
      await h1(page, 'Settings');
      await page.getByRole('heading', { level: 2, name: 'Passkeys' }).waitFor();

      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      await assertAccessible(page, 'settings, authenticator enrolment');
      const secret = await page.getByLabel('Setup key').inputValue();
      await page.getByLabel('Code').fill(totpCode(secret.replace(/\s/g, '')));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('button', { name: /download/i }).waitFor();
      const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
      assert.equal(me.body.mfa_enabled, true);

      await page.getByLabel('Language').selectOption('fr');
      await h1(page, 'Paramètres');
      await page.getByRole('heading', { level: 2, name: 'Clés d’accès' }).waitFor();
      await page.getByLabel('Langue').selectOption('en');
      await h1(page, 'Settings');
      await context.close();
    });

    it('chat: a message is found once by its text, its announcement is in the accessibility tree, a file is set by its label', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Plain', alice, bob);
      const open = async (user: typeof alice): Promise<Page> => {
        const context = await signedInContext(browser, user);
        const page = await context.newPage();
        await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
        await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
        return page;
      };
      const [a, b] = [await open(alice), await open(bob)];
      const box = a.getByRole('textbox', { name: 'Message #general' });
      await box.fill('hello from a plain test');
      await box.press('Enter');
      // Found once on the other side (the live region's copy is not page text) and once on the sender's.
      await b.getByText('hello from a plain test').waitFor();
      await a.getByText('hello from a plain test').waitFor();
      // The reaction bar's way to the full picker is not a second "Emoji" button.
      const received = b.getByRole('listitem').filter({ hasText: 'hello from a plain test' });
      await received.hover();
      await received.getByRole('button', { name: 'Add reaction' }).click();
      await b.getByRole('group', { name: 'Pick a reaction' }).waitFor();
      assert.equal(await b.getByRole('button', { name: 'Emoji' }).count(), 1);
      await b.getByRole('button', { name: 'More reactions' }).click();
      await b.getByRole('dialog', { name: 'Emoji picker' }).waitFor();
      await b.keyboard.press('Escape');
      // A screen reader still hears it: the accessibility tree has a status with the author and the text.
      const cdp = await b.context().newCDPSession(b);
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
        nodes: { role?: { value?: string }; name?: { value?: string } }[];
      };
      const statuses = nodes.filter((node) => node.role?.value === 'status').map((node) => node.name?.value ?? '');
      const texts = nodes.map((node) => node.name?.value ?? '');
      assert.ok(statuses.length > 0, 'a status region');
      assert.ok(
        texts.some((text) => text === `${alice.username}: hello from a plain test`),
        `announcement in the tree: ${JSON.stringify(texts.filter((text) => text.includes('plain')))}`,
      );

      // The "+" is the file input itself: set by its label, or chosen through the button it is.
      await a.getByLabel('Upload a file').setInputFiles({
        name: 'plain.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('plain text file'),
      });
      await a.getByRole('list', { name: 'Files to send' }).getByText('plain.txt').waitFor();
      await box.press('Enter');
      await b.getByRole('link', { name: /plain\.txt/ }).waitFor();
      const chooser = a.waitForEvent('filechooser');
      await a.getByRole('button', { name: 'Upload a file' }).click();
      await (await chooser).setFiles({ name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('2') });
      await a.getByRole('list', { name: 'Files to send' }).getByText('second.txt').waitFor();
      await assertAccessible(a, 'chat with a file to send');
      await a.context().close();
      await b.context().close();
    });

    it('chat views with the emoji picker open: no control named inside another name of its role', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Plain names', alice, bob);
      await befriend(server, alice, bob);
      const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
      for (const [user, text] of [
        [alice, 'first words'],
        [bob, 'an answer'],
        [alice, 'and more'],
      ] as const) {
        await ok(as(server, user, 'POST', `/channels/${channelId}/messages`, { content: text }));
        await ok(as(server, user, 'POST', `/channels/${dm.id}/messages`, { content: text }));
      }
      const people = [alice.username, bob.username];
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      const views: [string, string, string | null][] = [
        ['guild channel', `/channels/${guildId}/${channelId}`, 'Message #general'],
        ['direct message', `/channels/@me/${dm.id}`, `Message ${bob.username}`],
        ['friends', '/channels/@me', null],
      ];
      for (const [view, path, composer] of views) {
        await page.goto(`${server.origin}${path}`);
        if (composer) {
          await page.getByRole('textbox', { name: composer }).waitFor();
          await page.getByText('and more').first().waitFor();
          await page.getByRole('button', { name: 'Emoji' }).click();
          await page.getByRole('dialog', { name: 'Emoji picker' }).waitFor();
        } else {
          await page.getByRole('heading', { level: 1 }).first().waitFor();
        }
        assert.deepEqual(await nameCollisions(page, people), [], `${view}: names that contain another's`);
        // And the two searches are found by their plain names, one each.
        if (composer) {
          assert.equal(await page.getByRole('searchbox', { name: 'Search' }).count(), 1, view);
          assert.equal(await page.getByRole('searchbox', { name: 'Find emoji' }).count(), 1, view);
        }
      }
      // The same in French ("Paramètres" beside "Paramètres du serveur" was one).
      await page.evaluate(() => window.localStorage.setItem('hearth.locale', 'fr'));
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Envoyer un message dans #general' }).waitFor();
      await page.getByText('and more').first().waitFor();
      await page.getByRole('button', { name: 'Émoji' }).click();
      await page.getByRole('dialog', { name: 'Sélecteur d’émojis' }).waitFor();
      assert.deepEqual(await nameCollisions(page, people), [], 'guild channel in French');
      await context.close();
    });

    it('server roles: the editor\'s "Role name" and the "Send messages" permission are one field each', async () => {
      const owner = await registerUser(server);
      const { guildId } = await guildWith(server, 'Plain roles', owner);
      const context = await signedInContext(browser, owner);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('button', { name: 'Roles' }).click();
      await page.getByLabel('Name of the new role').fill('Helpers');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByRole('form', { name: 'Role: Helpers' }).waitFor();
      await page.getByLabel('Role name').fill('Helpers team');
      await page.getByLabel('Send messages').check();
      await page.getByRole('checkbox', { name: 'Write in threads' }).check();
      await page.getByRole('button', { name: 'Save role' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const roles = await request(server, 'GET', `/v1/guilds/${guildId}/roles`, { auth: owner.token });
      const role = (roles.body as { name: string; permissions: string }[]).find((r) => r.name === 'Helpers team');
      assert.ok(role, JSON.stringify(roles.body));
      const bits = (1n << 11n) | (1n << 38n);
      assert.equal(BigInt(role.permissions) & bits, bits);
      await context.close();
    });

    it('channel editor: "Channel name", the overwrite "Role" select and a permission\'s "Deny" by plain labels', async () => {
      const owner = await registerUser(server);
      const { guildId, channelId } = await guildWith(server, 'Plain channels', owner);
      const context = await signedInContext(browser, owner);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/settings`);
      await page
        .getByRole('navigation', { name: 'Settings sections' })
        .getByRole('button', { name: 'Channels' })
        .click();
      await page.getByRole('button', { name: 'Edit channel general' }).click();
      await page.getByLabel('Channel name').fill('lobby');
      await page.getByRole('button', { name: 'Save channel' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor();
      await page.getByLabel('Role').selectOption({ label: '@everyone' });
      await page.getByRole('group', { name: 'Send messages' }).getByLabel('Deny').check();
      await page.getByRole('button', { name: 'Save permissions for @everyone' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).last().waitFor();
      const channel = await request(server, 'GET', `/v1/channels/${channelId}`, { auth: owner.token });
      assert.equal(channel.body.name, 'lobby');
      const everyone = (channel.body.permission_overwrites as { id: string; deny: string }[]).find(
        (overwrite) => overwrite.id === guildId,
      );
      assert.ok(everyone, JSON.stringify(channel.body.permission_overwrites));
      assert.equal(BigInt(everyone.deny) & (1n << 11n), 1n << 11n);
      await context.close();
    });
  });
}
