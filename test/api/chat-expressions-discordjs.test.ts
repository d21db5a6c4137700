import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  type GuildEmoji,
  type Sticker,
  StickerFormatType,
  StickerType,
  type TextChannel,
} from 'discord.js';
import sharp from 'sharp';
import { as, join, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** An unmodified discord.js 14 client (only `rest: { api }` set) managing and using a guild's emojis and stickers. */

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let client: Client | undefined;
let guild: any;
let botId: string;
let png: Buffer;
const events: { kind: string; id: string; name: string | null }[] = [];

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  alice = await registerUser(server);
  guild = await ok(as(server, owner, 'POST', '/guilds', { name: 'Emoji Workshop' }));
  await join(server, owner, alice, guild);
  const app = await ok(as(server, owner, 'POST', '/oauth2/applications', { name: 'Emojier' }));
  botId = app.bot.id;
  // VIEW_CHANNEL, SEND_MESSAGES, ADD_REACTIONS, READ_MESSAGE_HISTORY, MANAGE_EXPRESSIONS (MANAGE_GUILD_EXPRESSIONS)
  const permissions = [10n, 11n, 6n, 16n, 30n].reduce((a, bit) => a | (1n << bit), 0n);
  await ok(
    as(server, owner, 'POST', '/oauth2/authorize/consent', {
      client_id: app.id,
      scope: 'bot',
      guild_id: guild.id,
      permissions: permissions.toString(),
    }),
  );
  png = await sharp({ create: { width: 32, height: 32, channels: 4, background: '#22aa44' } })
    .png()
    .toBuffer();
  client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildExpressions, GatewayIntentBits.GuildMessages],
    rest: { api: server.url },
  });
  client.on(Events.GuildEmojiCreate, (emoji: GuildEmoji) =>
    events.push({ kind: 'create', id: emoji.id, name: emoji.name }),
  );
  client.on(Events.GuildEmojiUpdate, (_old: GuildEmoji, emoji: GuildEmoji) =>
    events.push({ kind: 'update', id: emoji.id, name: emoji.name }),
  );
  client.on(Events.GuildEmojiDelete, (emoji: GuildEmoji) =>
    events.push({ kind: 'delete', id: emoji.id, name: emoji.name }),
  );
  client.on(Events.GuildStickerCreate, (sticker: Sticker) =>
    events.push({ kind: 'sticker-create', id: sticker.id, name: sticker.name }),
  );
  client.on(Events.GuildStickerDelete, (sticker: Sticker) =>
    events.push({ kind: 'sticker-delete', id: sticker.id, name: sticker.name }),
  );
  const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
  await client.login(app.bot.token);
  await ready;
  await waitFor(() => client?.guilds.cache.has(guild.id) ?? false);
});

after(async () => {
  await client?.destroy();
  await server?.close();
});

test('guild.emojis.create(), fetch(), fetchAuthor(), edit() and delete() work against Hearth', async () => {
  assert.ok(client);
  const discordGuild = client.guilds.cache.get(guild.id);
  assert.ok(discordGuild);

  const emoji = await discordGuild.emojis.create({ attachment: png, name: 'hearth_ok' });
  assert.match(emoji.id, /^\d+$/);
  assert.equal(emoji.name, 'hearth_ok');
  assert.equal(emoji.animated, false);
  assert.equal(emoji.available, true);
  assert.equal(emoji.managed, false);
  assert.equal(emoji.requiresColons, true);
  assert.equal(emoji.author?.id, botId);
  assert.equal(emoji.toString(), `<:hearth_ok:${emoji.id}>`);
  assert.ok(discordGuild.emojis.cache.has(emoji.id));
  const raw = await ok(as(server, alice, 'GET', `/guilds/${guild.id}/emojis/${emoji.id}`));
  assert.equal(raw.name, 'hearth_ok');

  const fetched = await discordGuild.emojis.fetch();
  assert.deepEqual([...fetched.keys()], [emoji.id]);
  const author = await discordGuild.emojis.fetchAuthor(emoji);
  assert.equal(author.id, botId);

  const edited = await emoji.edit({ name: 'hearth_renamed' });
  assert.equal(edited.name, 'hearth_renamed');
  const onServer = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/emojis/${emoji.id}`));
  assert.equal(onServer.name, 'hearth_renamed');

  await emoji.delete();
  const gone = await as(server, owner, 'GET', `/guilds/${guild.id}/emojis/${emoji.id}`);
  assert.equal(gone.body.code, 'UNKNOWN_EMOJI');
  await waitFor(() => events.some((e) => e.kind === 'delete' && e.id === emoji.id));
  assert.equal(discordGuild.emojis.cache.has(emoji.id), false);
});

test('emojis made by someone else arrive through GUILD_EMOJIS_UPDATE as emojiCreate / emojiUpdate / emojiDelete', async () => {
  assert.ok(client);
  const discordGuild = client.guilds.cache.get(guild.id);
  assert.ok(discordGuild);
  const image = `data:image/png;base64,${png.toString('base64')}`;
  const made = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/emojis`, { name: 'from_owner', image }));
  await waitFor(() => events.some((e) => e.kind === 'create' && e.id === made.id));
  assert.equal(discordGuild.emojis.cache.get(made.id)?.name, 'from_owner');
  await ok(as(server, owner, 'PATCH', `/guilds/${guild.id}/emojis/${made.id}`, { name: 'owner_renamed' }));
  await waitFor(() => events.some((e) => e.kind === 'update' && e.id === made.id && e.name === 'owner_renamed'));
  assert.equal((await as(server, owner, 'DELETE', `/guilds/${guild.id}/emojis/${made.id}`)).status, 204);
  await waitFor(() => events.some((e) => e.kind === 'delete' && e.id === made.id));
});

