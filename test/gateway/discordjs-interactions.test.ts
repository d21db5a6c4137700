import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ActionRowBuilder,
  ActivityType,
  ButtonBuilder,
  ButtonStyle,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  MessageFlags,
  ModalBuilder,
  Routes,
  SlashCommandBuilder,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import { addBotToGuild } from '../support/applications.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * A typical slash-command bot, written for Discord, against Hearth: one unmodified discord.js 14 client with
 * only `rest: { api }` set (docs/bots.md). People invoke its commands and click its buttons through
 * `POST /v1/interactions`, as the web client does.
 */

let server: TestServer;
let owner: TestUser;
let other: TestUser;
let ownerGw: GatewayClient;
let otherGw: GatewayClient;
let client: Client;
let guildId: string;
let channelId: string;
let applicationId: string;
let botId: string;
const commandIds = new Map<string, string>();
const seen: string[] = [];
/** A small PNG the bot sends back as a file. */
const chart = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==',
  'base64',
);
let refusedFile: { status: number; code: unknown } | undefined;

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  other = await registerUser(server);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Slash Den' } });
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, { auth: owner.token, body: {} });
  assert.equal((await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: other.token })).status, 200);
  const app = await request(server, 'POST', '/v1/oauth2/applications', {
    auth: owner.token,
    body: { name: 'Slasher' },
  });
  applicationId = app.body.id;
  botId = app.body.bot.id;
  await addBotToGuild(server, owner, applicationId, guildId);
  ({ client: ownerGw } = await readyClient(server, owner.token));
  ({ client: otherGw } = await readyClient(server, other.token));

  client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: server.url } });
  client.on(Events.InteractionCreate, async (interaction: Interaction) => {
    seen.push(interaction.isChatInputCommand() ? interaction.commandName : interaction.isButton() ? 'button' : 'other');
    if (interaction.isChatInputCommand()) {
      if (interaction.commandName === 'ping') await interaction.reply('pong');
      if (interaction.commandName === 'echo')
        await interaction.reply({ content: `echo: ${interaction.options.getString('text', true)}` });
      if (interaction.commandName === 'slow') {
        await interaction.deferReply();
        await interaction.editReply('done after thinking');
        await interaction.followUp('and one more thing');
      }
      if (interaction.commandName === 'chart') {
        // A file whose part no attachments entry names is refused, and the interaction can still be answered.
        await client.rest
          .post(Routes.interactionCallback(interaction.id, interaction.token), {
            body: { type: 4, data: { content: 'unpaired', attachments: [] } },
            files: [{ name: 'stray.png', data: chart }],
            auth: false,
          })
          .catch((error: { status: number; rawError?: { code?: unknown } }) => {
            refusedFile = { status: error.status, code: error.rawError?.code };
          });
        await interaction.deferReply();
        await interaction.editReply({ content: 'the chart', files: [{ attachment: chart, name: 'chart.png' }] });
        await interaction.followUp({
          content: 'your copy',
          files: [{ attachment: Buffer.from('just for you'), name: 'note.txt' }],
          flags: MessageFlags.Ephemeral,
        });
        await interaction.followUp({ content: 'raw data', files: [{ attachment: chart, name: 'data.png' }] });
      }
      if (interaction.commandName === 'secret')
        await interaction.reply({ content: 'only you can see this', flags: MessageFlags.Ephemeral });
      if (interaction.commandName === 'menu') {
        const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('open-form').setLabel('Open the form').setStyle(ButtonStyle.Primary),
          new ButtonBuilder().setURL('https://example.com/').setLabel('Docs').setStyle(ButtonStyle.Link),
        );
        await interaction.reply({ content: 'pick one', components: [row] });
      }
    } else if (interaction.isButton() && interaction.customId === 'open-form') {
      const modal = new ModalBuilder()
        .setCustomId('feedback')
        .setTitle('Feedback')
        .addComponents(
          new ActionRowBuilder<TextInputBuilder>().addComponents(
            new TextInputBuilder().setCustomId('words').setLabel('Your words').setStyle(TextInputStyle.Short),
          ),
        );
      await interaction.showModal(modal);
    } else if (interaction.isModalSubmit()) {
      await interaction.reply(`thanks: ${interaction.fields.getTextInputValue('words')}`);
    }
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(app.body.bot.token);
  await ready;
});

after(async () => {
  await client?.destroy();
  await ownerGw?.close();
  await otherGw?.close();
  await server?.close();
});

