import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  FAKE_MEDIA_ARGS,
  guildWith,
  serverAndChromium,
  signedInWithMedia,
  warnNoChromium,
} from './support/browser.ts';
import { joinFromUi, silentFor } from './support/voice-ui.ts';

/** Per-participant volume, input sensitivity and connection quality, in Chromium with fake devices (docs/web.md#voice). */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/voice-settings.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), {
    chromiumArgs: FAKE_MEDIA_ARGS,
  });
  const signedIn = (user: TestUser) => signedInWithMedia(browser, server.origin, user);

  async function twoInLounge(name: string) {
    const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
    const { guildId } = await guildWith(server, name, alice, bob);
    const channel = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
      auth: alice.token,
      body: { name: 'Lounge', type: 2 },
    });
    assert.equal(channel.status, 200, channel.text);
    const url = `${server.origin}/channels/${guildId}/${channel.body.id as string}`;
    const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
    const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
    await joinFromUi(a, url);
    await joinFromUi(b, url);
    return { alice, bob, a, b, url, guildId, close: () => Promise.all([ca.close(), cb.close()]) };
  }

  /** The loudest sample, over `ms`, of what the page plays for `userId` (the stream its audio element plays). */
  async function playedPeak(page: Page, userId: string, ms: number): Promise<number> {
    return page.evaluate(
      async ({ userId, ms }) => {
        const element = document.querySelector<HTMLAudioElement>(`audio.voice-audio[data-user-id="${userId}"]`);
        const stream = element?.srcObject;
        if (!(stream instanceof MediaStream)) throw new Error('no audio element for the participant');
        const context = new AudioContext();
        await context.resume();
        const analyser = context.createAnalyser();
        context.createMediaStreamSource(stream).connect(analyser);
        const samples = new Float32Array(analyser.fftSize);
        let peak = 0;
        const end = performance.now() + ms;
        while (performance.now() < end) {
          analyser.getFloatTimeDomainData(samples);
          for (const sample of samples) peak = Math.max(peak, Math.abs(sample));
          await new Promise((r) => setTimeout(r, 20));
        }
        await context.close();
        return peak;
      },
      { userId, ms },
    );
  }

  describe('voice settings in the browser', () => {
    it('a per-participant volume slider (0–200 %) drives that participant’s gain and is remembered', async () => {
      const { alice, bob, a, url, close } = await twoInLounge('Volume place');
      const bobRow = a.locator(`.voice-member[data-user-id="${bob.id}"]`);
      await bobRow.waitFor({ timeout: 10_000 });
      // No slider on one's own row.
      assert.equal(await a.locator(`.voice-member[data-user-id="${alice.id}"]`).getByRole('slider').count(), 0);
      const slider = bobRow.getByRole('slider', { name: `Volume of ${bob.username}` });
      assert.equal(await slider.inputValue(), '100');
      assert.equal(await slider.getAttribute('min'), '0');
      assert.equal(await slider.getAttribute('max'), '200');
      const bobAudio = a.locator(`audio.voice-audio[data-user-id="${bob.id}"]`);
      await bobAudio.waitFor({ state: 'attached', timeout: 15_000 });
      assert.equal(await bobAudio.getAttribute('data-gain'), '1');
      await assertAccessible(a, 'the voice channel with volume sliders');

      // 100 %: Bob's fake microphone beeps are heard; 0 %: nothing is played for him.
      assert.ok((await playedPeak(a, bob.id, 2_500)) > 0.01, 'bob is audible at 100 %');
      await slider.fill('0');
      await bobRow.getByText('0 %').waitFor();
      assert.equal(await bobAudio.getAttribute('data-gain'), '0');
      assert.equal(await playedPeak(a, bob.id, 2_500), 0, 'bob is silent at 0 %');

      await slider.fill('200');
      await bobRow.getByText('200 %').waitFor();
      assert.equal(await bobAudio.getAttribute('data-gain'), '2');
      assert.equal(await slider.getAttribute('aria-valuetext'), '200 %');
      assert.deepEqual(await a.evaluate(() => JSON.parse(localStorage.getItem('hearth.voice.volumes') ?? '{}')), {
        [bob.id]: 200,
      });

      // Remembered: after a reload and a new join, Bob's slider and gain are still at 200 %.
      await joinFromUi(a, url);
      const again = a.locator(`.voice-member[data-user-id="${bob.id}"]`).getByRole('slider', {
        name: `Volume of ${bob.username}`,
      });
      await again.waitFor({ timeout: 10_000 });
      assert.equal(await again.inputValue(), '200');
      await bobAudio.waitFor({ state: 'attached', timeout: 15_000 });
      assert.equal(await bobAudio.getAttribute('data-gain'), '2');
      await close();
    });

    it('input sensitivity: under a high manual threshold the microphone is not sent; automatic sends it again', async () => {
      const { alice, a, b, guildId, close } = await twoInLounge('Sensitivity place');
      const aliceSpeaking = b.locator(`.voice-member.speaking[data-user-id="${alice.id}"]`);
      // Automatic (the default): the fake microphone's beeps show Alice speaking to Bob.
      await aliceSpeaking.waitFor({ timeout: 15_000 });

      const settings = a.locator('.voice-settings');
      const auto = settings.getByRole('checkbox', { name: 'Determine input sensitivity automatically' });
      const threshold = settings.getByRole('slider', { name: 'Input sensitivity (dB)' });
      assert.equal(await auto.isChecked(), true);
      assert.equal(await threshold.isDisabled(), true);
      await auto.uncheck();
      assert.equal(await threshold.isEnabled(), true);
      // 0 dB: nothing the fake microphone plays reaches it.
      await threshold.fill('0');
      await settings.getByText('0 dB').waitFor();
      await a.getByText('Below the sensitivity: not sent').waitFor();
      await assertAccessible(a, 'voice settings with a manual input sensitivity');
      await aliceSpeaking.waitFor({ state: 'detached', timeout: 5_000 });
      assert.ok(await silentFor(b, alice, 3_000), 'alice is not heard under a 0 dB threshold');
      assert.deepEqual(
        await a.evaluate(() => {
          const stored = JSON.parse(localStorage.getItem('hearth.voice') ?? '{}');
          return [stored.sensitivityAuto, stored.sensitivityDb];
        }),
        [false, 0],
      );
      // The threshold is not a mute: the voice state says Alice is unmuted.
      assert.equal((await server.app.services.voice.stateOf(guildId, alice.id))?.self_mute, false);

      // A low threshold lets the beeps through again.
      await threshold.fill('-100');
      await a.getByText('Your voice is being sent').waitFor({ timeout: 5_000 });
      await aliceSpeaking.waitFor({ timeout: 15_000 });

      // Back to 0 dB, then automatic: sent again without a threshold.
      await threshold.fill('0');
      await aliceSpeaking.waitFor({ state: 'detached', timeout: 5_000 });
      await auto.check();
      await aliceSpeaking.waitFor({ timeout: 15_000 });
      await close();
    });

    it('connection quality: "good" on a local connection, with round trip and loss from getStats in its label', async () => {
      const { a, close } = await twoInLounge('Quality place');
      const indicator = a.getByRole('img', { name: /^Connection quality: / });
      await indicator.waitFor({ timeout: 10_000 });
      await a.getByText('Connection: good').waitFor();
      const label = (await indicator.getAttribute('aria-label')) ?? '';
      const match = /^Connection quality: good \((\d+) ms round trip, ([\d.]+) % packet loss\)$/.exec(label);
      assert.ok(match, label);
      const shownRtt = Number(match[1]);
      const statsRtt = await a.evaluate(async () => {
        const hooks = window as unknown as { hearthVoiceStats?: () => Promise<RTCStatsReport> | undefined };
        let rtt = -1;
        (await hooks.hearthVoiceStats?.())?.forEach((s) => {
          if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded')
            rtt = s.currentRoundTripTime * 1000;
        });
        return rtt;
      });
      assert.ok(statsRtt >= 0, 'a selected candidate pair with a round-trip time');
      // Same connection, readings up to two seconds apart: on loopback both stay well under 150 ms.
      assert.ok(shownRtt < 150 && statsRtt < 150, `${shownRtt} ms shown, ${statsRtt} ms in getStats`);
      assert.ok(Number(match[2]) < 2);
      assert.equal(await a.locator('.voice-quality').getAttribute('data-quality'), 'good');
      await assertAccessible(a, 'the call with its connection quality');
      await close();
    });
  });
}
