import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  guildWith,
  newContext,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

/** The chat client (issue 18) in Chromium, several people at once, against a real server. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const composer = (page: Page, name = 'general') => page.getByRole('textbox', { name: `Message #${name}` });
  const messageText = (page: Page, text: string) => page.locator('.message-list .content', { hasText: text });

  describe('chat in the browser', () => {
    it('two people chat, react, reply, edit and delete, and each sees the other live', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hearthside', alice, bob);
      const [ca, cb] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      const errors = watchConsole(a);
      await Promise.all([
        a.goto(`${server.origin}/channels/${guildId}/${channelId}`),
        b.goto(`${server.origin}/channels/${guildId}/${channelId}`),
      ]);
      await Promise.all([composer(a).waitFor(), composer(b).waitFor()]);
      await a.getByRole('heading', { level: 1, name: '#general' }).waitFor();

      await composer(a).fill('Hello **Bob**, see ||the secret|| and `code`');
      await composer(a).press('Enter');
      await messageText(b, 'Hello Bob').waitFor();
      assert.equal(await b.locator('.message-list strong', { hasText: 'Bob' }).count(), 1);
      assert.equal(await b.locator('.message-list code', { hasText: 'code' }).count(), 1);
      assert.equal(await b.getByRole('button', { name: 'Spoiler' }).count(), 1);

      // Mention and :shortcode: completion; markup in a message stays text, only http(s) links are links.
      await composer(a).pressSequentially(`@${bob.username.slice(0, 4)}`);
      await a.getByRole('option', { name: new RegExp(bob.username) }).waitFor();
      await composer(a).press('Tab');
      await composer(a).pressSequentially(':tad');
      await a.getByRole('option', { name: '🎉 :tada:' }).waitFor();
      await composer(a).press('Tab');
      await composer(a).pressSequentially(
        '[x](javascript:alert(1)) <img src=x onerror=alert(1)> [site](https://example.com/a) ~~gone~~',
      );
      await composer(a).press('Enter');
      const safe = b.locator('.message', { hasText: 'site' });
      await safe.waitFor();
      assert.equal(await safe.locator('.mention.me').innerText(), `@${bob.username}`);
      assert.match(await safe.innerText(), /🎉/);
      assert.equal(await safe.locator('img').count(), 0);
      assert.deepEqual(await safe.locator('.content a').evaluateAll((els) => els.map((e) => e.getAttribute('href'))), [
        'https://example.com/a',
      ]);
      assert.equal(await safe.locator('s', { hasText: 'gone' }).count(), 1);

      // Bob reacts with 👍; Alice sees the count live.
      const aliceMessage = b.locator('.message', { hasText: 'Hello Bob' });
      await aliceMessage.hover();
      await aliceMessage.getByRole('button', { name: 'Add reaction' }).click();
      await aliceMessage.getByRole('button', { name: 'React with 👍' }).click();
      await a.getByRole('button', { name: '👍: 1 reaction' }).waitFor();

      // Bob replies; Alice sees the reply with its reference and jumps to the original.
      await aliceMessage.hover();
      await aliceMessage.getByRole('button', { name: 'Reply' }).click();
      await composer(b).fill('A reply to you');
      await composer(b).press('Enter');
      const reply = a.locator('.message', { hasText: 'A reply to you' });
      await reply.waitFor();
      await reply.getByRole('button', { name: /Go to the replied message/ }).waitFor();
      await reply.getByRole('button', { name: /Go to the replied message/ }).click();

      // Alice edits her message with the up arrow; Bob sees the new text.
      await composer(a).click();
      await composer(a).press('ArrowUp');
      const edit = a.getByRole('textbox', { name: 'Edit message' });
      await edit.fill('Hello again, edited');
      await edit.press('Enter');
      await messageText(b, 'Hello again, edited').waitFor();
      await b.locator('.message', { hasText: 'Hello again, edited' }).getByText('(edited)').waitFor();

      // Bob deletes his reply; it disappears for Alice.
      const bobReply = b.locator('.message', { hasText: 'A reply to you' });
      await bobReply.hover();
      await bobReply.getByRole('button', { name: 'Delete' }).click();
      await b.getByRole('dialog', { name: 'Delete message' }).getByRole('button', { name: 'Delete' }).click();
      await messageText(a, 'A reply to you').waitFor({ state: 'detached' });

      // Typing is shown to the other person.
      await composer(b).pressSequentially('typing now');
      await a.getByText(/is typing/).waitFor();

      await assertAccessible(a, 'chat view');
      assert.deepEqual(errors, []);
      await Promise.all([ca.close(), cb.close()]);
    });

    it('creates a guild and channels, and the invite landing page takes a signed-out visitor through registration', async () => {
      const owner = await registerUser(server);
      const co = await signedInContext(browser, owner);
      const page = await co.newPage();
      await page.goto(`${server.origin}/channels/@me`);
      await page.getByRole('heading', { level: 1, name: 'Friends' }).waitFor();
      // The dialogs put the focus in their name field: typing goes there.
      await page.getByRole('button', { name: 'Create a server' }).click();
      await page.getByLabel('Server name').waitFor();
      await page.keyboard.type('Book club');
      assert.equal(await page.getByLabel('Server name').inputValue(), 'Book club');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await composer(page).waitFor();
      await page.getByRole('button', { name: 'Create a channel' }).click();
      await page.getByLabel('Channel name').waitFor();
      await page.keyboard.type('Reading List');
      assert.equal(await page.getByLabel('Channel name').inputValue(), 'Reading List');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await composer(page, 'reading-list').waitFor();
      await page.getByRole('button', { name: 'Invite people' }).click();
      const link = await page.getByLabel('Invite link').inputValue();
      assert.match(link, new RegExp(`^${server.origin}/invite/[A-Za-z0-9]{8}$`));

      const visitor = await newContext(browser);
      const v = await visitor.newPage();
      await v.goto(link);
      await v.getByRole('heading', { level: 1, name: 'Join Book club' }).waitFor();
      await assertAccessible(v, 'invite landing');
      await v.getByRole('link', { name: 'Create an account' }).click();
      await v.getByLabel('Email').fill(`reader${Date.now()}@example.test`);
      await v.getByLabel('Username').fill(`reader${Date.now() % 100000}`);
      await v.getByLabel('Password', { exact: true }).fill('a long enough password 123');
      const consent = v.getByRole('checkbox');
      if ((await consent.count()) > 0) await consent.first().check();
      await v.getByRole('button', { name: 'Create account' }).click();
      await v.getByRole('button', { name: 'Accept invite' }).click();
      await composer(v, 'reading-list').waitFor();
      await composer(v, 'reading-list').fill('Hi all');
      await composer(v, 'reading-list').press('Enter');
      await messageText(page, 'Hi all').waitFor();
      await Promise.all([co.close(), visitor.close()]);
    });

    it('friends by username, a DM and a group conversation, live on both sides', async () => {
      const [alice, bob, carol] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
      const [ca, cb] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([a.goto(`${server.origin}/channels/@me`), b.goto(`${server.origin}/channels/@me`)]);
      await a.getByRole('button', { name: 'Add friend' }).click();
      await a.getByLabel('Add a friend by username').fill(bob.username);
      await a.getByRole('button', { name: 'Send friend request' }).click();
      await a.getByText(`Friend request sent to ${bob.username}.`).waitFor();
      await b.getByRole('button', { name: 'Pending' }).click();
      await b.getByRole('button', { name: `Accept ${alice.username}` }).click();
      await b.getByRole('button', { name: 'All' }).click();
      await b.getByRole('button', { name: `Message ${alice.username}` }).click();
      const dmBox = b.getByRole('textbox', { name: `Message ${alice.username}` });
      await dmBox.fill('hi from a DM');
      await dmBox.press('Enter');
      // Alice sees the DM appear in her list with an unread badge, and the tab title counts it.
      const dmLink = a.getByRole('link', { name: new RegExp(`^${bob.username}, 1 mention`) });
      await dmLink.waitFor();
      await a.waitForFunction(() => document.title.startsWith('(1) '));
      await dmLink.click();
      await a.locator('.message-list').getByText('hi from a DM', { exact: true }).waitFor();
      await a.waitForFunction(() => !document.title.startsWith('('));
      await assertAccessible(a, 'DM view');

      // A group conversation with a third person (a friend of Alice's).
      const friend = await request(server, 'POST', '/v1/users/@me/relationships', {
        auth: carol.token,
        body: { username: alice.username },
      });
      assert.equal(friend.status, 200, friend.text);
      await a.goto(`${server.origin}/channels/@me`);
      await a.getByRole('button', { name: 'Pending' }).click();
      await a.getByRole('button', { name: `Accept ${carol.username}` }).click();
      await a.getByRole('button', { name: 'New conversation' }).click();
      await a.getByRole('checkbox', { name: bob.username }).check();
      await a.getByRole('checkbox', { name: carol.username }).check();
      await a.getByRole('button', { name: 'Start the conversation' }).click();
      const groupBox = a.getByRole('textbox', { name: /^Message / });
      await groupBox.fill('hello both');
      await groupBox.press('Enter');
      await b
        .getByRole('link', { name: /1 mention/ })
        .first()
        .waitFor();
      await Promise.all([ca.close(), cb.close()]);
    });

    it('keyboard: Ctrl+K switches channel, Alt+Down moves to the next one, mentions badge the server', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hearthside', alice, bob);
      const second = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'random', type: 0 },
      });
      assert.equal(second.status, 200);
      const cb = await signedInContext(browser, bob);
      const b = await cb.newPage();
      await b.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(b).waitFor();
      // The switcher's field has the focus: typing goes straight into it.
      await b.keyboard.press('Control+k');
      await b.getByRole('combobox', { name: 'Where would you like to go?' }).waitFor();
      await b.keyboard.type('rand');
      assert.equal(await b.getByRole('combobox', { name: 'Where would you like to go?' }).inputValue(), 'rand');
      await b.keyboard.press('Enter');
      await composer(b, 'random').waitFor();
      await b.keyboard.press('Alt+ArrowUp');
      await composer(b, 'general').waitFor();
      await b.keyboard.press('Alt+ArrowDown');
      await composer(b, 'random').waitFor();
      // A mention in another channel badges it and counts in the title.
      const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: `look <@${bob.id}>` },
      });
      assert.equal(sent.status, 200);
      await b.getByRole('link', { name: '#general, 1 mention' }).waitFor();
      await b.getByRole('link', { name: /^Hearthside, 1 mention/ }).waitFor();
      await b.waitForFunction(() => document.title === '(1) #random · Hearth');
      await b.getByRole('link', { name: '#general, 1 mention' }).click();
      await b.locator('.message-list .mention', { hasText: '@' }).first().waitFor();
      await b.getByRole('link', { name: '#general' }).waitFor();
      await b.waitForFunction(() => document.title === '#general · Hearth');
      await cb.close();
    });

    it('offers to jump up to the first unread message of a channel left earlier', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hearthside', alice, bob);
      const elsewhere = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'elsewhere', type: 0 },
      });
      assert.equal(elsewhere.status, 200, elsewhere.text);
      const cb = await signedInContext(browser, bob);
      const b = await cb.newPage();
      await b.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(b).waitFor();
      await b.getByRole('link', { name: '#elsewhere' }).click();
      await composer(b, 'elsewhere').waitFor();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: alice.token,
          body: { content: `unread ${i}\nsecond line\nthird line` },
        });
        assert.equal(res.status, 200, res.text);
        ids.push(res.body.id);
      }
      await b.getByRole('link', { name: '#general, unread' }).click();
      await b.getByRole('button', { name: 'Jump to the first unread message' }).click();
      await b.locator(`#message-${ids[0]}.highlighted`).waitFor();
      await b.locator(`#message-${ids[0]} .new-marker`).waitFor();
      await cb.close();
    });

    it('notifies mentions after the person allowed it, and a muted channel stays quiet', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Hearthside', alice, bob);
      const other = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'quiet', type: 0 },
      });
      const cb = await signedInContext(browser, bob);
      // Record notifications instead of showing them (headless Chromium has no notification centre).
      // A string, not a function: tsx would compile it with helpers the page does not have. The choice is kept
      // across page loads, as a browser keeps it.
      await cb.addInitScript(`(() => {
        const shown = [];
        window.__notes = shown;
        function Recorder(title, options) { shown.push({ title, body: options.body }); this.onclick = null; }
        Recorder.prototype.close = function () {};
        Recorder.permission = localStorage.getItem('test.notifications') || 'default';
        Recorder.requestPermission = function () {
          localStorage.setItem('test.notifications', 'granted');
          Recorder.permission = 'granted';
          return Promise.resolve('granted');
        };
        window.Notification = Recorder;
      })()`);
      const b = await cb.newPage();
      await b.goto(`${server.origin}/channels/@me`);
      // Asked from a button, never on load.
      await b.getByRole('button', { name: 'Enable notifications' }).click();
      await b.getByRole('button', { name: 'Enable notifications' }).waitFor({ state: 'detached' });
      await b.goto(`${server.origin}/channels/${guildId}/${other.body.id}`);
      await composer(b, 'quiet').waitFor();
      await b.getByRole('button', { name: 'Channel notifications' }).click();
      const settings = b.getByRole('dialog', { name: 'Notifications for #quiet' });
      await settings.getByRole('checkbox', { name: 'Mute #quiet' }).check();
      await settings.getByRole('button', { name: 'Done' }).click();
      await b.getByRole('button', { name: 'Channel notifications, muted' }).waitFor();
      await b.getByRole('link', { name: '#general' }).click();
      await composer(b).waitFor();
      const post = (channel: string, content: string) =>
        request(server, 'POST', `/v1/channels/${channel}/messages`, { auth: alice.token, body: { content } });
      await post(other.body.id, `muted ping <@${bob.id}>`);
      await post(channelId, 'not a mention');
      await b.locator('.message-list').getByText('not a mention', { exact: true }).waitFor();
      await b.getByRole('link', { name: '#quiet, muted' }).waitFor();
      const quiet = (await b.evaluate(() => (window as unknown as { __notes: unknown[] }).__notes.length)) as number;
      assert.equal(quiet, 0);
      // A mention in an unmuted channel that is not on screen notifies.
      await b.getByRole('link', { name: '#quiet, muted' }).click();
      await composer(b, 'quiet').waitFor();
      await b.getByRole('button', { name: 'Channel notifications, muted' }).click();
      await b.getByRole('checkbox', { name: 'Mute #quiet' }).uncheck();
      await b.getByRole('button', { name: 'Done' }).click();
      await b.getByRole('link', { name: '#general' }).click();
      await composer(b).waitFor();
      await post(other.body.id, `loud ping <@${bob.id}>`);
      await b.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length === 1);
      const notes = (await b.evaluate(() => (window as unknown as { __notes: unknown[] }).__notes)) as {
        title: string;
        body: string;
      }[];
      assert.equal(notes[0]?.title, `${alice.username} (#quiet)`);
      assert.equal(notes[0]?.body, `loud ping <@${bob.id}>`);
      await cb.close();
    });
  });
}
