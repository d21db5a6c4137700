import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Browser } from 'playwright-core';
import { befriend } from '../support/chat.ts';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { assertAccessible, CHROMIUM_PATH, newContext, serverAndChromium, warnNoChromium } from './support/browser.ts';

/** A group conversation's RECIPIENT_ADD / RECIPIENT_REMOVE system messages (issue 16) as the web client shows them. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/group-dm-system.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  it('shows who added, removed and left, by name', async () => {
    const [owner, x, y, z] = await Promise.all([1, 2, 3, 4].map(() => registerUser(server)));
    for (const friend of [x, y, z]) await befriend(server, owner as any, friend as any);
    const group = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: owner?.token,
      body: { recipients: [x?.id, y?.id], name: 'Crew' },
    });
    assert.equal(group.status, 200, group.text);
    const id = group.body.id as string;
    assert.equal(
      (await request(server, 'PUT', `/v1/channels/${id}/recipients/${z?.id}`, { auth: owner?.token })).status,
      204,
    );
    assert.equal(
      (await request(server, 'DELETE', `/v1/channels/${id}/recipients/${z?.id}`, { auth: owner?.token })).status,
      204,
    );
    assert.equal((await request(server, 'DELETE', `/v1/channels/${id}?silent=true`, { auth: y?.token })).status, 204);
    const context = await newContext(browser);
    await context.addInitScript(
      ([token, userId]) => {
        if (!window.localStorage.getItem('hearth.session'))
          window.localStorage.setItem('hearth.session', JSON.stringify({ token, userId }));
      },
      [x?.token as string, x?.id as string],
    );
    const page = await context.newPage();
    await page.goto(`${server.origin}/channels/@me/${id}`);
    const list = page.locator('.message-list');
    await list.getByText(`${owner?.username} added ${z?.username} to the group.`).waitFor();
    await list.getByText(`${owner?.username} removed ${z?.username} from the group.`).waitFor();
    await list.getByText(`${y?.username} left the group.`).waitFor();
    await assertAccessible(page, 'group DM system messages');
    await context.close();
  });
}
