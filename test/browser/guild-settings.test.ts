import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  chromiumForFile,
  guildWith,
  imageLoaded,
  signedInContext,
  startWebServer,
  warnNoChromium,
} from './support/browser.ts';

/**
 * Server settings in Chromium, with the owner in one context and a member in another: a rename seen live, a
 * role with a colour and "Manage messages" given to the member who can then delete others' messages, a
 * channel hidden from @everyone, an invite revoked, an emoji uploaded and used as a reaction, a ban with its
 * reason lifted again, the audit log filtered; axe on every section.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/guild-settings.test.ts');
} else {
  let browser: Browser;
  chromiumForFile((launched) => {
    browser = launched;
  });

  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  const section = (page: Page, name: string) =>
    page.getByRole('navigation', { name: 'Settings sections' }).getByRole('button', { name, exact: true }).click();

  describe('server settings', () => {
    let server: TestServer & { origin: string };
    let alice: TestUser;
    let bob: TestUser;
    let guildId: string;
    let channelId: string;
    let a: Page;
    let b: Page;
    before(async () => {
      server = await startWebServer();
      [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      ({ guildId, channelId } = await guildWith(server, 'Workshop', alice, bob));
      const [ca, cb] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, bob)]);
      [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([
        a.goto(`${server.origin}/channels/${guildId}/${channelId}`),
        b.goto(`${server.origin}/channels/${guildId}/${channelId}`),
      ]);
      await b.getByRole('textbox', { name: 'Message #general' }).waitFor();
      await a.getByRole('link', { name: 'Server settings' }).click();
      await a.getByRole('heading', { level: 1, name: 'Server settings: Workshop' }).waitFor();
    });
    after(async () => {
      await server?.close();
    });

    it('renames the server and sets its icon; the member sees the new name live', async () => {
      assert.equal(await a.getByRole('heading', { level: 1 }).count(), 1);
      await a.getByLabel('Server name').fill('Workshop renamed');
      await a
        .getByLabel('Server icon', { exact: true })
        .setInputFiles({ name: 'icon.png', mimeType: 'image/png', buffer: PNG });
      await a.getByRole('img', { name: 'Server icon preview' }).waitFor();
      await a.getByLabel('Inactive timeout').selectOption({ label: '15 minutes' });
      await a.getByLabel('Default notifications').selectOption({ label: 'Only mentions' });
      await assertAccessible(a, 'server settings: overview');
      await a.getByRole('button', { name: 'Save changes' }).click();
      await a.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await b.getByRole('heading', { level: 2, name: 'Workshop renamed' }).waitFor();
      await a.getByRole('heading', { level: 1, name: 'Server settings: Workshop renamed' }).waitFor();
      const guild = await request(server, 'GET', `/v1/guilds/${guildId}`, { auth: bob.token });
      assert.equal(guild.body.name, 'Workshop renamed');
      assert.match(String(guild.body.icon), /^[0-9a-f]+$/);
      // The member's guild rail shows the new icon, named by the guild.
      const railIcon = b.getByRole('navigation', { name: 'Servers' }).getByRole('img', { name: 'Workshop renamed' });
      await imageLoaded(railIcon);
      assert.match(
        String(await railIcon.getAttribute('src')),
        new RegExp(`/media/icons/${guildId}/${guild.body.icon}\\.webp\\?size=64$`),
      );
      assert.equal(guild.body.afk_timeout, 900);
      assert.equal(guild.body.default_message_notifications, 1);
    });

    it('creates a coloured role with "Manage messages"; given to the member, they can delete others’ messages', async () => {
      const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'delete me if you can' },
      });
      assert.equal(sent.status, 200);
      const message = b.locator('.message', { hasText: 'delete me if you can' });
      await message.waitFor();
      await message.hover();
      assert.equal(await message.getByRole('button', { name: 'Delete' }).count(), 0);

      await section(a, 'Roles');
      await a.getByLabel('Name of the new role').fill('Moderators');
      await a.getByRole('button', { name: 'Create role' }).click();
      const editor = a.getByRole('form', { name: 'Role: Moderators' });
      await editor.waitFor();
      await editor.getByLabel('Role colour').fill('#3366ff');
      await editor.getByLabel('Show members with this role separately in the member list').check();
      await editor.getByRole('checkbox', { name: 'Manage messages' }).check();
      await assertAccessible(a, 'server settings: roles');
      await editor.getByRole('button', { name: 'Save role' }).click();
      await editor.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const roles = await request(server, 'GET', `/v1/guilds/${guildId}/roles`, { auth: alice.token });
      const role = (
        roles.body as { id: string; name: string; color: number; hoist: boolean; permissions: string }[]
      ).find((r) => r.name === 'Moderators');
      assert.ok(role);
      assert.equal(role.color, 0x3366ff);
      assert.equal(role.hoist, true);
      assert.equal(BigInt(role.permissions) & (1n << 13n), 1n << 13n);

      await section(a, 'Members');
      await a.getByRole('button', { name: `Manage ${bob.username}` }).click();
      const member = a.getByRole('region', { name: `Member: ${bob.username}` });
      await member.getByRole('checkbox', { name: 'Moderators' }).check();
      // The box shows the change at once; the server has it once the request is through.
      let given: string[] = [];
      for (let i = 0; i < 50 && given.length === 0; i++) {
        if (i) await a.waitForTimeout(100);
        const res = await request(server, 'GET', `/v1/guilds/${guildId}/members/${bob.id}`, { auth: alice.token });
        given = res.body.roles as string[];
      }
      assert.deepEqual(given, [role.id]);
      await assertAccessible(a, 'server settings: members');

      // Bob's client sees the role arrive and offers Delete on Alice's message.
      await message.hover();
      await message.getByRole('button', { name: 'Delete' }).click();
      await b.getByRole('dialog', { name: 'Delete message' }).getByRole('button', { name: 'Delete' }).click();
      // Gone from Bob's view once the server's MESSAGE_DELETE arrives (Alice is on the settings page).
      await message.waitFor({ state: 'detached' });
      const gone = await request(server, 'GET', `/v1/channels/${channelId}/messages/${sent.body.id}`, {
        auth: alice.token,
      });
      assert.equal(gone.status, 404);
      // Manage messages opens no further section: every member may add emojis (CREATE_EXPRESSIONS) and edit their own server profile.
      await b.getByRole('link', { name: 'Server settings' }).click();
      const nav = b.getByRole('navigation', { name: 'Settings sections' });
      await nav.waitFor();
      assert.deepEqual(await nav.getByRole('button').allInnerTexts(), ['Emojis', 'Server profile']);
      await assertAccessible(b, 'server settings: a member');
      await b.getByRole('button', { name: 'Close settings' }).click();
      await b.getByRole('textbox', { name: 'Message #general' }).waitFor();
    });

    it('creates a channel, then hides it from @everyone: the member reading it loses it live', async () => {
      await section(a, 'Channels');
      await a.getByLabel('Name of the new channel').fill('secret-plans');
      await a.getByLabel('Channel type').selectOption({ label: 'Text channel' });
      await a.getByRole('button', { name: 'Create channel' }).click();
      // The member sees it appear, and opens it.
      await b.getByRole('link', { name: '#secret-plans' }).click();
      await b.getByRole('textbox', { name: 'Message #secret-plans' }).waitFor();
      const created = a.getByRole('heading', { name: 'Channel: secret-plans' });
      await created.waitFor();
      await a.getByLabel('Topic').fill('Only for the owner');
      await a.getByLabel('Slow mode').selectOption({ label: '10 seconds' });
      await a.getByRole('button', { name: 'Save channel' }).click();
      await a
        .getByRole('form', { name: 'Channel: secret-plans' })
        .getByRole('status')
        .filter({ hasText: 'Saved.' })
        .waitFor();
      const view = a.getByRole('group', { name: 'View channels' });
      await view.getByRole('radio', { name: 'Deny' }).check();
      await assertAccessible(a, 'server settings: channels');
      await a.getByRole('button', { name: 'Save permissions for @everyone' }).click();
      // Each form shows its own "Saved."; the channel form's is already on screen.
      await a
        .getByRole('form', { name: 'Permissions in secret-plans' })
        .getByRole('status')
        .filter({ hasText: 'Saved.' })
        .waitFor();

      const list = await request(server, 'GET', `/v1/guilds/${guildId}/channels`, { auth: alice.token });
      const channel = (
        list.body as {
          id: string;
          name: string;
          topic: string;
          rate_limit_per_user: number;
          permission_overwrites: { id: string; deny: string }[];
        }[]
      ).find((c) => c.name === 'secret-plans');
      assert.ok(channel);
      assert.equal(channel.topic, 'Only for the owner');
      assert.equal(channel.rate_limit_per_user, 10);
      assert.deepEqual(
        channel.permission_overwrites.map((o) => [o.id, o.deny]),
        [[guildId, String(1n << 10n)]],
      );
      // The member, who was reading it, loses it live (CHANNEL_DELETE: docs/web.md, Permissions): it leaves the
      // sidebar, the view moves to #general and says why.
      await b.getByRole('link', { name: '#secret-plans' }).waitFor({ state: 'detached' });
      await b.getByRole('textbox', { name: 'Message #general' }).waitFor();
      const notice = b
        .getByRole('status')
        .filter({ hasText: 'You can no longer see #secret-plans: it was deleted or your permissions changed.' });
      await notice.waitFor();
      assert.match(b.url(), new RegExp(`/channels/${guildId}/${channelId}$`));
      const hidden = await request(server, 'GET', `/v1/channels/${channel.id}`, { auth: bob.token });
      assert.equal(hidden.status, 403);
      assert.equal(await a.getByRole('link', { name: '#secret-plans' }).count(), 1);
      await b.getByRole('button', { name: 'Dismiss notice' }).click();
      await notice.waitFor({ state: 'detached' });

      // The overwrite removed, the member gains it back live (CHANNEL_CREATE).
      const removed = await request(server, 'DELETE', `/v1/channels/${channel.id}/permissions/${guildId}`, {
        auth: alice.token,
      });
      assert.equal(removed.status, 204, removed.text);
      await b.getByRole('link', { name: '#secret-plans' }).waitFor();
    });

    it('lists invites with their uses and revokes one, which then stops working', async () => {
      const made = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
        auth: alice.token,
        body: { max_uses: 5, unique: true },
      });
      assert.equal(made.status, 200, made.text);
      const code = made.body.code as string;
      await section(a, 'Overview');
      await section(a, 'Invites');
      const row = a.getByRole('row').filter({ hasText: code });
      await row.waitFor();
      assert.match(await row.innerText(), /0 \/ 5/);
      await assertAccessible(a, 'server settings: invites');
      await row.getByRole('button', { name: `Revoke invite ${code}` }).click();
      await row.waitFor({ state: 'detached' });
      const gone = await request(server, 'GET', `/v1/invites/${code}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'UNKNOWN_INVITE');
    });

    it('uploads an emoji that the member then reacts with', async () => {
      await section(a, 'Emojis');
      await a.getByLabel('Emoji name').fill('hearth_spark');
      await a.getByLabel('Emoji image').setInputFiles({ name: 'spark.png', mimeType: 'image/png', buffer: PNG });
      await a.getByRole('img', { name: 'Emoji preview' }).waitFor();
      await a.getByRole('button', { name: 'Upload emoji' }).click();
      await a.getByRole('img', { name: ':hearth_spark:' }).waitFor();
      await assertAccessible(a, 'server settings: emojis');

      const reactTo = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'react to this' },
      });
      const message = b.locator('.message', { hasText: 'react to this' });
      await message.hover();
      await message.getByRole('button', { name: 'Add reaction' }).click();
      await message.getByRole('button', { name: 'React with :hearth_spark:' }).click();
      await message.getByRole('button', { name: 'hearth_spark: 1 reaction' }).waitFor();
      const emojis = await request(server, 'GET', `/v1/guilds/${guildId}/emojis`, { auth: alice.token });
      const emoji = (emojis.body as { id: string; name: string }[])[0];
      assert.equal(emoji?.name, 'hearth_spark');
      const reacted = await request(
        server,
        'GET',
        `/v1/channels/${channelId}/messages/${reactTo.body.id}/reactions/${encodeURIComponent(`hearth_spark:${emoji.id}`)}`,
        { auth: alice.token },
      );
      assert.deepEqual(
        (reacted.body as { id: string }[]).map((u) => u.id),
        [bob.id],
      );

      // Renamed, then deleted.
      await a.getByLabel('Name of :hearth_spark:').fill('spark');
      await a.getByRole('button', { name: 'Rename' }).click();
      await a.getByRole('img', { name: ':spark:' }).waitFor();
      await a.getByRole('button', { name: 'Delete :spark:' }).click();
      await a.getByText('No emojis yet.').waitFor();
    });

    it('sets a member’s nickname and time-out, bans them with a reason, shows it in the bans and the audit log, and lifts it', async () => {
      const carol = await registerUser(server);
      const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
        auth: alice.token,
        body: {},
      });
      await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: carol.token, body: {} });
      await section(a, 'Members');
      await a.getByRole('button', { name: `Manage ${carol.username}` }).click();
      await a
        .getByRole('region', { name: `Member: ${carol.username}` })
        .getByLabel('Nickname')
        .fill('Caro');
      await a.getByRole('button', { name: 'Save nickname' }).click();
      const member = a.getByRole('region', { name: 'Member: Caro' });
      await member.waitFor();
      await member.getByLabel('Time-out length').selectOption({ label: '1 hour' });
      await member.getByRole('button', { name: 'Time out Caro' }).click();
      await member.getByText(/^Timed out until /).waitFor();
      const fetched = await request(server, 'GET', `/v1/guilds/${guildId}/members/${carol.id}`, { auth: alice.token });
      assert.equal(fetched.body.nick, 'Caro');
      const until = Date.parse(String(fetched.body.communication_disabled_until));
      assert.ok(until > Date.now() + 50 * 60_000 && until < Date.now() + 61 * 60_000, String(until));
      await assertAccessible(a, 'server settings: a member timed out');
      await member.getByLabel('Reason').fill('spam links');
      await member.getByRole('button', { name: 'Ban Caro' }).click();
      await member.waitFor({ state: 'detached' });
      await section(a, 'Bans');
      await a.getByText(`${carol.username} — spam links`).waitFor();
      await assertAccessible(a, 'server settings: bans');

      await section(a, 'Audit log');
      await a.getByLabel('Action').selectOption({ label: 'Member banned' });
      const rows = a.locator('.settings-table tbody tr');
      // The unfiltered page stays until the filtered answer replaces it: wait for the filtered one (one row).
      await a.waitForFunction(() => document.querySelectorAll('.settings-table tbody tr').length === 1, undefined, {
        timeout: 10_000,
      });
      assert.equal(await rows.count(), 1);
      assert.match(await rows.first().innerText(), /Member banned[\s\S]*spam links/);
      await a.getByLabel('Action').selectOption({ label: 'All actions' });
      // Bob deleted Alice's message with his new role: the one entry done by him.
      await a.getByLabel('Done by').selectOption({ label: bob.username });
      // As above, the previous answer stays until the filtered one replaces it: wait for exactly Bob's one entry.
      await a.waitForFunction(
        () => {
          const shown = document.querySelectorAll('.settings-table tbody tr');
          return shown.length === 1 && (shown[0]?.textContent ?? '').includes('Message deleted');
        },
        undefined,
        { timeout: 10_000 },
      );
      assert.equal(await rows.count(), 1);
      await a.getByLabel('Action').selectOption({ label: 'Member kicked' });
      await a.getByText('No entries.').waitFor();
      await assertAccessible(a, 'server settings: audit log');

      await section(a, 'Bans');
      await a.getByRole('button', { name: `Unban ${carol.username}` }).click();
      await a.getByText('Nobody is banned.').waitFor();
      const ban = await request(server, 'GET', `/v1/guilds/${guildId}/bans/${carol.id}`, { auth: alice.token });
      assert.equal(ban.status, 404);
    });
  });
}
