import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  ChannelType,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  MessageFlags,
  ModalBuilder,
  type Role,
  SlashCommandBuilder,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import type { Browser } from 'playwright-core';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { installBot } from '../support/oauth2.ts';
import type { TestServer } from '../support/server.ts';
import {
  assertAccessible,
  CHROMIUM_PATH,
  serverAndChromium,
  signedInContext,
  warnNoChromium,
} from './support/browser.ts';

/** Bot messages in the chat client: a discord.js bot's buttons clicked in Chromium, its ephemeral answer, its form. */
if (!CHROMIUM_PATH) {
  warnNoChromium('test/browser/chat-bots.test.ts');
} else {
  let server: TestServer & { origin: string };
  let browser: Browser;
  /** Every bot client logged in, signed out before the browser and the server stop. */
  const bots: Client[] = [];
  after(async () => {
    for (const bot of bots) await bot.destroy();
  });
  serverAndChromium((started) => ({ server, browser } = started));

  /**
   * A new owner's guild with a new member, and an application of the owner's whose bot is installed there
   * (send and read messages) and logged in with discord.js, answering interactions with `onInteraction`.
   */
  async function botInGuild(
    names: { guild: string; app: string },
    onInteraction: (interaction: Interaction) => Promise<void>,
  ) {
    const [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
    const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: names.guild } });
    const guildId = guild.body.id as string;
    const channelId = guild.body.system_channel_id as string;
    const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, {
      auth: owner.token,
      body: {},
    });
    await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token, body: {} });
    const app = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: owner.token,
      body: { name: names.app },
    });
    assert.equal(app.status, 200, app.text);
    const consent = await installBot(server, owner, app.body.id, guildId, (1n << 10n) | (1n << 11n));
    assert.equal(consent.status, 200, consent.text);
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: server.url } });
    bots.push(client);
    client.on(Events.InteractionCreate, onInteraction);
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    await client.login(app.body.bot.token);
    await ready;
    return { owner, member, guildId, channelId, applicationId: app.body.id as string, client };
  }

  /** `user`'s own context with the guild's channel open. */
  async function openChannel(user: TestUser, guildId: string, channelId: string) {
    const context = await signedInContext(browser, user);
    const page = await context.newPage();
    await page.goto(`${server.origin}/channels/${guildId}/${channelId}`);
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor();
    return { context, page };
  }

  describe('bot components in the browser', () => {
    it("a person clicks a bot's button and sees the bot's ephemeral answer, which the other person does not", async () => {
      const {
        owner,
        member: other,
        guildId,
        channelId,
        applicationId,
        client,
      } = await botInGuild({ guild: 'Bot Den', app: 'Helper' }, async (interaction) => {
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
      const commands = await client.application?.commands.set([
        new SlashCommandBuilder().setName('menu').setDescription('Shows a menu'),
      ]);
      const menuId = commands?.first()?.id;
      assert.ok(menuId);

      const a = await openChannel(owner, guildId, channelId);
      const b = await openChannel(other, guildId, channelId);
      const invoked = await request(server, 'POST', '/v1/interactions', {
        auth: owner.token,
        body: {
          type: 2,
          application_id: applicationId,
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
      // Only this tab holds it: dismissed by keyboard, it goes, with no toolbar offering what the server cannot do.
      const ephemeral = b.page.locator('.message', { hasText: `waved by ${other.username}` });
      assert.equal(await ephemeral.getByRole('toolbar').count(), 0);
      await ephemeral.getByRole('button', { name: 'Dismiss message' }).focus();
      await b.page.keyboard.press('Enter');
      await ephemeral.waitFor({ state: 'detached' });
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

  describe('slash commands in the composer', () => {
    it('lists the commands the person may use, picks one by keyboard, fills its options and shows the reply', async () => {
      const { owner, member, guildId, channelId, client } = await botInGuild(
        { guild: 'Slash Den', app: 'Slasher' },
        async (interaction) => {
          if (!interaction.isChatInputCommand()) return;
          if (interaction.commandName === 'echo') {
            const text = interaction.options.getString('text', true);
            const times = interaction.options.getInteger('times') ?? 1;
            const loud = interaction.options.getBoolean('loud') ?? false;
            const who = interaction.options.getUser('to');
            const said = Array.from({ length: times }, () => (loud ? text.toUpperCase() : text)).join(' ');
            await interaction.reply(`${interaction.user.username} said: ${said}${who ? ` to ${who.username}` : ''}`);
          } else await interaction.reply('done');
        },
      );
      try {
        await client.application?.commands.set([
          new SlashCommandBuilder()
            .setName('echo')
            .setDescription('Says it back')
            .addStringOption((o) => o.setName('text').setDescription('What to say').setRequired(true))
            .addIntegerOption((o) => o.setName('times').setDescription('How many times'))
            .addBooleanOption((o) => o.setName('loud').setDescription('In capitals'))
            .addUserOption((o) => o.setName('to').setDescription('Said to whom')),
          new SlashCommandBuilder().setName('ping').setDescription('Replies pong'),
          new SlashCommandBuilder()
            .setName('purge')
            .setDescription('Deletes messages')
            .setDefaultMemberPermissions(1n << 13n),
        ]);
        const m = await openChannel(member, guildId, channelId);
        const box = m.page.getByRole('textbox', { name: 'Message #general' });
        assert.equal(await box.getAttribute('aria-controls'), null);
        await box.click();
        await box.press('/');
        const list = m.page.getByRole('listbox', { name: 'Commands' });
        await list.getByRole('option', { name: 'echo — Says it back' }).waitFor();
        await list.getByRole('option', { name: 'ping — Replies pong' }).waitFor();
        // purge needs MANAGE_MESSAGES, which the member does not hold.
        assert.equal(await list.getByRole('option').count(), 2);
        assert.equal(await box.getAttribute('aria-controls'), await list.getAttribute('id'));
        await assertAccessible(m.page, 'the slash-command list');
        // Filtered as one types; arrows move the active option.
        await box.press('p');
        await list.getByRole('option', { name: 'echo — Says it back' }).waitFor({ state: 'detached' });
        await box.press('Backspace');
        await list.getByRole('option', { name: 'echo — Says it back' }).waitFor();
        await box.press('ArrowDown');
        const active = async () => m.page.locator(`#${await box.getAttribute('aria-activedescendant')}`).textContent();
        assert.equal(await active(), 'ping — Replies pong');
        await box.press('ArrowDown');
        assert.equal(await active(), 'echo — Says it back');
        await box.press('Enter');
        const form = m.page.getByRole('form', { name: 'Command /echo' });
        const text = form.getByLabel('text (required)');
        await text.waitFor();
        assert.equal(await text.evaluate((el) => el === document.activeElement), true);
        await assertAccessible(m.page, 'the slash-command options');
        // A required option is enforced.
        await text.press('Enter');
        await form.getByRole('alert').getByText('text is required.').waitFor();
        await text.fill('hello');
        await form.getByLabel('times').fill('2');
        await form.getByLabel('loud').selectOption({ label: 'True' });
        await form.getByLabel('to').selectOption({ label: owner.username });
        await form.getByLabel('times').press('Enter');
        await m.page
          .locator('.message-list')
          .getByText(`${member.username} said: HELLO HELLO to ${owner.username}`, { exact: true })
          .waitFor();
        await form.waitFor({ state: 'detached' });
        await box.waitFor();

        // The owner may use purge.
        const o = await openChannel(owner, guildId, channelId);
        const ownerBox = o.page.getByRole('textbox', { name: 'Message #general' });
        await ownerBox.click();
        await ownerBox.press('/');
        await o.page.getByRole('option', { name: 'purge — Deletes messages' }).waitFor();
        await Promise.all([m.context.close(), o.context.close()]);
      } finally {
        await client.destroy();
      }
    });
  });
  describe('every option type and autocomplete in the picker', () => {
    it('roles, mentionables, channels, numbers in range, choices and a file reach the bot; suggestions come from it', async () => {
      const FRUITS = ['apple', 'apricot', 'banana', 'cherry'];
      /** The raw INTERACTION_CREATE payloads the bot's gateway delivered, as Discord's would be. */
      const raw: Record<string, any>[] = [];
      const { owner, member, guildId, channelId, client } = await botInGuild(
        { guild: 'Option Den', app: 'Optioner' },
        async (interaction) => {
          if (interaction.isAutocomplete()) {
            const typed = interaction.options.getFocused();
            await interaction.respond(
              FRUITS.filter((f) => f.startsWith(typed)).map((f) => ({
                name: f[0]?.toUpperCase() + f.slice(1),
                value: f,
              })),
            );
            return;
          }
          if (!interaction.isChatInputCommand()) return;
          if (interaction.commandName === 'fruit') {
            await interaction.reply(`you chose ${interaction.options.getString('name', true)}`);
            return;
          }
          const role = interaction.options.getRole('role', true) as Role;
          const who = interaction.options.getMentionable('who');
          const where = interaction.options.getChannel('where');
          const file = interaction.options.getAttachment('file');
          // A member comes back as a GuildMember (discord.js builds it from resolved.members), a role as a Role.
          const mentioned = who as { user?: { username: string }; name?: string } | null;
          const whoName = mentioned?.user ? mentioned.user.username : mentioned?.name ? `@${mentioned.name}` : '-';
          const text = file ? await (await fetch(file.url)).text() : '';
          await interaction.reply(
            `granted @${role.name} to ${whoName} in #${where?.name ?? '-'} x${interaction.options.getInteger('count')} ` +
              `${interaction.options.getString('size')} ${interaction.options.getNumber('ratio')} ${file?.name}: ${text.trim()}`,
          );
        },
      );
      client.on(Events.Raw, (packet: { t?: string; d?: Record<string, any> }) => {
        if (packet.t === 'INTERACTION_CREATE' && packet.d) raw.push(packet.d);
      });
      try {
        const role = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
          auth: owner.token,
          body: { name: 'Helpers', permissions: '0' },
        });
        assert.equal(role.status, 200, role.text);
        const voice = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
          auth: owner.token,
          body: { name: 'Lounge', type: 2 },
        });
        assert.equal(voice.status, 200, voice.text);
        await client.application?.commands.set([
          new SlashCommandBuilder()
            .setName('grant')
            .setDescription('Grants a role')
            .addRoleOption((o) => o.setName('role').setDescription('Which role').setRequired(true))
            .addMentionableOption((o) => o.setName('who').setDescription('To whom'))
            .addChannelOption((o) => o.setName('where').setDescription('Where').addChannelTypes(ChannelType.GuildText))
            .addIntegerOption((o) => o.setName('count').setDescription('How many').setMinValue(1).setMaxValue(5))
            .addNumberOption((o) => o.setName('ratio').setDescription('How much').setMinValue(0).setMaxValue(1))
            .addStringOption((o) =>
              o
                .setName('size')
                .setDescription('How big')
                .addChoices({ name: 'Small', value: 'small' }, { name: 'Large', value: 'large' }),
            )
            .addAttachmentOption((o) => o.setName('file').setDescription('A file')),
          new SlashCommandBuilder()
            .setName('fruit')
            .setDescription('Picks a fruit')
            .addStringOption((o) =>
              o.setName('name').setDescription('Which fruit').setRequired(true).setAutocomplete(true),
            ),
        ]);
        const m = await openChannel(member, guildId, channelId);
        const box = m.page.getByRole('textbox', { name: 'Message #general' });
        await box.click();
        await box.pressSequentially('/gr');
        await m.page.getByRole('option', { name: 'grant — Grants a role' }).waitFor();
        await box.press('Enter');
        const form = m.page.getByRole('form', { name: 'Command /grant' });
        await form.getByLabel('role (required)').selectOption({ label: '@Helpers' });
        // A mentionable lists members and roles; a channel option only the channel types it takes.
        const who = form.getByLabel('who');
        assert.deepEqual(await who.locator('optgroup').evaluateAll((gs) => gs.map((g) => g.getAttribute('label'))), [
          'Members',
          'Roles',
        ]);
        await who.selectOption({ label: owner.username });
        const where = form.getByLabel('where');
        assert.deepEqual(await where.locator('option').allTextContents(), ['Choose…', '#general']);
        await where.selectOption({ label: '#general' });
        await form.getByLabel('count').fill('9');
        await form.getByLabel('ratio').fill('0.25');
        await form.getByLabel('size').selectOption({ label: 'Large' });
        await form.getByLabel('file').setInputFiles({
          name: 'note.txt',
          mimeType: 'text/plain',
          buffer: Buffer.from('remember the milk\n'),
        });
        await assertAccessible(m.page, 'the options of every type');
        await form.getByLabel('count').press('Enter');
        await form.getByRole('alert').getByText('count must be at most 5.').waitFor();
        assert.equal(await form.getByLabel('count').getAttribute('aria-invalid'), 'true');
        await form.getByLabel('count').fill('2');
        await form.getByRole('button', { name: 'Send /grant' }).click();
        await m.page
          .locator('.message-list')
          .getByText(`granted @Helpers to ${owner.username} in #general x2 large 0.25 note.txt: remember the milk`, {
            exact: true,
          })
          .waitFor();
        const grant = raw.find((d) => d.data?.name === 'grant');
        assert.ok(grant);
        const fileId = grant.data.options[6].value as string;
        assert.deepEqual(grant.data.options, [
          { type: 8, name: 'role', value: role.body.id },
          { type: 9, name: 'who', value: owner.id },
          { type: 7, name: 'where', value: channelId },
          { type: 4, name: 'count', value: 2 },
          { type: 10, name: 'ratio', value: 0.25 },
          { type: 3, name: 'size', value: 'large' },
          { type: 11, name: 'file', value: fileId },
        ]);
        assert.deepEqual(Object.keys(grant.data.resolved).sort(), [
          'attachments',
          'channels',
          'members',
          'roles',
          'users',
        ]);
        assert.equal(grant.data.resolved.attachments[fileId].filename, 'note.txt');
        assert.equal(grant.data.resolved.attachments[fileId].size, 18);
        assert.equal(grant.data.resolved.members[owner.id].roles.length, 0);

        // Autocomplete: the bot's suggestions for what is typed, taken with the keyboard.
        await box.pressSequentially('/fr');
        await m.page.getByRole('option', { name: 'fruit — Picks a fruit' }).waitFor();
        await box.press('Enter');
        const fruitForm = m.page.getByRole('form', { name: 'Command /fruit' });
        const name = fruitForm.getByRole('combobox', { name: 'name (required)' });
        await name.pressSequentially('ap');
        const suggestions = fruitForm.getByRole('listbox', { name: 'Suggestions for name' });
        // The answer for "" (asked on focus, all four) gives way to the one for "ap".
        let shown: string[] = [];
        for (let i = 0; i < 50 && shown.join() !== 'Apple,Apricot'; i++) {
          await m.page.waitForTimeout(100);
          shown = await suggestions.getByRole('option').allTextContents();
        }
        assert.deepEqual(shown, ['Apple', 'Apricot']);
        assert.equal(await name.getAttribute('aria-expanded'), 'true');
        await assertAccessible(m.page, 'the autocomplete suggestions');
        await name.press('ArrowDown');
        await name.press('ArrowDown');
        assert.equal(
          await m.page.locator(`#${await name.getAttribute('aria-activedescendant')}`).textContent(),
          'Apricot',
        );
        await name.press('Enter');
        assert.equal(await name.inputValue(), 'Apricot');
        await suggestions.waitFor({ state: 'hidden' });
        await name.press('Enter');
        await m.page.locator('.message-list').getByText('you chose apricot', { exact: true }).waitFor();
        const asked = raw.filter((d) => d.type === 4).at(-1);
        assert.deepEqual(asked?.data.options, [{ type: 3, name: 'name', value: 'ap', focused: true }]);
        await m.context.close();
      } finally {
        await client.destroy();
      }
    });
  });
}
