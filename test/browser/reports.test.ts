import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { adminUser } from '../support/admin.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
  watchConsole,
} from './support/browser.ts';

/**
 * Reports in Chromium (docs/safety.md, docs/admin.md#reports): a member reports a message from its actions,
 * and an administrator resolves it in the admin panel's Reports page. axe on the dialog and the page.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/reports.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started));

  const signedIn = (user: TestUser): Promise<BrowserContext> => signedInContext(browser, user);

  const call = (user: TestUser, method: string, path: string, body?: unknown) =>
    request(server, method, `/v1${path}`, { auth: user.token, ...(body !== undefined ? { body } : {}) });

  describe('reports in the browser', () => {
    it('a member reports a message with a reason and details; an administrator resolves it with a note', async () => {
      const [alice, bob] = await Promise.all([
        registerUser(server, { username: 'spammer_alice' }),
        registerUser(server, { username: 'reporter_bob' }),
      ]);
      const admin = await adminUser(server, ['*']);
      const guild = (await call(alice, 'POST', '/guilds', { name: 'Reports guild' })).body;
      const channelId = guild.system_channel_id as string;
      const invite = (await call(alice, 'POST', `/channels/${channelId}/invites`, {})).body;
      assert.equal((await call(bob, 'POST', `/invites/${invite.code}`, {})).status, 200);
      const spam = (await call(alice, 'POST', `/channels/${channelId}/messages`, { content: 'Cheap watches here' }))
        .body;
      const own = (await call(bob, 'POST', `/channels/${channelId}/messages`, { content: 'My own words' })).body;
      assert.ok(spam.id && own.id);

      const page = await (await signedIn(bob)).newPage();
      const errors = watchConsole(page);
      await page.goto(`${server.origin}/channels/${guild.id}/${channelId}`);
      const mine = page.locator('.message', { hasText: 'My own words' });
      await mine.hover();
      await mine.getByRole('button', { name: 'Reply' }).waitFor();
      assert.equal(await mine.getByRole('button', { name: 'Report message' }).count(), 0);

      const message = page.locator('.message', { hasText: 'Cheap watches here' });
      await message.hover();
      await message.getByRole('button', { name: 'Report message' }).click();
      const dialog = page.getByRole('dialog', { name: 'Report a message from spammer_alice' });
      await dialog.waitFor();
      await assertAccessible(page, 'report dialog');
      const send = dialog.getByRole('button', { name: 'Send report' });
      assert.equal(await send.isDisabled(), true);
      await dialog.getByLabel('Reason').selectOption({ label: 'Spam' });
      await dialog.getByLabel('Details (optional)').fill('Every channel, every hour');
      await send.click();
      await dialog.getByText('Thank you. The report was sent to this server’s administrators.').waitFor();
      await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();
      await dialog.waitFor({ state: 'detached' });

      const queued = await request(server, 'POST', '/v1/admin/reports/list', {
        auth: admin.token,
        body: { reporter_id: bob.id },
      });
      assert.equal(queued.body.total, 1);
      const [filed] = queued.body.reports;
      assert.equal(filed.target_id, spam.id);
      assert.equal(filed.category, 'spam');
      assert.equal(filed.description, 'Every channel, every hour');
      assert.deepEqual(errors, []);

      const adminPage = await (await signedIn(admin)).newPage();
      await adminPage.goto(`${server.origin}/admin/reports`);
      await adminPage.getByRole('heading', { level: 1, name: 'Reports · Administration' }).waitFor();
      const card = adminPage.getByRole('article', { name: /^Message reported by reporter_bob on / });
      await card.waitFor();
      await card.getByText('spammer_alice wrote: “Cheap watches here”').waitFor();
      await card.getByText('Every channel, every hour').waitFor();
      await assertAccessible(adminPage, 'admin reports');
      await card.getByLabel('Note (optional)').fill('Messages removed, user warned');
      await card.getByRole('button', { name: 'Resolve' }).click();
      await card.getByText('Resolved.').waitFor();
      assert.equal(await card.getByRole('button', { name: 'Resolve' }).count(), 0);

      const after = await request(server, 'GET', `/v1/admin/reports/${filed.id}`, { auth: admin.token });
      assert.equal(after.body.status, 'resolved');
      assert.equal(after.body.resolution_note, 'Messages removed, user warned');
      assert.equal(after.body.closed_by, admin.id);

      // The resolved list shows it with its note; the open queue no longer does.
      await adminPage.getByLabel('Show reports').selectOption({ label: 'Resolved' });
      const resolvedCard = adminPage.getByRole('article', { name: /^Message reported by reporter_bob on / });
      await resolvedCard.getByText('Messages removed, user warned').waitFor();
      await adminPage.getByLabel('Show reports').selectOption({ label: 'Open' });
      await adminPage.getByText('No report here.').waitFor();
    });
  });
}