function invoke(user: TestUser, name: string, options: unknown[] = [], extra: Record<string, unknown> = {}) {
  return request(server, 'POST', '/v1/interactions', {
    auth: user.token,
    body: {
      type: 2,
      application_id: applicationId,
      guild_id: guildId,
      channel_id: channelId,
      nonce: `n-${name}-${Date.now()}`,
      data: { id: commandIds.get(name), name, type: 1, options },
      ...extra,
    },
  });
}

describe('slash commands with discord.js', () => {
  test('registers commands with application.commands.set (one bulk overwrite)', async () => {
    const builders = [
      new SlashCommandBuilder().setName('ping').setDescription('Replies pong'),
      new SlashCommandBuilder()
        .setName('echo')
        .setDescription('Says it back')
        .addStringOption((o) => o.setName('text').setDescription('What to say').setRequired(true)),
      new SlashCommandBuilder().setName('slow').setDescription('Thinks first'),
      new SlashCommandBuilder().setName('secret').setDescription('Ephemeral'),
      new SlashCommandBuilder().setName('menu').setDescription('Buttons'),
      new SlashCommandBuilder().setName('chart').setDescription('Sends files'),
      new SlashCommandBuilder()
        .setName('admin-only')
        .setDescription('Managers')
        .setDefaultMemberPermissions(1n << 5n),
    ];
    const commands = await client.application?.commands.set(builders);
    assert.equal(commands?.size, 7);
    for (const command of commands?.values() ?? []) commandIds.set(command.name, command.id);
    const listed = await request(server, 'GET', `/v1/applications/${applicationId}/commands`, {
      auth: `Bot ${client.token}`,
    });
    assert.deepEqual(listed.body.map((c: { name: string }) => c.name).sort(), [
      'admin-only',
      'chart',
      'echo',
      'menu',
      'ping',
      'secret',
      'slow',
    ]);
    const echo = listed.body.find((c: { name: string }) => c.name === 'echo');
    assert.deepEqual(echo.options, [{ type: 3, name: 'text', description: 'What to say', required: true }]);
    assert.equal(echo.application_id, applicationId);
    // Setting the list again keeps the ids of the commands it names.
    const again = await client.application?.commands.set(builders);
    assert.equal(again?.get(commandIds.get('ping') as string)?.name, 'ping');
    assert.equal(again?.size, 7);
  });

  test('a person invokes /ping; the bot replies; everyone in the channel sees it', async () => {
    const res = await invoke(owner, 'ping');
    assert.equal(res.status, 204, res.text);
    const reply = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === botId, 10_000);
    assert.equal(reply.d.content, 'pong');
    assert.equal(reply.d.type, 20);
    assert.equal(reply.d.application_id, applicationId);
    assert.equal(reply.d.interaction_metadata.user.id, owner.id);
    assert.equal(reply.d.interaction_metadata.name, 'ping');
  });

  test('options arrive typed, deferred replies edit and follow up', async () => {
    assert.equal((await invoke(owner, 'echo', [{ type: 3, name: 'text', value: 'hello' }])).status, 204);
    const echo = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content?.startsWith('echo:'), 10_000);
    assert.equal(echo.d.content, 'echo: hello');

    assert.equal((await invoke(owner, 'slow')).status, 204);
    const thinking = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === botId, 10_000);
    assert.equal(thinking.d.flags & 128, 128);
    const edited = await otherGw.next((f) => f.t === 'MESSAGE_UPDATE' && f.d.id === thinking.d.id, 10_000);
    assert.equal(edited.d.content, 'done after thinking');
    assert.equal(edited.d.flags & 128, 0);
    const follow = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'and one more thing', 10_000);
    assert.equal(follow.d.interaction_metadata.id, thinking.d.interaction_metadata.id);
  });

  test('replies, edits and follow-ups carry files (multipart), ephemeral ones too; an unpaired file is refused', async () => {
    assert.equal((await invoke(owner, 'chart')).status, 204);
    const thinking = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === botId, 10_000);
    const edited = await otherGw.next((f) => f.t === 'MESSAGE_UPDATE' && f.d.id === thinking.d.id, 10_000);
    assert.deepEqual(refusedFile, { status: 400, code: 'INVALID_FORM_BODY' });
    assert.equal(edited.d.content, 'the chart');
    assert.equal(edited.d.attachments.length, 1);
    const [file] = edited.d.attachments;
    assert.equal(file.filename, 'chart.png');
    assert.equal(file.size, chart.length);
    assert.equal(file.content_type, 'image/png');
    assert.deepEqual([file.width, file.height], [2, 2]);
    const fetched = await fetch(file.url);
    assert.equal(fetched.status, 200);
    assert.deepEqual(Buffer.from(await fetched.arrayBuffer()), chart);

    const mine = await ownerGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'your copy', 10_000);
    assert.equal(mine.d.flags & 64, 64);
    assert.equal(mine.d.attachments[0].filename, 'note.txt');
    assert.equal(await (await fetch(mine.d.attachments[0].url)).text(), 'just for you');
    const follow = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'raw data', 10_000);
    assert.equal(follow.d.attachments[0].filename, 'data.png');
    assert.equal(follow.d.attachments[0].size, chart.length);
    assert.ok(await otherGw.nothing((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'your copy', 200));
    // The stored message holds the files too.
    const history = await request(server, 'GET', `/v1/channels/${channelId}/messages/${thinking.d.id}`, {
      auth: other.token,
    });
    assert.equal(history.status, 200);
    assert.equal(history.body.attachments[0].id, file.id);
  });

  test('an ephemeral reply reaches only the person who invoked, and is not in the history', async () => {
    assert.equal((await invoke(owner, 'secret')).status, 204);
    const mine = await ownerGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'only you can see this', 10_000);
    assert.equal(mine.d.flags & 64, 64);
    assert.ok(await otherGw.nothing((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'only you can see this', 500));
    const history = await request(server, 'GET', `/v1/channels/${channelId}/messages?limit=50`, { auth: other.token });
    assert.ok(!history.body.some((m: { content: string }) => m.content === 'only you can see this'));
  });

  test('a button click comes back as a component interaction, opens a modal, and the submission arrives', async () => {
    assert.equal((await invoke(owner, 'menu')).status, 204);
    const menu = await ownerGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'pick one', 10_000);
    assert.equal(menu.d.components[0].components[0].custom_id, 'open-form');
    assert.equal(menu.d.components[0].components[1].url, 'https://example.com/');

    const click = await request(server, 'POST', '/v1/interactions', {
      auth: owner.token,
      body: {
        type: 3,
        application_id: applicationId,
        guild_id: guildId,
        channel_id: channelId,
        message_id: menu.d.id,
        data: { component_type: 2, custom_id: 'open-form' },
      },
    });
    assert.equal(click.status, 204, click.text);
    const modal = await ownerGw.next((f) => f.t === 'INTERACTION_MODAL_CREATE', 10_000);
    assert.equal(modal.d.custom_id, 'feedback');
    assert.equal(modal.d.components[0].components[0].custom_id, 'words');

    const submit = await request(server, 'POST', '/v1/interactions', {
      auth: owner.token,
      body: {
        type: 5,
        application_id: applicationId,
        guild_id: guildId,
        channel_id: channelId,
        data: {
          custom_id: 'feedback',
          components: [{ type: 1, components: [{ type: 4, custom_id: 'words', value: 'great' }] }],
        },
      },
    });
    assert.equal(submit.status, 204, submit.text);
    const thanks = await otherGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'thanks: great', 10_000);
    assert.equal(thanks.d.author.id, botId);
    assert.ok(seen.includes('button'));
  });
});

