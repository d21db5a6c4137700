import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { WebSocket } from 'ws';
import { readyClient } from '../gateway/gateway-client.ts';
import { registerUser, request } from '../support/client.ts';
import { migratedDataDir } from '../support/data-dir.ts';
import type { TestServer } from '../support/server.ts';
import { freePort, type Spawned, spawnEntrypoint, waitForHealth } from '../support/spawn.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  chromiumForFile,
  guildWith,
  signedInContext,
  startWebServer,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The chat client's realtime guarantees in Chromium: a network cut and a server restart lose and duplicate
 * nothing, uploads show progress, a permission change hides a channel at once, and a phone-sized run.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-realtime.test.ts');
} else {
  let browser: Browser;
  chromiumForFile((launched) => {
    browser = launched;
  });

  const composer = (page: Page, name = 'general') => page.getByRole('textbox', { name: `Message #${name}` });

  const shown = (page: Page, text: string) => page.locator('.message-list').getByText(text, { exact: true });

  /** The texts of the messages on screen, in order. */
  const shownTexts = (page: Page) => page.locator('.message-list .content .md-p').allInnerTexts();

  describe('chat realtime (one server)', () => {
    let server: TestServer & { origin: string };
    before(async () => {
      server = await startWebServer();
    });
    after(async () => {
      await server?.close();
    });

    it('shows all 20 messages sent during a network cut once and in order', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();
      const before = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'before the cut' },
      });
      assert.equal(before.status, 200);
      await shown(page, 'before the cut').waitFor();

      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      const offline = { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 };
      await cdp.send('Network.emulateNetworkConditions', offline);
      await page.getByText('Connection lost. Reconnecting…').waitFor({ timeout: 15_000 });
      const sent: string[] = [];
      for (let i = 1; i <= 20; i++) {
        const text = `during the cut ${i}`;
        const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
          auth: alice.token,
          body: { content: text },
        });
        assert.equal(res.status, 200);
        sent.push(text);
      }
      // Nothing reached the tab while it was cut off.
      assert.equal(await shown(page, 'during the cut 1').count(), 0);
      await cdp.send('Network.emulateNetworkConditions', { ...offline, offline: false });
      await shown(page, 'during the cut 20').waitFor({ timeout: 20_000 });
      await page.getByText('Connection lost. Reconnecting…').waitFor({ state: 'detached', timeout: 20_000 });
      // Give a late duplicate (a replayed dispatch after the catch-up fetch) the chance to show up.
      await page.waitForTimeout(1500);
      const texts = (await shownTexts(page)).filter((t) => t.startsWith('during the cut') || t === 'before the cut');
      assert.deepEqual(texts, ['before the cut', ...sent]);
      await context.close();
    });

    it('shows what was posted to an empty channel while the tab started a new gateway session', {
      timeout: 90_000,
    }, async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Quiet', alice, bob);
      const quiet = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'quiet', type: 0 },
      });
      assert.equal(quiet.status, 200, quiet.text);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      // The first gateway connection is cut; the tab's RESUME on the next one is refused (op 9, not resumable),
      // so what was dispatched in between is never replayed: only the catch-up after the new READY can show it.
      let connections = 0;
      let cut = () => {};
      await page.routeWebSocket(/\/gateway/, (socket) => {
        connections += 1;
        const first = connections === 1;
        const upstream = socket.connectToServer();
        if (first) cut = () => socket.close({ code: 4000, reason: 'cut by the test' });
        socket.onMessage((frame) => {
          if (!first && typeof frame === 'string' && (JSON.parse(frame) as { op: number }).op === 6) {
            socket.send(JSON.stringify({ op: 9, d: false }));
            return;
          }
          upstream.send(frame);
        });
      });
      await page.goto(`${server.origin}/channels/${guildId}/${quiet.body.id}`);
      await composer(page, 'quiet').waitFor();
      cut();
      const posted = await request(server, 'POST', `/v1/channels/${quiet.body.id}/messages`, {
        auth: alice.token,
        body: { content: 'posted between two sessions' },
      });
      assert.equal(posted.status, 200, posted.text);
      await shown(page, 'posted between two sessions').waitFor({ timeout: 20_000 });
      assert.ok(connections >= 2, `the tab connected again (${connections} connections)`);
      assert.equal(await shown(page, 'posted between two sessions').count(), 1);
      await context.close();
    });

    it('keeps a friend request that arrives while the friends list is on its way', { timeout: 90_000 }, async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      let requestSeen = () => {};
      const requestDispatched = new Promise<void>((resolve) => {
        requestSeen = resolve;
      });
      page.on('websocket', (socket) =>
        socket.on('framereceived', ({ payload }) => {
          if (typeof payload === 'string' && payload.includes('"t":"RELATIONSHIP_ADD"')) requestSeen();
        }),
      );
      // Every list read before the request was sent answers only after the request's event reached the tab.
      let sent = false;
      let listRead = () => {};
      const staleListRead = new Promise<void>((resolve) => {
        listRead = resolve;
      });
      await page.route(/\/v1\/users\/@me\/relationships$/, async (route) => {
        const response = await route.fetch();
        if (!sent) {
          listRead();
          await requestDispatched;
          await page.waitForTimeout(200);
        }
        await route.fulfill({ response });
      });
      await page.goto(`${server.origin}/channels/@me`);
      await staleListRead;
      await page.getByRole('button', { name: 'Add friend' }).waitFor();
      sent = true;
      const friendRequest = await request(server, 'POST', '/v1/users/@me/relationships', {
        auth: alice.token,
        body: { username: bob.username },
      });
      assert.equal(friendRequest.status, 200, friendRequest.text);
      await page.getByRole('button', { name: 'Pending' }).click();
      await page.getByRole('button', { name: `Accept ${alice.username}` }).waitFor();
      await page.waitForTimeout(500);
      assert.equal(await page.getByRole('button', { name: `Accept ${alice.username}` }).count(), 1);
      await context.close();
    });

    it('shows upload progress and the file arrives for the other person', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const [ca, cb] = await Promise.all([signedInContext(browser, alice), signedInContext(browser, bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([
        a.goto(`${server.origin}/channels/${guildId}/${channelId}`),
        b.goto(`${server.origin}/channels/${guildId}/${channelId}`),
      ]);
      await Promise.all([composer(a).waitFor(), composer(b).waitFor()]);
      // A slow uplink (1 MB/s) so that the progress bar has time to be seen.
      const cdp = await ca.newCDPSession(a);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 20,
        downloadThroughput: -1,
        uploadThroughput: 1_000_000,
      });
      await a.locator('input[type="file"]').setInputFiles({
        name: 'notes.txt',
        mimeType: 'text/plain',
        buffer: Buffer.alloc(3 * 1024 * 1024, 'hearth '),
      });
      await a.getByRole('list', { name: 'Files to send' }).getByText('notes.txt').waitFor();
      await composer(a).fill('here is the file');
      await composer(a).press('Enter');
      const progress = a.getByRole('progressbar', { name: 'Uploading notes.txt' });
      await progress.waitFor();
      const values: number[] = [];
      for (let i = 0; i < 10 && (await progress.count()) > 0; i++) {
        const value = await progress.getAttribute('value').catch(() => null);
        if (value !== null) values.push(Number(value));
        await a.waitForTimeout(200);
      }
      assert.ok(
        values.some((v) => v > 0 && v < 1),
        `progress in between: ${values.join(', ')}`,
      );
      await b.getByRole('link', { name: 'notes.txt' }).waitFor({ timeout: 20_000 });
      await a.getByRole('link', { name: 'notes.txt' }).waitFor();
      assert.equal(await progress.count(), 0);
      await Promise.all([ca.close(), cb.close()]);
    });

    it('keeps two tabs of one account consistent, opens message links and shows image previews', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const random = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'random', type: 0 },
      });
      const context = await signedInContext(browser, bob);
      const [tab1, tab2] = await Promise.all([context.newPage(), context.newPage()]);
      await tab1.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await tab2.goto(`${server.origin}/channels/${guildId}/${random.body.id}`);
      await Promise.all([composer(tab1).waitFor(), composer(tab2, 'random').waitFor()]);
      const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'seen in tab one' },
      });
      assert.equal(posted.status, 200);
      await shown(tab1, 'seen in tab one').waitFor();
      // Tab one read it (on screen): the ack reaches tab two, whose #general goes from unread to read.
      await tab2.getByRole('link', { name: '#general', exact: true }).waitFor({ timeout: 10_000 });
      // A message sent from tab two shows in tab one once (and, being one's own, does not count as unread).
      await composer(tab2, 'random').fill('from tab two');
      await composer(tab2, 'random').press('Enter');
      await shown(tab2, 'from tab two').waitFor();
      await tab1.getByRole('link', { name: '#random', exact: true }).click();
      await shown(tab1, 'from tab two').waitFor();
      assert.equal(await shown(tab1, 'from tab two').count(), 1);

      // A message link opens its channel scrolled to it.
      await tab2.goto(`${server.origin}/channels/${guildId}/${channelId}/${posted.body.id}`);
      await tab2.locator(`#message-${posted.body.id}.highlighted`).waitFor();

      // An image attachment shows a preview that opens in a lightbox.
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
        'base64',
      );
      await tab2.locator('input[type="file"]').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
      await composer(tab2).press('Enter');
      await tab1.getByRole('link', { name: '#general', exact: true }).click();
      await tab1.getByRole('button', { name: 'View image dot.png' }).click();
      await tab1.getByRole('dialog', { name: 'dot.png' }).getByRole('img', { name: 'dot.png' }).waitFor();
      await tab1.keyboard.press('Escape');
      await tab1.getByRole('dialog', { name: 'dot.png' }).waitFor({ state: 'detached' });
      await context.close();
    });

    it('keeps a channel read when the tab leaves within the second its read marker waits', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const random = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'random', type: 0 },
      });
      const ping = await request(server, 'POST', `/v1/channels/${random.body.id}/messages`, {
        auth: alice.token,
        body: { content: `<@${bob.id}> look here` },
      });
      assert.equal(ping.status, 200);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();
      await page.getByRole('link', { name: /^#random/ }).click();
      await page.locator('.message-list').getByText('look here').waitFor();
      // Gone at once: the read marker, which leaves a second after reading, goes as the page is hidden.
      await page.goto('about:blank');
      const mentionsOnServer = async () => {
        const { client, ready } = await readyClient(server, bob.token);
        await client.close();
        const entries = (ready.d as { read_state: { entries: { id: string; mention_count: number }[] } }).read_state
          .entries;
        return entries.find((entry) => entry.id === random.body.id)?.mention_count ?? 1;
      };
      const deadline = Date.now() + 3000;
      let mentions = await mentionsOnServer();
      while (mentions !== 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        mentions = await mentionsOnServer();
      }
      assert.equal(mentions, 0, 'the server counts no mention in #random once the tab is gone');
      await context.close();
    });

    it('shows presence in the member list when someone sets a status', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      const members = page.getByRole('complementary', { name: 'Members' });
      // Bob's own tab is online; Alice has no session yet.
      await members.getByRole('heading', { name: 'Online — 1' }).waitFor();
      await members.getByRole('button', { name: new RegExp(`^${bob.username} ?, online$`) }).waitFor();
      await members.getByRole('button', { name: new RegExp(`^${alice.username} ?, offline$`) }).waitFor();
      // Alice's other client (a raw gateway connection) says "do not disturb".
      const discovery = (await (await fetch(`${server.origin}/.well-known/service`)).json()) as {
        endpoints: { gateway: string };
      };
      const socket = new WebSocket(`${discovery.endpoints.gateway}?v=1&encoding=json`);
      await new Promise<void>((resolve, reject) => {
        socket.on('error', reject);
        socket.on('message', (data) => {
          const frame = JSON.parse(String(data)) as { op: number; t?: string };
          if (frame.op === 10) socket.send(JSON.stringify({ op: 2, d: { token: alice.token, properties: {} } }));
          if (frame.t === 'READY') {
            socket.send(JSON.stringify({ op: 3, d: { status: 'dnd', since: null, activities: [], afk: false } }));
            resolve();
          }
        });
      });
      await members.getByRole('heading', { name: 'Online — 2' }).waitFor();
      await members.getByRole('button', { name: new RegExp(`^${alice.username} ?, do not disturb$`) }).waitFor();
      // Alice's last session ends: she is offline at once.
      socket.close();
      await members.getByRole('heading', { name: 'Offline — 1' }).waitFor();
      await members.getByRole('button', { name: new RegExp(`^${alice.username} ?, offline$`) }).waitFor();
      await context.close();
    });

    it('keeps a private note on someone and the guild order from the account settings', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const first = await guildWith(server, 'Realtime', alice, bob);
      const second = await request(server, 'POST', '/v1/guilds', { auth: bob.token, body: { name: 'Zeta' } });
      assert.equal(second.status, 200);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${first.guildId}/${first.channelId}`);
      const rail = page.getByRole('navigation', { name: 'Servers' });
      const order = () => rail.getByRole('link').evaluateAll((els) => els.map((e) => e.getAttribute('title')));
      await rail.getByRole('link', { name: /^Zeta/ }).waitFor();
      assert.deepEqual((await order()).slice(1), ['Realtime', 'Zeta']);
      const moved = await request(server, 'PATCH', '/v1/users/@me/settings', {
        auth: bob.token,
        body: { guild_positions: [second.body.id, first.guildId] },
      });
      assert.equal(moved.status, 200, moved.text);
      await page.waitForFunction(
        () => document.querySelector('nav[aria-label="Servers"] li:nth-child(2) a')?.getAttribute('title') === 'Zeta',
      );

      const members = page.getByRole('complementary', { name: 'Members' });
      await members.getByRole('button', { name: alice.username }).click();
      await page.getByLabel('Note (only you see it)').fill('met at the meetup');
      await page.getByLabel('Note (only you see it)').press('Tab');
      await page.waitForTimeout(500);
      await page.reload();
      await members.getByRole('button', { name: alice.username }).click();
      assert.equal(await page.getByLabel('Note (only you see it)').inputValue(), 'met at the meetup');
      await context.close();
    });

    it('hides a channel at once when a role change takes its view away', async () => {
      const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Realtime', owner, member);
      const role = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
        auth: owner.token,
        body: { name: 'Staff', hoist: true },
      });
      assert.equal(role.status, 200, role.text);
      const staff = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: owner.token,
        body: {
          name: 'staff-room',
          type: 0,
          permission_overwrites: [
            { id: guildId, type: 0, allow: '0', deny: String(1 << 10) },
            { id: role.body.id, type: 0, allow: String(1 << 10), deny: '0' },
          ],
        },
      });
      assert.equal(staff.status, 200, staff.text);
      const put = await request(server, 'PUT', `/v1/guilds/${guildId}/members/${member.id}/roles/${role.body.id}`, {
        auth: owner.token,
      });
      assert.equal(put.status, 204);
      const context = await signedInContext(browser, member);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${staff.body.id}`);
      await composer(page, 'staff-room').waitFor();
      // The member list groups under the hoisted role.
      await page.getByRole('complementary', { name: 'Members' }).getByRole('heading', { name: 'Staff — 1' }).waitFor();
      // The page can render from REST before its gateway session is ready; the change must come after, or
      // there is nothing live to test (under load the session takes longer than the first paint).
      for (let tries = 0; tries < 100; tries++) {
        const sessions = [...(server.app.gateway?.registry.ofUser(member.id) ?? [])];
        if (sessions.some((session) => session.socket && !session.starting)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const removed = await request(
        server,
        'DELETE',
        `/v1/guilds/${guildId}/members/${member.id}/roles/${role.body.id}`,
        { auth: owner.token },
      );
      assert.equal(removed.status, 204);
      await page.getByRole('link', { name: '#staff-room' }).waitFor({ state: 'detached' });
      await composer(page, 'general').waitFor();
      await context.close();
    });

    it('works on a 375 px wide phone screen', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.setViewportSize({ width: 375, height: 740 });
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 375, `no horizontal scroll (${width} px)`);
      await composer(page).fill('from my phone');
      await composer(page).press('Enter');
      await page.locator('.message-list .content', { hasText: 'from my phone' }).waitFor();
      // The member list is a drawer over the messages and its own toggle: a tap beside it, or Escape, closes it.
      const members = page.getByRole('complementary', { name: 'Members' });
      await page.getByRole('button', { name: 'Members' }).click();
      await members.waitFor();
      // (the dimmed strip left of the drawer: the drawer covers the rest of it)
      await page.getByRole('button', { name: 'Close the member list' }).click({ position: { x: 20, y: 370 } });
      await members.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Members' }).click();
      await members.waitFor();
      await page.keyboard.press('Escape');
      await members.waitFor({ state: 'detached' });
      // The navigation drawer closes with Escape too.
      await page.getByRole('button', { name: 'Open navigation' }).click();
      await page.getByRole('link', { name: 'Direct messages' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('link', { name: 'Direct messages' }).waitFor({ state: 'hidden' });
      await page.getByRole('button', { name: 'Open navigation' }).click();
      await page.getByRole('link', { name: 'Direct messages' }).click();
      await page.getByRole('heading', { level: 1, name: 'Friends' }).waitFor();
      await assertAccessible(page, 'friends page at 375 px');
      await page.goBack();
      await composer(page).waitFor();
      await assertAccessible(page, 'chat view at 375 px');
      await context.close();
    });
  });

  describe('chat across a server restart', { timeout: 240_000 }, () => {
    let dataDir: string;
    let spawned: Spawned | undefined;
    before(async () => {
      // Already migrated: the restart is the subject, not a first start's initialisation (api/restart covers that).
      dataDir = await migratedDataDir('hearth-chat-restart-');
    });
    after(async () => {
      if (spawned && spawned.child.exitCode === null) spawned.child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    });

    it('recovers an open tab after the server restarts and shows what was sent meanwhile', async () => {
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      const env = {
        PORT: String(port),
        HOST: '127.0.0.1',
        HEARTH_DATA_DIR: dataDir,
        HEARTH_PUBLIC_URL: origin,
        HEARTH_LOG_LEVEL: 'warn',
      };
      spawned = spawnEntrypoint(env);
      await waitForHealth(origin, spawned);
      const server = { url: origin };
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId, channelId } = await guildWith(server, 'Realtime', alice, bob);
      const context = await signedInContext(browser, bob);
      const page = await context.newPage();
      await page.goto(`${origin}/channels/${guildId}/${channelId}`);
      await composer(page).waitFor();

      const first = spawned;
      first.child.kill('SIGTERM');
      await first.exited;
      await page.getByText('Connection lost. Reconnecting…').waitFor({ timeout: 15_000 });
      spawned = spawnEntrypoint(env);
      await waitForHealth(origin, spawned);
      const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'sent while you were away' },
      });
      assert.equal(res.status, 200, res.text);
      await shown(page, 'sent while you were away').waitFor({ timeout: 45_000 });
      await page.getByText('Connection lost. Reconnecting…').waitFor({ state: 'detached' });
      // And the tab is live again: a new message arrives through the new connection.
      await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: alice.token,
        body: { content: 'live again' },
      });
      await shown(page, 'live again').waitFor({ timeout: 15_000 });
      assert.equal(await shown(page, 'sent while you were away').count(), 1);
      await context.close();
    });
  });
}
