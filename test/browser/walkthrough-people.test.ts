import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { befriend } from '../support/chat.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  press,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * A newcomer's walk through people by keyboard (issue 18 §1): the friends page (add by username, accept, block,
 * unblock), someone's card from their message (the servers and friends in common, a private note; the focus goes
 * in and comes back), and a group conversation started and renamed. Every control is focused and pressed, never
 * clicked.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/walkthrough-people.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('people by keyboard', () => {
    it('friends page, a card with what two people share and a note, a group conversation renamed', async () => {
      const [alice, bob, carol, dave] = await Promise.all([
        registerUser(server),
        registerUser(server),
        registerUser(server),
        registerUser(server),
      ]);
      const { guildId, channelId } = await guildWith(server, 'Commons', alice, bob);
      // Carol is a friend of both Alice and Bob: the friend they have in common.
      await befriend(server, alice, carol);
      await befriend(server, bob, carol);
      const [ca, cb] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([a.goto(`${server.origin}/channels/@me`), b.goto(`${server.origin}/channels/@me`)]);

      // Add Bob by username.
      await press(a.getByRole('button', { name: 'Add friend', exact: true }));
      const field = a.getByLabel('Add a friend by username');
      await field.focus();
      await a.keyboard.type(bob.username);
      await a.keyboard.press('Enter');
      await a
        .getByRole('status')
        .filter({ hasText: `Friend request sent to ${bob.username}.` })
        .waitFor();
      await assertAccessible(a, 'friends: add');

      // Bob accepts from Pending.
      await press(b.getByRole('button', { name: 'Pending' }));
      await press(b.getByRole('button', { name: `Accept ${alice.username}` }));
      await press(a.getByRole('button', { name: 'All', exact: true }));
      await a.getByRole('button', { name: `Message ${bob.username}` }).waitFor();

      // Dave's request is blocked, then the block lifted.
      const asked = await request(server, 'POST', '/v1/users/@me/relationships', {
        auth: dave.token,
        body: { username: alice.username },
      });
      assert.equal(asked.status, 200, asked.text);
      await press(a.getByRole('button', { name: 'Pending' }));
      await press(a.getByRole('button', { name: `Block ${dave.username}` }));
      await press(a.getByRole('button', { name: 'Blocked' }));
      await assertAccessible(a, 'friends: blocked');
      await press(a.getByRole('button', { name: `Unblock ${dave.username}` }));
      await a.getByText('You have not blocked anyone.').waitFor();
      assert.equal(await a.getByRole('button', { name: `Unblock ${dave.username}` }).count(), 0);
      const rels = await request(server, 'GET', '/v1/users/@me/relationships', { auth: alice.token });
      assert.equal(
        rels.body.some((r: { id: string }) => r.id === dave.id),
        false,
      );

      // Bob's card from his message: what he wrote about himself, what Alice and Bob share, and a private note.
      const about = await request(server, 'PATCH', '/v1/users/@me', {
        auth: bob.token,
        body: { bio: 'Fond of kites', pronouns: 'he/him' },
      });
      assert.equal(about.status, 200, about.text);
      const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: bob.token,
        body: { content: 'hello commons' },
      });
      assert.equal(posted.status, 200, posted.text);
      await a.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const row = a.getByRole('listitem', { name: new RegExp(`^${bob.username}, hello commons, `) });
      const author = row.getByRole('button', { name: bob.username, exact: true });
      await press(author);
      const card = a.getByRole('region', { name: `Profile of ${bob.username}` });
      await card.waitFor();
      assert.equal(await card.evaluate((el) => el === document.activeElement), true);
      await card.getByText('1 mutual server').waitFor();
      await card.getByText(`@${bob.username} · he/him`).waitFor();
      await card.getByText('About me').waitFor();
      await card.getByText('Fond of kites').waitFor();
      assert.deepEqual(
        await card.getByRole('list', { name: '1 mutual server' }).getByRole('listitem').allInnerTexts(),
        ['Commons'],
      );
      await card.getByText('1 mutual friend').waitFor();
      assert.deepEqual(
        await card.getByRole('list', { name: '1 mutual friend' }).getByRole('listitem').allInnerTexts(),
        [carol.username],
      );
      await assertAccessible(a, 'user card');
      const note = card.getByLabel('Note (only you see it)');
      await note.focus();
      await a.keyboard.type('met at the fair');
      await a.keyboard.press('Tab');
      await a.waitForFunction(
        async ([token, id]) => {
          const res = await fetch(`/v1/users/@me/notes/${id}`, { headers: { authorization: token as string } });
          return res.ok && (await res.json()).note === 'met at the fair';
        },
        [alice.token, bob.id],
      );
      await a.keyboard.press('Escape');
      await card.waitFor({ state: 'detached' });
      assert.equal(await author.evaluate((el) => el === document.activeElement), true);

      // A group conversation with Bob and Carol, then renamed from its settings.
      await a.goto(`${server.origin}/channels/@me`);
      await press(a.getByRole('button', { name: 'New conversation' }));
      const picker = a.getByRole('dialog', { name: 'New conversation' });
      await press(picker.getByRole('checkbox', { name: bob.username }), 'Space');
      await press(picker.getByRole('checkbox', { name: carol.username }), 'Space');
      await assertAccessible(a, 'new conversation');
      await press(picker.getByRole('button', { name: 'Start the conversation' }));
      await a.getByRole('textbox', { name: /^Message / }).waitFor();
      await press(a.getByRole('button', { name: 'Group settings' }));
      const settings = a.getByRole('dialog', { name: 'Group settings' });
      const name = settings.getByLabel('Group name');
      await name.focus();
      await a.keyboard.type('Fair crew');
      await assertAccessible(a, 'group settings');
      await a.keyboard.press('Enter');
      await settings.waitFor({ state: 'detached' });
      await a.getByRole('heading', { level: 1, name: 'Fair crew' }).waitFor();
      await b.getByRole('link', { name: /^Fair crew/ }).waitFor();
      await Promise.all([ca.close(), cb.close()]);
    });
  });
}
