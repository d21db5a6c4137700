import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
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
 * "Privacy" in the account settings (docs/accounts.md#privacy), in Chromium: direct messages from members of
 * servers joined from now on and per server, and who may send a friend request; each change shows as saved,
 * survives a reload, and is what the API answers and enforces.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/settings-privacy.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('account settings: privacy', () => {
    it('shows the defaults, saves each change, and keeps them after a reload', async () => {
      const user = await registerUser(server);
      const owner = await registerUser(server);
      const stranger = await registerUser(server);
      const { guildId } = await guildWith(server, 'Book club', owner, user);
      const context = await signedInContext(browser, user);
      const page = await context.newPage();
      await page.goto(`${server.origin}/settings`);
      const section = page.getByRole('region', { name: 'Privacy' });
      const dms = section.getByRole('group', { name: 'Direct messages' });
      const friends = section.getByRole('group', { name: 'Who can send you a friend request' });
      const newServers = dms.getByRole('checkbox', {
        name: 'Allow direct messages from members of servers I join from now on',
      });
      const bookClub = dms.getByRole('checkbox', { name: 'Allow direct messages from members of Book club' });
      const everyone = friends.getByRole('checkbox', { name: 'Everyone' });
      const friendsOfFriends = friends.getByRole('checkbox', { name: 'Friends of your friends' });
      const serverMembers = friends.getByRole('checkbox', { name: 'Members of your servers' });
      const saved = section.getByText('Your privacy settings are saved.');

      // The defaults: everything allowed; the narrower friend sources are implied by "Everyone".
      await newServers.waitFor();
      assert.equal(await newServers.isChecked(), true);
      assert.equal(await bookClub.isChecked(), true);
      assert.equal(await everyone.isChecked(), true);
      assert.equal(await friendsOfFriends.isChecked(), true);
      assert.equal(await friendsOfFriends.isDisabled(), true);
      assert.equal(await serverMembers.isDisabled(), true);
      await assertAccessible(page, 'settings with the privacy section');

      await newServers.uncheck();
      await saved.waitFor();
      await bookClub.uncheck();
      await everyone.uncheck();
      // "Everyone" off keeps the two narrower sources, now each a choice of their own.
      await friendsOfFriends.and(page.locator(':enabled')).waitFor();
      assert.equal(await friendsOfFriends.isChecked(), true);
      assert.equal(await serverMembers.isChecked(), true);
      await serverMembers.uncheck();
      await saved.waitFor();

      await page.reload();
      await newServers.waitFor();
      assert.equal(await newServers.isChecked(), false);
      assert.equal(await bookClub.isChecked(), false);
      assert.equal(await everyone.isChecked(), false);
      assert.equal(await friendsOfFriends.isChecked(), true);
      assert.equal(await friendsOfFriends.isEnabled(), true);
      assert.equal(await serverMembers.isChecked(), false);

      // What the page saved is what the API answers and enforces.
      const read = await request(server, 'GET', '/v1/users/@me/settings', { auth: user.token });
      assert.equal(read.body.default_guilds_restricted, true);
      assert.deepEqual(read.body.restricted_guilds, [guildId]);
      assert.deepEqual(read.body.friend_source_flags, { mutual_friends: true, mutual_guilds: false });
      const dm = await request(server, 'POST', '/v1/users/@me/channels', {
        auth: owner.token,
        body: { recipient_id: user.id },
      });
      assert.equal(dm.status, 403);
      assert.equal(dm.body.code, 'CANNOT_SEND_MESSAGES_TO_THIS_USER');
      const ask = await request(server, 'PUT', `/v1/users/@me/relationships/${user.id}`, {
        auth: stranger.token,
        body: {},
      });
      assert.equal(ask.status, 400);
      assert.equal(ask.body.code, 'FRIEND_REQUEST_BLOCKED');

      await everyone.check();
      await friendsOfFriends.and(page.locator(':disabled')).waitFor();
      await context.close();
    });
  });
}
