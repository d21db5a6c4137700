import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  CHROMIUM_PATH,
  FAKE_MEDIA_ARGS,
  serverAndChromium,
  signedInWithMedia,
  warnNoChromium,
} from './support/browser.ts';
import { decodesVideo, sentScalabilityModes, sentVideoCodecs } from './support/voice-stats.ts';

/**
 * Video codecs through the SFU in Chromium (docs/voice.md#codecs): one camera in H.264 and one in VP8 in the same
 * room, and a third person who joins while both are on decodes each in its own codec.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/voice-codecs.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), { chromiumArgs: FAKE_MEDIA_ARGS });

  async function joinVoice(user: TestUser, url: string): Promise<Page> {
    const context = await signedInWithMedia(browser, server.origin, user);
    const page = await context.newPage();
    await page.goto(url);
    await page.getByRole('button', { name: 'Join voice' }).click();
    await page.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor();
    return page;
  }

  async function cameraOn(page: Page): Promise<void> {
    await page.locator('.voice-controls').getByRole('button', { name: 'Turn camera on' }).click();
    await page.locator('.voice-controls').getByRole('button', { name: 'Turn camera off' }).waitFor();
  }

  async function sends(page: Page, mimeType: string, who: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    let codecs = await sentVideoCodecs(page);
    while (!codecs.includes(mimeType)) {
      if (Date.now() > deadline) throw new Error(`${who} sends ${JSON.stringify(codecs)}, not ${mimeType}`);
      await page.waitForTimeout(250);
      codecs = await sentVideoCodecs(page);
    }
    assert.deepEqual(codecs, [mimeType], `${who} sends only ${mimeType}`);
  }

  describe('video codecs in the browser', () => {
    it('an H.264 camera and a VP8 camera in one room are both decoded, each in its codec, by a third person', async () => {
      const [alice, bob, carol] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: alice.token, body: { name: 'Codecs' } });
      assert.equal(guild.status, 200);
      const invite = await request(server, 'POST', `/v1/channels/${guild.body.system_channel_id}/invites`, {
        auth: alice.token,
        body: {},
      });
      for (const user of [bob, carol])
        assert.equal(
          (await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: user.token, body: {} })).status,
          200,
        );
      const channel = await request(server, 'POST', `/v1/guilds/${guild.body.id}/channels`, {
        auth: alice.token,
        body: { name: 'Cameras', type: 2 },
      });
      assert.equal(channel.status, 200);
      const url = `${server.origin}/channels/${guild.body.id}/${channel.body.id}`;

      const [a, b] = await Promise.all([joinVoice(alice, url), joinVoice(bob, url)]);
      // VP8 is the default; Alice picks H.264 in her voice settings.
      for (const page of [a, b]) assert.equal(await page.getByLabel('Video codec').inputValue(), 'VP8');
      await a.getByLabel('Video codec').selectOption({ label: 'H.264' });
      await cameraOn(a);
      await cameraOn(b);
      await sends(a, 'video/H264', 'alice');
      await sends(b, 'video/VP8', 'bob');
      // A VP8 camera is sent in three temporal layers, for the SFU's layer selection (docs/voice.md#layer-selection).
      assert.deepEqual(await sentScalabilityModes(b), ['L1T3']);
      // Each publisher decodes the other's camera, whose m-line was added while both were connected.
      assert.equal(await decodesVideo(b, `Video of ${alice.username}`), 'video/H264');
      assert.equal(await decodesVideo(a, `Video of ${bob.username}`), 'video/VP8');

      // Carol joins with both cameras already on: she can only start at key frames, which her browser asks for.
      const c = await joinVoice(carol, url);
      assert.equal(await decodesVideo(c, `Video of ${alice.username}`), 'video/H264');
      assert.equal(await decodesVideo(c, `Video of ${bob.username}`), 'video/VP8');
    });
  });
}
