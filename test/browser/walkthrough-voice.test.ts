import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  FAKE_MEDIA_ARGS,
  guildWith,
  press,
  serverAndChromium,
  signedInWithMedia,
  warnNoChromium,
} from './support/browser.ts';
import { joinFromUi } from './support/voice-ui.ts';

/**
 * A newcomer's walk through a voice channel by keyboard (issue 20 §4), with Chromium's fake devices: joined from
 * the channel's URL with Enter; each call control found once by its name (a by-name search, which matches
 * substrings, finds exactly one); mute, deafen and the microphone's processing switched by keyboard; a
 * moderator's participant menu opened, moved through with the arrows and closed with Escape.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/walkthrough-voice.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), { chromiumArgs: FAKE_MEDIA_ARGS });

  const focused = (control: Locator) => control.evaluate((el) => el === document.activeElement);

  describe('a voice channel by keyboard', () => {
    it('joins from the URL, finds each control once by name, and drives the controls and the menu by keys', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Hall', alice, bob);
      const lounge = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
        auth: alice.token,
        body: { name: 'Lounge', type: 2 },
      });
      assert.equal(lounge.status, 200, lounge.text);
      const url = `${server.origin}/channels/${guildId}/${lounge.body.id}`;
      const [ca, cb] = await Promise.all([
        signedInWithMedia(browser, server.origin, alice),
        signedInWithMedia(browser, server.origin, bob),
      ]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);

      await a.goto(url);
      await press(a.getByRole('button', { name: 'Join voice' }));
      await a.getByRole('status').filter({ hasText: 'Voice connected' }).waitFor({ timeout: 15_000 });
      await joinFromUi(b, url);
      const bobInA = a.locator(`.voice-member[data-user-id="${bob.id}"]`);
      await bobInA.waitFor({ timeout: 10_000 });

      // Every control of the call, once by its name: no other control's name contains it (the header's
      // notification settings once shared "Mute" with the microphone's).
      const once: [Parameters<Page['getByRole']>[0], string][] = [
        ['button', 'Mute'],
        ['button', 'Deafen'],
        ['button', 'Turn camera on'],
        ['button', 'Share screen'],
        ['button', 'Leave'],
        ['combobox', 'Microphone'],
        ['combobox', 'Speaker'],
        ['radio', 'Voice activity'],
        ['radio', 'Push to talk'],
        ['checkbox', 'Echo cancellation'],
        ['checkbox', 'Noise suppression'],
        ['checkbox', 'Determine input sensitivity automatically'],
        ['slider', `Volume of ${bob.username}`],
        ['button', `Moderate ${bob.username}`],
        ['img', 'Connection quality'],
      ];
      await a.getByRole('img', { name: /^Connection quality: / }).waitFor({ timeout: 15_000 });
      for (const [role, name] of once)
        assert.equal(await a.getByRole(role, { name }).count(), 1, `one ${role} named "${name}"`);
      await assertAccessible(a, 'voice channel, connected');

      // Mute and deafen by keyboard: the server's voice state follows.
      const state = () => server.app.services.voice.stateOf(guildId, alice.id);
      await press(a.getByRole('button', { name: 'Mute', exact: true }));
      await a.getByRole('button', { name: 'Unmute', pressed: true }).waitFor();
      for (let i = 0; i < 50 && !(await state())?.self_mute; i++) await a.waitForTimeout(100);
      assert.equal((await state())?.self_mute, true);
      await press(a.getByRole('button', { name: 'Unmute' }));
      await press(a.getByRole('button', { name: 'Deafen', exact: true }));
      await a.getByRole('button', { name: 'Undeafen', pressed: true }).waitFor();
      for (let i = 0; i < 50 && !(await state())?.self_deaf; i++) await a.waitForTimeout(100);
      assert.equal((await state())?.self_deaf, true);
      await press(a.getByRole('button', { name: 'Undeafen' }));
      await a.getByRole('button', { name: 'Deafen', exact: true, pressed: false }).waitFor();

      // The microphone's processing, switched with Space and kept.
      const noise = a.getByRole('checkbox', { name: 'Noise suppression' });
      const before = await noise.isChecked();
      await press(noise, 'Space');
      assert.equal(await noise.isChecked(), !before);
      const echo = a.getByRole('checkbox', { name: 'Echo cancellation' });
      const echoBefore = await echo.isChecked();
      await press(echo, 'Space');
      assert.equal(await echo.isChecked(), !echoBefore);
      const stored = await a.evaluate(() => JSON.parse(localStorage.getItem('hearth.voice') ?? '{}'));
      assert.equal(stored.noiseSuppression, !before);
      assert.equal(stored.echoCancellation, !echoBefore);

      // The participant menu: opened with Enter, the first item focused, arrows move, Escape gives the focus back.
      const moderate = a.getByRole('button', { name: `Moderate ${bob.username}` });
      await press(moderate);
      const menu = a.getByRole('menu', { name: `Moderate ${bob.username}` });
      await menu.waitFor();
      const items = menu.getByRole('menuitem');
      assert.equal(await focused(items.first()), true);
      await a.keyboard.press('End');
      assert.equal(await focused(items.last()), true);
      await a.keyboard.press('ArrowDown');
      assert.equal(await focused(items.first()), true);
      await a.keyboard.press('ArrowUp');
      assert.equal(await focused(items.last()), true);
      await assertAccessible(a, 'participant menu');
      await a.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
      assert.equal(await focused(moderate), true);
      // Enter on "Server mute": Bob is muted by a moderator, seen by both.
      await a.keyboard.press('Enter');
      await menu.waitFor();
      assert.equal(await focused(menu.getByRole('menuitem', { name: 'Server mute' })), true);
      await a.keyboard.press('Enter');
      await menu.waitFor({ state: 'detached' });
      await b.locator(`.voice-member[data-user-id="${bob.id}"]`).getByText('muted by a moderator').waitFor();
      await bobInA.getByText('muted by a moderator').waitFor();
      assert.equal(await focused(moderate), true);
      await Promise.all([ca.close(), cb.close()]);
    });
  });
}
