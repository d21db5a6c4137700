import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  ApplicationCommandType,
  Client,
  ContextMenuCommandBuilder,
  Events,
  GatewayIntentBits,
  type Interaction,
  SlashCommandBuilder,
} from 'discord.js';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import { installBot } from '../support/oauth2.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/**
 * The "Apps" submenus (docs/bots.md#user-and-message-commands): a person picks a discord.js bot's message command
 * from a message's actions and its user command from someone's card; the bot receives the target and the person
 * sees its reply.
 */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-apps-menu.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  const bots: Client[] = [];
  after(async () => {
    for (const bot of bots) await bot.destroy();
  });
  serverAndChromium((started) => ({ server, browser } = started));

  describe('apps in context menus', () => {
    it("a person runs a bot's message command and user command from the menus and sees the bot's replies", async () => {
      const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Menu Den' } });
      const guildId = guild.body.id as string;
      const channelId = guild.body.system_channel_id as string;
      const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
        auth: owner.token,
        body: {},
      });
      await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token, body: {} });
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: owner.token,
        body: { name: 'Tools' },
      });
      assert.equal(app.status, 200, app.text);
      const consent = await installBot(server, owner, app.body.id, guildId, (1n << 10n) | (1n << 11n));
      assert.equal(consent.status, 200, consent.text);
      const received: { type: number; name: string; target: string; content?: string; user?: string }[] = [];
      const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: server.url } });
      bots.push(client);
      client.on(Events.InteractionCreate, async (interaction: Interaction) => {
        if (interaction.isMessageContextMenuCommand()) {
          received.push({
            type: interaction.commandType,
            name: interaction.commandName,
            target: interaction.targetId,
            content: interaction.targetMessage.content,
          });
          await interaction.reply(`Quoted: "${interaction.targetMessage.content}"`);
        } else if (interaction.isUserContextMenuCommand()) {
          received.push({
            type: interaction.commandType,
            name: interaction.commandName,
            target: interaction.targetId,
            user: interaction.targetUser.username,
          });
          await interaction.reply(`${interaction.user.username} high-fived ${interaction.targetUser.username}`);
        }
      });
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await client.login(app.body.bot.token);
      await ready;
      await client.application?.commands.set([
        new ContextMenuCommandBuilder().setName('Quote Message').setType(ApplicationCommandType.Message),
        new ContextMenuCommandBuilder().setName('High Five').setType(ApplicationCommandType.User),
        new SlashCommandBuilder().setName('ping').setDescription('Replies pong'),
      ]);
      const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
        auth: owner.token,
        body: { content: 'the cake is a lie' },
      });
      assert.equal(posted.status, 200, posted.text);

      const context = await signedInContext(browser, member);
      const page = await context.newPage();
      await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor();

      // A message's actions: Apps lists the message command only.
      const message = page.locator(`#message-${posted.body.id}`);
      await message.hover();
      const actions = message.getByRole('toolbar', { name: `Actions for the message of ${owner.username}` });
      await actions.getByRole('button', { name: 'Apps' }).click();
      const messageApps = page.getByRole('menu', { name: 'Apps' });
      await messageApps.getByRole('menuitem', { name: 'Quote Message — Tools' }).waitFor();
      assert.equal(await messageApps.getByRole('menuitem').count(), 1);
      await assertAccessible(page, 'the message Apps menu');
      await messageApps.getByRole('menuitem', { name: 'Quote Message — Tools' }).click();
      await page.locator('.message-list').getByText('Quoted: "the cake is a lie"', { exact: true }).waitFor();
      await messageApps.waitFor({ state: 'detached' });

      // Someone's card: Apps lists the user command only.
      await message.getByRole('button', { name: owner.username, exact: true }).click();
      const card = page.getByRole('region', { name: `Profile of ${owner.username}` });
      await card.getByRole('button', { name: 'Apps' }).click();
      const userApps = card.getByRole('menu', { name: 'Apps' });
      await userApps.getByRole('menuitem', { name: 'High Five — Tools' }).waitFor();
      assert.equal(await userApps.getByRole('menuitem').count(), 1);
      await userApps.getByRole('menuitem', { name: 'High Five — Tools' }).press('Enter');
      await page
        .locator('.message-list')
        .getByText(`${member.username} high-fived ${owner.username}`, { exact: true })
        .waitFor();

      assert.deepEqual(received, [
        { type: 3, name: 'Quote Message', target: posted.body.id, content: 'the cake is a lie' },
        { type: 2, name: 'High Five', target: owner.id, user: owner.username },
      ]);
      await context.close();
    });
  });
}
