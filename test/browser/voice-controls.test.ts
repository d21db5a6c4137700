import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
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

/** Push-to-talk and moderators' voice controls, in Chromium with fake devices (docs/web.md#voice). */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/voice-controls.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  serverAndChromium((started) => ({ server, browser } = started), {
    chromiumArgs: FAKE_MEDIA_ARGS,
  });
  const signedIn = (user: TestUser) => signedInWithMedia(browser, server.origin, user);

  async function voiceChannel(owner: TestUser, guildId: string, name: string): Promise<string> {
    const channel = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
      auth: owner.token,
      body: { name, type: 2 },
    });
    assert.equal(channel.status, 200, channel.text);
    return channel.body.id as string;
  }

  async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  describe('voice controls in the browser', () => {
    it('push-to-talk: a labelled key binding; nobody hears you while the key is up, everyone while it is held', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Talk place', alice, bob);
      const lounge = await voiceChannel(alice, guildId, 'Lounge');
      const url = `${server.origin}/channels/${guildId}/${lounge}`;
      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await joinFromUi(a, url);
      await joinFromUi(b, url);
      const aliceSpeaking = b.locator(`.voice-member.speaking[data-user-id="${alice.id}"]`);
      // Voice activity (the default): the fake microphone's beeps show Alice speaking to Bob.
      await aliceSpeaking.waitFor({ timeout: 15_000 });

      // Alice switches to push-to-talk and binds T in the labelled field.
      const settings = a.locator('.voice-settings');
      assert.equal(await settings.getByRole('radio', { name: 'Voice activity' }).isChecked(), true);
      await settings.getByRole('radio', { name: 'Push to talk' }).check();
      const keyField = settings.getByLabel('Push-to-talk key');
      assert.equal(await keyField.inputValue(), '`');
      await keyField.press('KeyT');
      assert.equal(await keyField.inputValue(), 'T');
      await a.getByText('Push to talk: hold T to speak').waitFor();
      await assertAccessible(a, 'voice settings in push-to-talk mode');
      // Typing the key into a text field is text, not talk; leave the field before holding it.
      await keyField.blur();

      // Key up: her track is disabled, so the SFU hears silence and Bob sees her stop speaking, for good.
      await aliceSpeaking.waitFor({ state: 'detached', timeout: 5_000 });
      assert.ok(await silentFor(b, alice, 3_000), 'alice is not heard while the key is up');
      assert.equal(
        await a.evaluate(() => {
          const stored = JSON.parse(localStorage.getItem('hearth.voice') ?? '{}');
          return `${stored.inputMode} ${stored.pushToTalkKey}`;
        }),
        'pushToTalk KeyT',
      );

      // Key held: Alice sees she is transmitting and Bob sees her speaking; released: silence again.
      await a.keyboard.down('KeyT');
      await a.getByText('Transmitting').waitFor();
      await aliceSpeaking.waitFor({ timeout: 10_000 });
      await a.keyboard.up('KeyT');
      await a.getByText('Push to talk: hold T to speak').waitFor();
      await aliceSpeaking.waitFor({ state: 'detached', timeout: 5_000 });
      assert.ok(await silentFor(b, alice, 2_000), 'silent again once the key is released');
      // Push-to-talk is not a mute: the server's voice state says Alice is unmuted throughout.
      const state = await server.app.services.voice.stateOf(guildId, alice.id);
      assert.equal(state?.self_mute, false);

      // In a text channel the call goes on: holding the key with the focus on the page talks and types nothing
      // (a key typed there would otherwise go to the message box).
      await a.getByRole('link', { name: /^#general/ }).click();
      const composer = a.getByRole('textbox', { name: 'Message #general' });
      await composer.waitFor();
      await a.locator('body').click({ position: { x: 1, y: 1 } });
      await a.keyboard.down('KeyT');
      await aliceSpeaking.waitFor({ timeout: 10_000 });
      await a.keyboard.up('KeyT');
      assert.equal(await composer.inputValue(), '', 'the push-to-talk key typed nothing');
      // Any other key typed on the page still goes to the message box.
      await a.keyboard.press('KeyH');
      assert.equal(await composer.inputValue(), 'h');
      await composer.fill('');
      await a
        .getByRole('link', { name: /Lounge/ })
        .first()
        .click();

      // Back to voice activity: heard again without a key.
      await settings.getByRole('radio', { name: 'Voice activity' }).check();
      await aliceSpeaking.waitFor({ timeout: 15_000 });
      await Promise.all([ca.close(), cb.close()]);
    });

    it('a moderator server-mutes, server-deafens, moves and disconnects a member from the participant menu', async () => {
      const [alice, bob] = await Promise.all([registerUser(server), registerUser(server)]);
      const { guildId } = await guildWith(server, 'Moderated place', alice, bob);
      const lounge = await voiceChannel(alice, guildId, 'Lounge');
      const quiet = await voiceChannel(alice, guildId, 'Quiet room');
      const loungeUrl = `${server.origin}/channels/${guildId}/${lounge}`;
      const [ca, cb] = await Promise.all([signedIn(alice), signedIn(bob)]);
      const [a, b] = await Promise.all([ca.newPage(), cb.newPage()]);
      await joinFromUi(a, loungeUrl);
      await joinFromUi(b, loungeUrl);
      const bobInA = a.locator(`.voice-member[data-user-id="${bob.id}"]`);
      const bobInB = b.locator(`.voice-member[data-user-id="${bob.id}"]`);
      await bobInA.waitFor({ timeout: 10_000 });
      await b.locator(`.voice-member[data-user-id="${alice.id}"]`).waitFor({ timeout: 10_000 });

      // Bob has none of the permissions: no moderation menu on anyone.
      assert.equal(await b.getByRole('button', { name: /^Moderate / }).count(), 0);

      const member = async () =>
        (await request(server, 'GET', `/v1/guilds/${guildId}/members/${bob.id}`, { auth: alice.token })).body;
      const menu = async (item: string) => {
        await bobInA.getByRole('button', { name: /^Moderate / }).click();
        const opened = a.getByRole('menu', { name: /^Moderate / });
        if (item === 'Server mute') await assertAccessible(a, 'a participant’s moderation menu');
        await opened.getByRole('menuitem', { name: item }).click();
        await opened.waitFor({ state: 'detached' });
      };

      // Server mute: both see the badge, the member is muted on the server.
      await menu('Server mute');
      await bobInB.getByText('muted by a moderator').waitFor();
      await bobInA.getByText('muted by a moderator').waitFor();
      assert.equal((await member()).mute, true);
      assert.equal((await server.app.services.voice.stateOf(guildId, bob.id))?.mute, true);

      // Server deafen.
      await menu('Server deafen');
      await bobInB.getByText('deafened by a moderator').waitFor();
      assert.equal((await member()).deaf, true);
      assert.equal((await server.app.services.voice.stateOf(guildId, bob.id))?.deaf, true);

      // The menu now offers to undo them; removing the server mute clears its badge.
      await menu('Remove server mute');
      await bobInB.getByText('muted by a moderator').waitFor({ state: 'detached' });
      assert.equal((await member()).mute, false);
      await menu('Remove server deafen');
      await bobInB.getByText('deafened by a moderator').waitFor({ state: 'detached' });
      assert.equal((await member()).deaf, false);

      // Move to another voice channel: Bob leaves Alice's list, his page says where he is now.
      await menu('Move to Quiet room');
      await bobInA.waitFor({ state: 'detached', timeout: 10_000 });
      await b.getByText('You are connected to Quiet room.').waitFor({ timeout: 10_000 });
      await until(
        async () => (await server.app.services.voice.stateOf(guildId, bob.id))?.channel_id === quiet,
        'bob in the quiet room',
      );
      // His call followed him: opening the Quiet room (in the page, no reload) shows him there with the call's controls.
      await b.getByRole('link', { name: 'Voice channel Quiet room' }).click();
      await b.locator(`.voice-member[data-user-id="${bob.id}"]`).waitFor();
      await b.locator('.voice-controls').getByRole('button', { name: 'Leave' }).waitFor();
      await a.getByRole('link', { name: 'Voice channel Quiet room' }).click();
      const bobInQuiet = a.locator(`.voice-member[data-user-id="${bob.id}"]`);
      await bobInQuiet.waitFor();

      // Disconnect: Bob is out of voice for everyone.
      await bobInQuiet.getByRole('button', { name: /^Moderate / }).click();
      await a.getByRole('menuitem', { name: 'Disconnect from voice' }).click();
      await bobInQuiet.waitFor({ state: 'detached', timeout: 10_000 });
      // Bob's own page: his call is over, the channel offers Join again.
      await b.getByRole('button', { name: 'Join voice' }).waitFor({ timeout: 10_000 });
      await b.locator(`.voice-member[data-user-id="${bob.id}"]`).waitFor({ state: 'detached' });
      await until(
        async () => (await server.app.services.voice.stateOf(guildId, bob.id)) === undefined,
        'bob out of voice',
      );
      await Promise.all([ca.close(), cb.close()]);
    });
  });
}
