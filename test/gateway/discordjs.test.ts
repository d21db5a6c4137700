import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, Events, GatewayIntentBits, type Message, Routes, type TextChannel, WebhookClient } from 'discord.js';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * An unmodified discord.js 14 client against Hearth: only the REST base is configured, exactly as a bot author
 * would (discord.js then speaks REST at `/v10/…` and asks the gateway for `v=10`).
 */

let server: TestServer;
let owner: TestUser;
let ownerGw: GatewayClient;
let client: Client | undefined;
let guildId: string;
let channelId: string;
let botToken: string;
let botId: string;

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  ({ client: ownerGw } = await readyClient(server, owner.token));
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Bot Den' } });
  assert.equal(guild.status, 200, guild.text);
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const app = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'Echo' } });
  assert.equal(app.status, 200, app.text);
  botToken = app.body.bot.token;
  botId = app.body.bot.id;
  const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
    auth: owner.token,
    // VIEW_CHANNEL, SEND_MESSAGES, READ_MESSAGE_HISTORY, PIN_MESSAGES
    body: {
      client_id: app.body.id,
      scope: 'bot',
      guild_id: guildId,
      permissions: String((1n << 10n) | (1n << 11n) | (1n << 16n) | (1n << 51n)),
    },
  });
  assert.equal(consent.status, 200, consent.text);
});

after(async () => {
  await client?.destroy();
  await ownerGw?.close();
  await server?.close();
});

test('discord.js logs in with a bot token, gets READY and GUILD_CREATE, and replies to a user', async () => {
  const raw: string[] = [];
  client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: server.url },
  });
  client.on(Events.Raw, (packet: { t?: string | null }) => {
    if (packet.t) raw.push(packet.t);
  });
  client.on(Events.MessageCreate, async (message: Message) => {
    if (message.author.bot || message.content !== '!ping') return;
    await message.reply('pong');
  });
  const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
  await client.login(botToken);
  await ready;

  assert.equal(client.user?.id, botId);
  assert.equal(client.application?.id, botToken.split('.')[0]);
  await waitFor(() => client?.guilds.cache.has(guildId) ?? false);
  assert.ok(raw.includes('READY'));
  assert.ok(raw.includes('GUILD_CREATE'));
  const guild = client.guilds.cache.get(guildId);
  assert.equal(guild?.name, 'Bot Den');
  assert.ok(guild?.channels.cache.has(channelId));

  const sent = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
    auth: owner.token,
    body: { content: '!ping' },
  });
  assert.equal(sent.status, 200, sent.text);
  await waitFor(() => raw.includes('MESSAGE_CREATE'));

  const reply = await ownerGw.next((f) => f.t === 'MESSAGE_CREATE' && f.d.author.id === botId, 10_000);
  assert.equal(reply.d.content, 'pong');
  assert.equal(reply.d.channel_id, channelId);
  assert.equal(reply.d.message_reference?.message_id, sent.body.id);
  assert.equal(reply.d.type, 19);
});

test('discord.js pins and unpins through its current routes, lists pins, and reads @me as it encodes it', async () => {
  assert.ok(client, 'the first test logged the client in');
  const channel = (await client.channels.fetch(channelId)) as TextChannel;
  const message = await channel.send('pin me');
  await message.pin();
  const pins = await channel.messages.fetchPins();
  assert.deepEqual(
    pins.items.map((item) => item.message.id),
    [message.id],
  );
  assert.equal(pins.hasMore, false);
  await message.unpin();
  assert.equal((await channel.messages.fetchPins()).items.length, 0);

  // Routes.user('@me') is `/users/%40me` on the wire.
  const me = (await client.rest.get(Routes.user('@me'))) as { id: string; bot: boolean };
  assert.equal(me.id, botId);
  assert.equal(me.bot, true);
});

test('a webhook carries its execute url, and WebhookClient sends, edits and deletes through it', async () => {
  const created = await request(server, 'POST', `/v1/channels/${channelId}/webhooks`, {
    auth: owner.token,
    body: { name: 'Hook' },
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.url, `${server.url}/v1/webhooks/${created.body.id}/${created.body.token}`);
  const [id, token] = new URL(created.body.url).pathname.split('/').slice(-2);
  assert.equal(id, created.body.id);

  const hook = new WebhookClient({ id: String(id), token: String(token) }, { rest: { api: server.url } });
  const sent = await hook.send({ content: 'from the hook', username: 'Hooky' });
  assert.equal(sent.content, 'from the hook');
  assert.equal(sent.webhook_id, created.body.id);
  const edited = await hook.editMessage(sent.id, { content: 'edited by the hook' });
  assert.equal(edited.content, 'edited by the hook');
  await hook.deleteMessage(sent.id);
  const gone = await request(server, 'GET', `/v1/channels/${channelId}/messages/${sent.id}`, { auth: owner.token });
  assert.equal(gone.status, 404, gone.text);
  assert.equal(gone.body.code, 'UNKNOWN_MESSAGE');
  hook.destroy();
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
