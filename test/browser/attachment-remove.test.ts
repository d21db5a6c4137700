import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
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
 * "Remove attachment" on one's own message (docs/media.md, Attachments): reached by keyboard, confirmed in a
 * dialog, and the file is gone for everyone; nobody is offered it on another person's message.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/attachment-remove.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  async function postFiles(user: TestUser, channelId: string, content: string, names: string[]) {
    const body = new FormData();
    body.append(
      'payload_json',
      JSON.stringify({ content, attachments: names.map((filename, id) => ({ id, filename })) }),
    );
    for (const [index, name] of names.entries())
      body.append(`files[${index}]`, new Blob([new Uint8Array(PNG)], { type: 'image/png' }), name);
    const res = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
      method: 'POST',
      body,
      headers: { authorization: user.token },
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { id: string; attachments: { id: string; url: string; filename: string }[] };
  }

  describe('removing an attachment in the web client', () => {
    it('removes one file of one’s own message after a confirmation, by keyboard', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Files', alice, bob);
      const mine = await postFiles(alice, channelId, 'two pictures', ['first.png', 'second.png']);
      await postFiles(bob, channelId, 'bob pictures', ['bobs.png']);

      const context = await signedInContext(browser, alice);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
      const row = page.locator(`#message-${mine.id}`);
      await row.getByRole('button', { name: 'View image second.png' }).waitFor();
      // Bob's file offers no removal to Alice.
      await page.getByRole('button', { name: 'View image bobs.png' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Remove attachment bobs.png' }).count(), 0);

      const remove = row.getByRole('button', { name: 'Remove attachment first.png' });
      await remove.focus();
      await remove.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Remove attachment' });
      await dialog.getByText('Remove first.png from this message? This cannot be undone.').waitFor();
      await assertAccessible(page, 'remove attachment dialog');
      // Cancel keeps it.
      await dialog.getByRole('button', { name: 'Cancel' }).press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await row.getByRole('button', { name: 'View image first.png' }).waitFor();

      await remove.focus();
      await remove.press('Enter');
      await page
        .getByRole('dialog', { name: 'Remove attachment' })
        .getByRole('button', { name: 'Remove file' })
        .press('Enter');
      await row.getByRole('button', { name: 'View image first.png' }).waitFor({ state: 'detached' });
      await row.getByRole('button', { name: 'View image second.png' }).waitFor();
      // The last file of a message with words can go too; a message's only content cannot (delete it instead).
      const read = await request(server, 'GET', `/v1/channels/${channelId}/messages/${mine.id}`, { auth: bob.token });
      assert.deepEqual(
        read.body.attachments.map((a: { filename: string }) => a.filename),
        ['second.png'],
      );
      const first = mine.attachments[0]?.url ?? '';
      const gone = await fetch(first.replace(/^https?:\/\/[^/]+/, server.url));
      assert.equal(gone.status, 404);
      await context.close();
    });
  });
}
