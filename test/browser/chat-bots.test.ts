import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  MessageFlags,
  ModalBuilder,
  SlashCommandBuilder,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import type { Browser } from 'playwright-core';
import { registerUser, request } from '../support/client.ts';
import type { TestServer } from '../support/server.ts';
import { CHROMIUM_PATH, launchChromium, newContext, startWebServer, warnNoChromium } from './support/browser.ts';

/** Bot messages in the chat client: a discord.js bot's buttons clicked in Chromium, its ephemeral answer, its form. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-bots.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  let bot: Client | undefined;
  before(async () => {
    [server, browser] = await Promise.all([startWebServer(), launchChromium()]);
  });
  after(async () => {
    await bot?.destroy();
    await browser?.close();
    await server?.close();
  });

  describe('bot components in the browser', () => {
    it("a person clicks a bot's button and sees the bot's ephemeral answer, which the other person does not", async () => {
      const [owner, other] = await Promise.all([registerUser(server), registerUser(server)]);
      const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Bot Den' } });
      const guildId = guild.body.id as string;
      const channelId = guild.body.system_channel_id as string;
      const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
        auth: owner.token,
        body: {},
      });
      await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: other.token, body: {} });
      const app = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: owner.token,
        body: { name: 'Helper' },
      });
      assert.equal(app.status, 200, app.text);
      const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
        auth: owner.token,
        body: {
          client_id: app.body.id,
          scope: 'bot',
          guild_id: guildId,
          permissions: String((1n << 10n) | (1n << 11n)),
        },
      });
      assert.equal(consent.status, 200, consent.text);

      const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: server.url } });
      bot = client;
      client.on(Events.InteractionCreate, async (interaction: Interaction) => {
        if (interaction.isChatInputCommand() && interaction.commandName === 'menu') {
          const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
            new ButtonBuilder().setCustomId('wave').setLabel('Wave back').setStyle(ButtonStyle.Primary),
            new ButtonBuilder().setCustomId('form').setLabel('Give feedback').setStyle(ButtonStyle.Secondary),
            new ButtonBuilder().setURL('https://example.com/').setLabel('Docs').setStyle(ButtonStyle.Link),
          );
          await interaction.reply({ content: 'pick one', components: [row] });
        } else if (interaction.isButton() && interaction.customId === 'form') {
          await interaction.showModal(
            new ModalBuilder()
              .setCustomId('feedback')
              .setTitle('Feedback')
              .addComponents(
                new ActionRowBuilder<TextInputBuilder>().addComponents(
                  new TextInputBuilder().setCustomId('words').setLabel('Your words').setStyle(TextInputStyle.Short),
                ),
              ),
          );
        } else if (interaction.isModalSubmit()) {
          await interaction.reply(`thanks: ${interaction.fields.getTextInputValue('words')}`);
        } else if (interaction.isButton() && interaction.customId === 'wave') {
          await interaction.reply({ content: `waved by ${interaction.user.username}`, flags: MessageFlags.Ephemeral });
        }
      });
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await client.login(app.body.bot.token);
      await ready;
      const commands = await client.application?.commands.set([
        new SlashCommandBuilder().setName('menu').setDescription('Shows a menu'),
      ]);
      const menuId = commands?.first()?.id;
      assert.ok(menuId);

      const open = async (user: typeof owner) => {
        const context = await newContext(browser);
        await context.addInitScript(
          ([token, userId]) => window.localStorage.setItem('hearth.session', JSON.stringify({ token, userId })),
          [user.token, user.id],
        );
        const page = await context.newPage();
        await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
        await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
        return { context, page };
      };
      const a = await open(owner);
      const b = await open(other);
      const invoked = await request(server, 'POST', '/v1/interactions', {
        auth: owner.token,
        body: {
          type: 2,
          application_id: app.body.id,
          guild_id: guildId,
          channel_id: channelId,
          data: { id: menuId, name: 'menu', type: 1, options: [] },
        },
      });
      assert.equal(invoked.status, 204, invoked.text);
      await b.page.getByRole('link', { name: 'Docs' }).waitFor();
      await b.page.getByRole('button', { name: 'Wave back' }).click();
      await b.page
        .locator('.message', { hasText: `waved by ${other.username}` })
        .getByText('Only you can see this message.')
        .waitFor();
      await a.page.waitForTimeout(1000);
      assert.equal(await a.page.getByText(`waved by ${other.username}`).count(), 0);
      // A button that opens the bot's form; the answer to the submission is for everyone.
      await b.page.getByRole('button', { name: 'Give feedback' }).click();
      const form = b.page.getByRole('dialog', { name: 'Feedback' });
      await form.getByLabel('Your words').fill('lovely');
      await form.getByRole('button', { name: 'Submit' }).click();
      await a.page.locator('.message-list').getByText('thanks: lovely', { exact: true }).waitFor();
      await form.waitFor({ state: 'detached' });
      await Promise.all([a.context.close(), b.context.close()]);
    });
  });
}
