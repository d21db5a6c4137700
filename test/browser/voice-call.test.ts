import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { readyClient } from '../gateway/gateway-client.ts';
import { friendsWithDm } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  FAKE_MEDIA_ARGS,
  serverAndChromium,
  signedInWithMedia,
  warnNoChromium,
} from './support/browser.ts';
import { audioGrowing } from './support/voice-stats.ts';

/** A DM call in Chromium with fake devices: one starts it from the DM header, the other accepts the incoming call. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/voice-call.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), { chromiumArgs: FAKE_MEDIA_ARGS });

  const signedIn = (user: TestUser): Promise<BrowserContext> => signedInWithMedia(browser, server.origin, user);

  describe('DM calls in the browser', () => {
    it('Alice starts a call in a DM, Bob accepts from the incoming-call notice, each receives the other’s audio', async () => {
      const { alice, bob, channelId } = await friendsWithDm(server);

      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([
        a.goto(`${server.origin}/channels/@me/${channelId}`),
        b.goto(`${server.origin}/channels/@me`),
      ]);
      await a.getByRole('button', { name: 'Start call' }).click();
      await a.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor();

      // Bob, elsewhere in the app, is rung.
      const notice = b.getByRole('region', { name: /is calling you/ });
      await notice.waitFor();
      await notice.getByRole('button', { name: 'Accept call' }).click();
      await b.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor();
      assert.equal(new URL(b.url()).pathname, `/channels/@me/${channelId}`);
      for (const page of [a, b])
        for (const user of [alice, bob])
          await page.locator(`.dm-call .voice-member[data-user-id="${user.id}"]`).waitFor({ timeout: 10_000 });
      await audioGrowing(a, 'alice hears bob');
      await audioGrowing(b, 'bob hears alice');
      // Each has a volume slider for the other, and none for themselves.
      const volume = a.locator('.dm-call').getByRole('slider', { name: /^Volume of / });
      assert.equal(await volume.count(), 1);
      assert.equal(await a.locator(`.dm-call .voice-member[data-user-id="${bob.id}"]`).getByRole('slider').count(), 1);
      await volume.fill('50');
      await a.locator('.dm-call').getByText('50 %').waitFor();
      await assertAccessible(a, 'DM call');

      // Both hang up: the call ends and its message says so.
      await a.locator('.voice-controls').getByRole('button', { name: 'Leave' }).click();
      await b.locator(`.dm-call .voice-member[data-user-id="${alice.id}"]`).waitFor({ state: 'detached' });
      await b.locator('.voice-controls').getByRole('button', { name: 'Leave' }).click();
      await a.getByText(/started a call that has ended/).waitFor();
      assert.equal(await server.app.services.voice.stateOf(channelId, bob.id), undefined);
      await Promise.all([ca.close(), cb.close()]);
    });

    it('Bob opens Hearth while Alice’s call rings him: he is rung, and the DM shows who is in the call', async () => {
      const { alice, bob, channelId } = await friendsWithDm(server);
      const ca = await signedIn(alice);
      const a = await ca.newPage();
      await a.goto(`${server.origin}/channels/@me/${channelId}`);
      await a.getByRole('button', { name: 'Start call' }).click();
      await a.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor();

      // Bob's tab connects after the call began: READY, then the call's CALL_CREATE (docs/voice.md#calls-in-ready).
      const cb = await signedIn(bob);
      const b = await cb.newPage();
      await b.goto(`${server.origin}/channels/@me`);
      const notice = b.getByRole('region', { name: /is calling you/ });
      await notice.waitFor({ timeout: 10_000 });
      await b.goto(`${server.origin}/channels/@me/${channelId}`);
      await b.locator(`.dm-call .voice-member[data-user-id="${alice.id}"]`).waitFor({ timeout: 10_000 });
      await b.getByRole('button', { name: 'Join call' }).waitFor();
      await a.locator('.voice-controls').getByRole('button', { name: 'Leave' }).click();
      await b.locator(`.dm-call .voice-member[data-user-id="${alice.id}"]`).waitFor({ state: 'detached' });
      await Promise.all([ca.close(), cb.close()]);
    });

    it('Bob declines: the notice goes and Alice’s call no longer rings him', async () => {
      const { alice, bob, channelId } = await friendsWithDm(server);
      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([
        a.goto(`${server.origin}/channels/@me/${channelId}`),
        b.goto(`${server.origin}/channels/@me`),
      ]);
      // Alice's other session watches the call's events.
      const { client: watcher } = await readyClient(server, alice.token);
      await a.getByRole('button', { name: 'Start call' }).click();
      const notice = b.getByRole('region', { name: /is calling you/ });
      await notice.getByRole('button', { name: 'Decline call' }).click();
      await notice.waitFor({ state: 'detached' });
      const update = await watcher.next((f) => f.t === 'CALL_UPDATE' && (f.d as any).channel_id === channelId);
      assert.deepEqual((update.d as any).ringing, []);
      await watcher.close();
      await a.locator('.voice-controls').getByRole('button', { name: 'Leave' }).click();
      await Promise.all([ca.close(), cb.close()]);
    });
  });
}
