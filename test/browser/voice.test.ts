import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  FAKE_MEDIA_ARGS,
  serverAndChromium,
  signedInWithMedia,
  startWebServer,
  warnNoChromium,
} from './support/browser.ts';
import { audioGrowing, framesDecoded, inboundAudioBytes } from './support/voice-stats.ts';

/** Voice in Chromium with fake devices: two people join one voice channel from the UI and hear each other. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/voice.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), {
    chromiumArgs: FAKE_MEDIA_ARGS,
  });
  const signedIn = (user: TestUser) => signedInWithMedia(browser, server.origin, user);

  describe('voice in the browser', () => {
    it('two people join a voice channel from the UI, each receives the other’s audio, and leaving clears the list', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Voice place' } });
      assert.equal(guild.status, 200);
      const guildId = guild.body.id as string;
      const invite = await request(server, 'POST', `/v1/channels/${guild.body.system_channel_id}/invites`, {
        auth: alice.token,
        body: {},
      });
      assert.equal(
        (await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: bob.token, body: {} })).status,
        200,
      );
      const channel = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'Lounge', type: 2 },
      });
      assert.equal(channel.status, 200);
      const url = `${server.origin}/channels/${guildId}/${channel.body.id}`;

      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await Promise.all([a.goto(url), b.goto(url)]);
      for (const page of [a, b]) await page.getByRole('button', { name: 'Join voice' }).click();
      for (const page of [a, b]) await page.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor();

      // Each sees both names in the channel's list.
      for (const page of [a, b])
        for (const user of [alice, bob])
          await page.locator(`.voice-member[data-user-id="${user.id}"]`).waitFor({ timeout: 10_000 });

      await audioGrowing(a, 'alice hears bob');
      await audioGrowing(b, 'bob hears alice');
      // The fake microphone beeps: the SFU's audio-level events mark the other person as speaking.
      await a.locator(`.voice-member.speaking[data-user-id="${bob.id}"]`).waitFor({ timeout: 10_000 });

      // Camera (VP8 through the SFU): Bob gets a video tile and decodes frames.
      await a.locator('.voice-controls').getByRole('button', { name: 'Turn camera on' }).click();
      await b.locator('video.voice-video').waitFor({ timeout: 10_000 });
      const videoDeadline = Date.now() + 15_000;
      while ((await framesDecoded(b)) < 20) {
        if (Date.now() > videoDeadline)
          throw new Error(`bob decoded ${await framesDecoded(b)} frames of alice's camera`);
        await b.waitForTimeout(250);
      }
      await a.locator('.voice-controls').getByRole('button', { name: 'Turn camera off' }).click();

      // Screen share: a second video stream from Alice, decoded by Bob.
      // The camera's last frames drain first, so what grows after this is the screen.
      await b.waitForTimeout(1000);
      const beforeScreen = await framesDecoded(b);
      await a.locator('.voice-controls').getByRole('button', { name: 'Share screen' }).click();
      await a.locator('.voice-controls').getByRole('button', { name: 'Stop sharing' }).waitFor();
      await b.locator('video[aria-label^="Screen of"]').waitFor();
      const screenDeadline = Date.now() + 15_000;
      while ((await framesDecoded(b)) < beforeScreen + 3) {
        if (Date.now() > screenDeadline) throw new Error("bob decoded no frames of alice's screen");
        await b.waitForTimeout(250);
      }
      // Bob pins the screen: it fills the stage and offers full screen; unpinning puts it back with the others.
      const pin = b.getByRole('button', { name: /^Pin Screen of / });
      assert.equal(await pin.getAttribute('aria-pressed'), 'false');
      await pin.click();
      const stage = b.getByRole('figure', { name: /^Pinned: Screen of / });
      await stage.waitFor();
      assert.equal(await pin.getAttribute('aria-pressed'), 'true');
      await stage.getByRole('button', { name: /^Show Screen of .* full screen$/ }).waitFor();
      const staged = await stage.locator('video').boundingBox();
      assert.ok(staged && staged.width > 320, `the pinned stream is shown large (${staged?.width} px)`);
      await assertAccessible(b, 'voice with a pinned stream');
      await pin.click();
      await stage.waitFor({ state: 'detached' });
      assert.equal(await pin.getAttribute('aria-pressed'), 'false');
      await a.locator('.voice-controls').getByRole('button', { name: 'Stop sharing' }).click();

      // Mute sends nothing: Bob's inbound bytes from Alice stop growing; unmuting brings them back.
      await a.locator('.voice-controls').getByRole('button', { name: 'Mute', exact: true }).click();
      await b.locator(`.voice-member[data-user-id="${alice.id}"]`).getByText('muted').waitFor();
      await b.waitForTimeout(500);
      const frozen = await inboundAudioBytes(b);
      await b.waitForTimeout(1500);
      assert.ok((await inboundAudioBytes(b)) - frozen < 500, 'no audio flows from a muted member');
      await a.locator('.voice-controls').getByRole('button', { name: 'Unmute' }).click();
      await audioGrowing(b, 'bob hears alice again');

      // Leaving from the UI clears Alice from Bob's list; closing Bob's tab clears him for the server.
      await a.locator('.voice-controls').getByRole('button', { name: 'Leave' }).click();
      await b.locator(`.voice-member[data-user-id="${alice.id}"]`).waitFor({ state: 'detached', timeout: 10_000 });
      await b.close();
      const deadline = Date.now() + 10_000;
      while ((await server.app.services.voice.statesOf(guildId)).length > 0) {
        if (Date.now() > deadline) throw new Error('closed tab still in voice');
        await new Promise((r) => setTimeout(r, 100));
      }
      await Promise.all([ca.close(), cb.close()]);

      // Someone without CONNECT is told so and gets no Join button.
      const carol = await registerUser(server);
      assert.equal(
        (await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: carol.token, body: {} })).status,
        200,
      );
      const overwrite = await request(server, 'PUT', `/v1/channels/${channel.body.id}/permissions/${carol.id}`, {
        auth: alice.token,
        body: { type: 1, allow: '0', deny: String(1 << 20) },
      });
      assert.equal(overwrite.status, 204);
      const cc = await signedIn(carol);
      const c = await cc.newPage();
      await c.goto(url);
      await c.getByText('You do not have permission to join this channel.').waitFor();
      assert.equal(await c.getByRole('button', { name: 'Join voice' }).count(), 0);
      await cc.close();
    });
  });
  describe('voice whose media never connects', () => {
    // The SFU gives up on a member whose media has not connected after this long (20 s outside tests).
    let quick: TestServer & { origin: string };
    before(async () => {
      quick = await startWebServer({}, { voice: { mediaConnectLimitMs: 2000 } });
    });
    after(async () => {
      await quick?.close();
    });

    it('tells the person why they left the channel and lets them join again', async () => {
      const alice = await registerUser(quick);
      const guild = await request(quick, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Walled' } });
      const channel = await request(quick, 'POST', `/v1/guilds/${guild.body.id}/channels`, {
        auth: alice.token,
        body: { name: 'Lounge', type: 2 },
      });
      assert.equal(channel.status, 200);
      const context = await signedInWithMedia(browser, quick.origin, alice);
      // As behind a firewall that drops UDP: relay candidates only, and no relay configured, so ICE never connects.
      await context.addInitScript(`(() => {
        const Original = window.RTCPeerConnection;
        function Walled(config) { return new Original({ ...(config || {}), iceTransportPolicy: 'relay' }); }
        Walled.prototype = Original.prototype;
        window.RTCPeerConnection = Walled;
      })()`);
      const page = await context.newPage();
      await page.goto(`${quick.origin}/channels/${guild.body.id}/${channel.body.id}`);
      await page.getByRole('button', { name: 'Join voice' }).click();
      const notice = page.getByRole('alert').filter({ hasText: 'Voice could not connect' });
      await notice.waitFor({ timeout: 15_000 });
      assert.match((await notice.textContent()) ?? '', /you left the channel\. Try joining again\.$/);
      // Out of the channel for everyone: nobody is listed, and Join is offered again.
      await page.locator('.voice-member').first().waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Join voice' }).waitFor();
      await assertAccessible(page, 'voice connection failed');
      // Joining again clears the notice.
      await page.getByRole('button', { name: 'Join voice' }).click();
      await notice.waitFor({ state: 'detached' });
      await context.close();
    });
  });
}