test('message.react() with a custom emoji, and an unknown one is refused with Unknown Emoji', async () => {
  assert.ok(client);
  const discordGuild = client.guilds.cache.get(guild.id);
  assert.ok(discordGuild);
  const emoji = await discordGuild.emojis.create({ attachment: png, name: 'reacty' });
  const channel = (await client.channels.fetch(guild.system_channel_id)) as TextChannel;
  const message = await channel.send(`look ${emoji}`);
  assert.equal(message.content, `look <:reacty:${emoji.id}>`);
  const reaction = await message.react(emoji);
  assert.equal(reaction.emoji.id, emoji.id);
  const seen = await ok(as(server, alice, 'GET', `/channels/${channel.id}/messages/${message.id}`));
  assert.deepEqual(seen.reactions, [{ emoji: { id: emoji.id, name: 'reacty', animated: false }, count: 1, me: false }]);

  await assert.rejects(message.react('nothing:123456789012345678'), (error: unknown) => {
    assert.ok(error instanceof DiscordAPIError);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'UNKNOWN_EMOJI');
    return true;
  });
});

test('guild.stickers.create() (multipart), edit(), channel.send({ stickers }) and delete()', async () => {
  assert.ok(client);
  const discordGuild = client.guilds.cache.get(guild.id);
  assert.ok(discordGuild);
  const sticker = await discordGuild.stickers.create({ file: png, name: 'Hearth Sticker', tags: 'fire' });
  assert.match(sticker.id, /^\d+$/);
  assert.equal(sticker.name, 'Hearth Sticker');
  assert.equal(sticker.tags, 'fire');
  assert.equal(sticker.description, null);
  assert.equal(sticker.type, StickerType.Guild);
  assert.equal(sticker.format, StickerFormatType.PNG);
  assert.equal(sticker.guildId, guild.id);
  assert.equal(sticker.user?.id, botId);
  await waitFor(() => events.some((e) => e.kind === 'sticker-create' && e.id === sticker.id));
  const fetched = await discordGuild.stickers.fetch();
  assert.deepEqual([...fetched.keys()], [sticker.id]);

  const edited = await sticker.edit({ name: 'Renamed Sticker', description: 'warm' });
  assert.equal(edited.name, 'Renamed Sticker');
  assert.equal(edited.description, 'warm');

  const channel = (await client.channels.fetch(guild.system_channel_id)) as TextChannel;
  const message = await channel.send({ stickers: [sticker] });
  assert.deepEqual([...message.stickers.keys()], [sticker.id]);
  assert.equal(message.stickers.get(sticker.id)?.name, 'Renamed Sticker');
  const raw = await ok(as(server, alice, 'GET', `/channels/${channel.id}/messages/${message.id}`));
  assert.deepEqual(raw.sticker_items, [{ id: sticker.id, name: 'Renamed Sticker', format_type: 1 }]);

  await sticker.delete();
  await waitFor(() => events.some((e) => e.kind === 'sticker-delete' && e.id === sticker.id));
  const gone = await as(server, owner, 'GET', `/guilds/${guild.id}/stickers/${sticker.id}`);
  assert.equal(gone.body.code, 'UNKNOWN_STICKER');
});
