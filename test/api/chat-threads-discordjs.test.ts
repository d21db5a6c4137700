import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ChannelType, Client, Events, GatewayIntentBits, type TextChannel, type ThreadChannel } from 'discord.js';
import { as, join, ok } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** An unmodified discord.js 14 client (only `rest: { api }` set) using threads against Hearth. */

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let client: Client | undefined;
let guild: any;
let channelId: string;
let botToken: string;
let botId: string;
const created: { id: string; newlyCreated: boolean }[] = [];

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  alice = await registerUser(server);
  guild = await ok(as(server, owner, 'POST', '/guilds', { name: 'Thread Den' }));
  channelId = guild.system_channel_id;
  await join(server, owner, alice, guild);
  const app = await ok(as(server, owner, 'POST', '/oauth2/applications', { name: 'Threader' }));
  botToken = app.bot.token;
  botId = app.bot.id;
  // VIEW_CHANNEL, SEND_MESSAGES, READ_MESSAGE_HISTORY, CREATE_PUBLIC_THREADS, CREATE_PRIVATE_THREADS,
  // SEND_MESSAGES_IN_THREADS
  const permissions = [10n, 11n, 16n, 35n, 36n, 38n].reduce((a, bit) => a | (1n << bit), 0n);
  await ok(
    as(server, owner, 'POST', '/oauth2/authorize/consent', {
      client_id: app.id,
      scope: 'bot',
      guild_id: guild.id,
      permissions: permissions.toString(),
    }),
  );
  client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: server.url },
  });
  client.on(Events.ThreadCreate, (thread: ThreadChannel, newlyCreated: boolean) => {
    created.push({ id: thread.id, newlyCreated });
  });
  const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
  await client.login(botToken);
  await ready;
  await waitFor(() => client?.guilds.cache.has(guild.id) ?? false);
});

after(async () => {
  await client?.destroy();
  await server?.close();
});

async function textChannel(): Promise<TextChannel> {
  assert.ok(client);
  return (await client.channels.fetch(channelId)) as TextChannel;
}

test('message.startThread() makes a thread with the message id, and the client receives threadCreate', async () => {
  const channel = await textChannel();
  const message = await channel.send('shall we thread?');
  const thread = await message.startThread({ name: 'From a message' });
  assert.equal(thread.id, message.id);
  assert.equal(thread.type, ChannelType.PublicThread);
  assert.equal(thread.parentId, channelId);
  assert.equal(thread.ownerId, botId);
  assert.equal(thread.archived, false);
  await waitFor(() => created.some((c) => c.id === thread.id));
  assert.equal(created.find((c) => c.id === thread.id)?.newlyCreated, true);
  assert.equal(client?.channels.cache.get(thread.id)?.isThread(), true);
});

test('channel.threads.create(), thread.send(), thread.members.add() and thread.setArchived(true)', async () => {
  const channel = await textChannel();
  const thread = await channel.threads.create({ name: 'Standalone' });
  assert.equal(thread.type, ChannelType.PublicThread);
  assert.equal(thread.name, 'Standalone');

  const sent = await thread.send('inside the thread');
  assert.equal(sent.channelId, thread.id);
  const seen = await ok(as(server, alice, 'GET', `/channels/${thread.id}/messages`));
  assert.equal(seen[0].content, 'inside the thread');

  await thread.members.add(alice.id);
  const member = await ok(as(server, alice, 'GET', `/channels/${thread.id}/thread-members/${alice.id}`));
  assert.equal(member.user_id, alice.id);

  await thread.setArchived(true);
  assert.equal(thread.archived, true);
  const fetched = await ok(as(server, alice, 'GET', `/channels/${thread.id}`));
  assert.equal(fetched.thread_metadata.archived, true);

  const priv = await channel.threads.create({ name: 'Private', type: ChannelType.PrivateThread, invitable: false });
  assert.equal(priv.type, ChannelType.PrivateThread);
  assert.equal(priv.invitable, false);
  const hidden = await request(server, 'GET', `/v1/channels/${priv.id}`, { auth: alice.token });
  assert.equal(hidden.status, 403);
});

test('guild.channels.fetchActiveThreads() lists the active threads only', async () => {
  assert.ok(client);
  const discordGuild = client.guilds.cache.get(guild.id);
  assert.ok(discordGuild);
  const channel = await textChannel();
  const open = await channel.threads.create({ name: 'Still open' });
  const closed = await channel.threads.create({ name: 'Closing' });
  await closed.setArchived(true);
  const active = await discordGuild.channels.fetchActiveThreads();
  assert.ok(active.threads.has(open.id));
  assert.equal(active.threads.has(closed.id), false);
  assert.ok(active.members.size > 0);
});

test('thread.members.fetch(), join/leave, and threadUpdate / threadMembersUpdate reach the client', async () => {
  assert.ok(client);
  const channel = await textChannel();
  const updates: string[] = [];
  const memberUpdates: { added: string[]; removed: string[] }[] = [];
  client.on(Events.ThreadUpdate, (_old: ThreadChannel, thread: ThreadChannel) => {
    updates.push(`${thread.id}:${thread.name}`);
  });
  client.on(Events.ThreadMembersUpdate, (added, removed) => {
    memberUpdates.push({ added: [...added.keys()], removed: [...removed.keys()] });
  });
  const thread = await channel.threads.create({ name: 'Roll call' });
  await ok(as(server, alice, 'PUT', `/channels/${thread.id}/thread-members/@me`), 204);
  await waitFor(() => memberUpdates.some((u) => u.added.includes(alice.id)));
  const members = await thread.members.fetch();
  assert.deepEqual([...members.keys()].sort(), [botId, alice.id].sort());
  await thread.leave();
  const after = await ok(as(server, alice, 'GET', `/channels/${thread.id}/thread-members`));
  assert.deepEqual(
    after.map((m: any) => m.user_id),
    [alice.id],
  );
  await thread.join();
  await thread.setName('Roll call, renamed');
  await waitFor(() => updates.includes(`${thread.id}:Roll call, renamed`));
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
