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
 * The small things a person used to other chat apps reads in every message (issue 18 QA): a time of today as
 * "Today at …", a file's size in MB, a reply's reference as the words the answered message shows (not its
 * markdown), and `:smile:` typed out in full sent as 😄.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-message-details.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  describe('message details', () => {
    it('today’s time, a size in MB, a reply reference, pins and search results in plain words, :shortcodes: sent as emoji', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Details', alice, bob);
      const body = new FormData();
      body.append(
        'payload_json',
        JSON.stringify({
          content: 'Hello **Bob**, try `code` and ||this||',
          attachments: [{ id: 0, filename: 'kites.bin' }],
        }),
      );
      // 1.5 MiB: shown as "1.5 MB", not "1536 KB".
      body.append('files[0]', new Blob([new Uint8Array(1.5 * 1024 * 1024)]), 'kites.bin');
      const posted = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
        method: 'POST',
        body,
        headers: { authorization: alice.token },
      });
      assert.equal(posted.status, 200);
      const original = (await posted.json()) as { id: string };

      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const row = page.locator(`#message-${original.id}`);
      await row.getByRole('link', { name: 'kites.bin' }).waitFor();
      assert.equal(await row.getByText(/^1\.5 MB$/).count(), 1, await row.innerText());
      const time = row.locator('time');
      assert.match(await time.innerText(), /^Today at \d{1,2}:\d{2}\s?[AP]M$/);
      // The full date stays one hover away.
      assert.match((await time.getAttribute('title')) ?? '', /\d{4}/);

      // Bob answers with shortcodes typed out: known ones become emoji, an unknown one and code stay as typed.
      await row.hover();
      await row.getByRole('button', { name: 'Reply', exact: true }).click();
      const box = page.getByRole('textbox', { name: 'Message #general' });
      await box.pressSequentially('thanks :smile: :tada: :no_such_emoji: `:smile:`');
      await box.press('Enter');
      const reply = page.getByRole('listitem', { name: new RegExp(`^${bob.username}, thanks 😄 🎉`) });
      await reply.waitFor();
      const messages = await request(server, 'GET', `/v1/channels/${channelId}/messages?limit=1`, {
        auth: bob.token,
      });
      assert.equal(messages.body[0].content, 'thanks 😄 🎉 :no_such_emoji: `:smile:`');

      // The reference over the reply: "@alice" and what her message shows (no ** or ` markers, the spoiler
      // hidden); what it does is said to assistive technology only.
      const reference = reply.getByRole('button', {
        name: `Go to the replied message of ${alice.username}: Hello Bob, try code and Spoiler`,
        exact: true,
      });
      await reference.getByText(`@${alice.username}`, { exact: true }).waitFor();
      await reference.getByText('Hello Bob, try code and Spoiler', { exact: true }).waitFor();
      const said = reference.getByText(`Go to the replied message of ${alice.username}:`);
      assert.equal(await said.evaluate((el) => getComputedStyle(el).clipPath), 'inset(50%)');
      await assertAccessible(page, 'reply reference');

      // Pinned, the message shows as in the channel (bold, code, "Today at …"), not as its markdown.
      const pin = await request(server, 'PUT', `/v1/channels/${channelId}/pins/${original.id}`, { auth: alice.token });
      assert.equal(pin.status, 204, pin.text);
      await page.getByRole('button', { name: 'Pinned messages', exact: true }).click();
      const pins = page.getByRole('dialog', { name: 'Pinned messages' });
      const pinned = pins.getByRole('listitem').filter({ hasText: 'Hello' });
      await pinned.getByText('Bob', { exact: true }).waitFor();
      assert.equal(await pinned.locator('strong', { hasText: /^Bob$/ }).count(), 1);
      assert.doesNotMatch(await pinned.innerText(), /\*\*|`|\|\|/);
      assert.match(await pinned.locator('time').innerText(), /^Today at /);
      await page.keyboard.press('Escape');

      // A search result reads the words shown too, its term marked.
      const search = page.getByRole('searchbox', { name: 'Search' });
      await search.fill('Hello');
      await search.press('Enter');
      const hit = page
        .getByRole('region', { name: 'Search results' })
        .getByRole('list', { name: 'Search results' })
        .getByRole('listitem');
      await hit.getByText('Hello', { exact: true }).waitFor();
      assert.match(await hit.innerText(), /Hello Bob, try code and Spoiler/);
      assert.match(await hit.locator('time').innerText(), /^Today at /);
      await context.close();
    });

    it('typing with the focus on the page or a message writes in the message box, not from another field', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Typing', alice, bob);
      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const box = page.getByRole('textbox', { name: 'Message #general' });
      await box.waitFor();
      // The channel's link in the sidebar has the focus (as after choosing it): the letters go to the box.
      await page.getByRole('link', { name: '#general' }).focus();
      await page.keyboard.type('hello there');
      assert.equal(await box.inputValue(), 'hello there');
      assert.equal(await box.evaluate((el) => el === document.activeElement), true);
      await page.keyboard.press('Enter');
      await page.getByRole('listitem', { name: new RegExp(`^${alice.username}, hello there, `) }).waitFor();
      // The search field keeps what is typed in it.
      const search = page.getByRole('searchbox', { name: 'Search' });
      await search.focus();
      await page.keyboard.type('kites');
      assert.equal(await search.inputValue(), 'kites');
      assert.equal(await box.inputValue(), '');
      await context.close();
    });
    it('a reply whose message is deleted says so, live and after a reload', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Replies', alice, bob);
      const post = async (token: string, body: Record<string, unknown>) => {
        const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, { auth: token, body });
        assert.equal(res.status, 200, res.text);
        return res.body as { id: string };
      };
      const original = await post(alice.token, { content: 'soon gone' });
      const reply = await post(bob.token, {
        content: 'answering it',
        message_reference: { message_id: original.id },
      });
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const row = page.locator(`#message-${reply.id}`);
      await row.getByText('soon gone').waitFor();
      const removed = await request(server, 'DELETE', `/v1/channels/${channelId}/messages/${original.id}`, {
        auth: alice.token,
      });
      assert.equal(removed.status, 204);
      await row.getByText('Original message was deleted').waitFor();
      assert.equal(await row.getByText('soon gone').count(), 0);
      await page.reload();
      await page.locator(`#message-${reply.id}`).getByText('Original message was deleted').waitFor();
      await assertAccessible(page, 'reply to a deleted message');
      await context.close();
    });
  });
}