describe('refusals', () => {
  test('unknown command, a command the member may not use, a foreign channel, a bad custom id, a modal never shown', async () => {
    const unknown = await request(server, 'POST', '/v1/interactions', {
      auth: owner.token,
      body: {
        type: 2,
        application_id: applicationId,
        guild_id: guildId,
        channel_id: channelId,
        data: { id: '123456789012345678', name: 'nope', type: 1 },
      },
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_APPLICATION_COMMAND');

    const managers = await invoke(other, 'admin-only');
    assert.equal(managers.status, 403);
    assert.equal(managers.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await invoke(owner, 'admin-only')).status, 204, 'the owner holds MANAGE_GUILD');

    const stranger = await registerUser(server);
    const foreign = await invoke(stranger, 'ping');
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.code, 'MISSING_ACCESS');

    const list = await request(server, 'GET', `/v1/channels/${channelId}/messages?limit=20`, { auth: owner.token });
    const menu = list.body.find((m: { content: string }) => m.content === 'pick one');
    const badClick = await request(server, 'POST', '/v1/interactions', {
      auth: owner.token,
      body: {
        type: 3,
        application_id: applicationId,
        guild_id: guildId,
        channel_id: channelId,
        message_id: menu.id,
        data: { component_type: 2, custom_id: 'not-there' },
      },
    });
    assert.equal(badClick.status, 400);
    assert.equal(badClick.body.code, 'INVALID_FORM_BODY');

    const forged = await request(server, 'POST', '/v1/interactions', {
      auth: other.token,
      body: {
        type: 5,
        application_id: applicationId,
        guild_id: guildId,
        channel_id: channelId,
        data: {
          custom_id: 'feedback',
          components: [{ type: 1, components: [{ type: 4, custom_id: 'words', value: 'x' }] }],
        },
      },
    });
    assert.equal(forged.status, 400);
  });

  test('the callback: unknown token 404, a second initial response 400, after 3 s 404', async () => {
    const fake = await request(server, 'POST', `/v1/interactions/123/aW50ZXJhY3Rpb246nope/callback`, {
      body: { type: 4, data: { content: 'x' } },
    });
    assert.equal(fake.status, 404);
    assert.equal(fake.body.code, 'UNKNOWN_INTERACTION');

    // The discord.js bot leaves /admin-only unanswered: a raw session of the bot answers by hand.
    const botGw = await readyClient(server, `Bot ${client.token}`);
    const answerable = async () => {
      assert.equal((await invoke(owner, 'admin-only')).status, 204);
      const created = await botGw.client.next((f) => f.t === 'INTERACTION_CREATE', 10_000);
      return (body: unknown) =>
        request(server, 'POST', `/v1/interactions/${created.d.id}/${created.d.token}/callback`, { body });
    };
    const callback = await answerable();
    const first = await callback({ type: 4, data: { content: 'first' } });
    assert.equal(first.status, 204, first.text);
    const second = await callback({ type: 4, data: { content: 'again' } });
    assert.equal(second.status, 400);
    assert.equal(second.body.code, 'INTERACTION_ALREADY_ACKNOWLEDGED');

    const late = await answerable();
    await harness(server, 'POST', '/clock', { offset_ms: 3_500 });
    try {
      const tooLate = await late({ type: 4, data: { content: 'late' } });
      assert.equal(tooLate.status, 404);
      assert.equal(tooLate.body.code, 'UNKNOWN_INTERACTION');
    } finally {
      await harness(server, 'POST', '/clock', { offset_ms: 0 });
    }
    await botGw.client.close();
  });

  test('command bodies are validated like Discord does', async () => {
    const bot = `Bot ${client.token}`;
    for (const body of [
      { name: 'Upper', description: 'x' },
      { name: 'ok', description: '' },
      {
        name: 'order',
        description: 'x',
        options: [
          { type: 3, name: 'a', description: 'x' },
          { type: 3, name: 'b', description: 'x', required: true },
        ],
      },
      { name: 'ctx', type: 2, description: 'context menus have none' },
    ]) {
      const res = await request(server, 'POST', `/v1/applications/${applicationId}/commands`, { auth: bot, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
    }
    const notMine = await request(server, 'GET', '/v1/applications/123456789012345678/commands', { auth: bot });
    assert.equal(notMine.status, 403);
    const byPerson = await request(server, 'GET', `/v1/applications/${applicationId}/commands`, { auth: owner.token });
    assert.equal(byPerson.status, 403);
  });
});

describe('presence', () => {
  test("a bot's setPresence activities reach the guild's members; invisible shows offline with nothing", async () => {
    client.user?.setPresence({ status: 'dnd', activities: [{ name: 'chess', type: ActivityType.Playing }] });
    // The bot's arrival announced it online first; the setPresence change follows.
    const update = await ownerGw.next(
      (f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === botId && f.d.status !== 'online',
      10_000,
    );
    assert.equal(update.d.status, 'dnd');
    assert.equal(update.d.guild_id, guildId);
    assert.deepEqual(update.d.activities, [{ name: 'chess', type: 0 }]);
    assert.deepEqual(update.d.client_status, { web: 'dnd' });

    client.user?.setPresence({ status: 'invisible', activities: [{ name: 'hidden', type: ActivityType.Playing }] });
    const hidden = await ownerGw.next(
      (f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === botId && f.d.status !== 'online' && f.d.status !== 'dnd',
      10_000,
    );
    assert.equal(hidden.d.status, 'offline');
    assert.deepEqual(hidden.d.activities, []);
    assert.deepEqual(hidden.d.client_status, {});
  });
});
