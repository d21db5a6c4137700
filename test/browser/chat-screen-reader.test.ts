import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { as, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
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
 * Issue 18's "screen-reader labels on messages, a live region for new messages" in Chromium: a message row is
 * named by its author, its text as shown and its time (then "edited"), described by its reply context and its
 * attachments, and a message from someone else is read out as shown (docs/web.md#accessibility).
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-screen-reader.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  type AXNode = {
    nodeId: string;
    childIds?: string[];
    role?: { value?: string };
    name?: { value?: string };
    description?: { value?: string };
  };
  const tree = async (page: Page): Promise<AXNode[]> => {
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
    await cdp.detach();
    return nodes;
  };
  /** The polite status regions' words, as a screen reader has them. */
  const announcements = async (page: Page): Promise<string[]> => {
    const nodes = await tree(page);
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
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  const open = async (user: TestUser, guildId: string, channelId: string): Promise<Page> => {
    const context = await signedInContext(browser, user);
    const page = await context.newPage();
    await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
    return page;
  };

  describe('messages for a screen reader', () => {
    it('a row is named by author, text as shown and time, then "edited"; described by its reply and files', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Spoken', alice, bob);
      const b = await open(bob, guildId, channelId);

      // Markdown markers are not read out; a mention is read by name, a hidden spoiler as its word.
      const first = await ok(
        as(server, alice, 'POST', `/channels/${channelId}/messages`, {
          content: `hello **bold** <@${bob.id}> ||the secret||`,
        }),
      );
      const firstRow = b.getByRole('listitem', {
        name: new RegExp(`^${literal(alice.username)}, hello bold @${literal(bob.username)} Spoiler, \\S.*$`),
      });
      await firstRow.waitFor();
      assert.equal(await b.getByRole('listitem', { name: /the secret/ }).count(), 0);

      await ok(as(server, alice, 'PATCH', `/channels/${channelId}/messages/${first.id}`, { content: 'hello again' }));
      await b
        .getByRole('listitem', { name: new RegExp(`^${literal(alice.username)}, hello again, \\S.*, edited$`) })
        .waitFor();

      // A reply carrying two files: its description says whom it answers, what, and how many files.
      const form = new FormData();
      form.append(
        'payload_json',
        JSON.stringify({
          content: 'see these',
          message_reference: { message_id: first.id },
          attachments: [
            { id: 0, filename: 'one.txt' },
            { id: 1, filename: 'two.txt' },
          ],
        }),
      );
      form.append('files[0]', new Blob(['1'], { type: 'text/plain' }), 'one.txt');
      form.append('files[1]', new Blob(['2'], { type: 'text/plain' }), 'two.txt');
      const sent = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
        method: 'POST',
        headers: { authorization: alice.token },
        body: form,
      });
      assert.equal(sent.status, 200, await sent.text());
      const replyName = new RegExp(`^${literal(alice.username)}, see these, \\S.*$`);
      await b.getByRole('listitem', { name: replyName }).waitFor();
      const reply = (await tree(b)).find((n) => n.role?.value === 'listitem' && replyName.test(n.name?.value ?? ''));
      assert.equal(reply?.description?.value, `in reply to ${alice.username}: hello again, 2 attachments`);

      // A file alone: the name is author and time, the description the file.
      await ok(as(server, bob, 'POST', `/channels/${channelId}/messages`, { content: `<#${channelId}> @everyone` }));
      await b
        .getByRole('listitem', { name: new RegExp(`^${literal(bob.username)}, #general @everyone, \\S.*$`) })
        .waitFor();
      await assertAccessible(b, 'chat with named messages');
      await b.context().close();
    });

    it("a message from someone else is announced as shown, a file alone by its count; one's own is not", async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Heard', alice, bob);
      const [a, b] = [await open(alice, guildId, channelId), await open(bob, guildId, channelId)];

      const box = a.getByRole('textbox', { name: 'Message #general' });
      await box.fill(`**look** at <#${channelId}>, ||not this||`);
      await box.press('Enter');
      await b.getByText('look', { exact: true }).waitFor();
      const heard = `${alice.username}: look at #general, Spoiler`;
      await waitUntil(
        async () => (await announcements(b)).includes(heard),
        () => announcements(b),
      );
      // The sender's own tab says nothing of it.
      assert.ok(!(await announcements(a)).some((text) => text.includes('look')), 'no announcement of one’s own');

      await a.getByLabel('Upload a file').setInputFiles({
        name: 'alone.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('just a file'),
      });
      await a.getByRole('list', { name: 'Files to send' }).getByText('alone.txt').waitFor();
      await box.press('Enter');
      await b.getByRole('link', { name: /alone\.txt/ }).waitFor();
      await waitUntil(
        async () => (await announcements(b)).includes(`${alice.username}: 1 attachment`),
        () => announcements(b),
      );
      await a.context().close();
      await b.context().close();
    });

    it('a first message right after its author\'s "joined the server" line shows its author', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Joined', alice, bob);
      const first = await ok(as(server, bob, 'POST', `/channels/${channelId}/messages`, { content: 'hello all' }));
      const a = await open(alice, guildId, channelId);
      await a.getByText(`${bob.username} joined the server.`).waitFor();
      const row = a.locator(`#message-${first.id}`);
      await row.getByText('hello all').waitFor();
      // Its head: the author's name (a button opening their card) and the time.
      await row.getByRole('button', { name: bob.username }).waitFor();
      assert.equal(await row.locator('time').count(), 1);
      await a.context().close();
    });
  });

  async function waitUntil(check: () => Promise<boolean>, show: () => Promise<unknown>, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`not seen in time: ${JSON.stringify(await show())}`);
  }
}
