import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AttachmentBuilder, Client, Events, GatewayIntentBits, type TextChannel } from 'discord.js';
import sharp from 'sharp';
import { as, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * An unmodified discord.js 14 client (only `rest: { api }` set) sending and editing files: the strict pairing of
 * `files[n]` with `attachments` entries (issue 16) must keep working for it.
 */

let server: TestServer;
let owner: TestUser;
let client: Client | undefined;
let channelId: string;
let png: Buffer;

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  const guild = await ok(as(server, owner, 'POST', '/guilds', { name: 'Files' }));
  channelId = guild.system_channel_id;
  const app = await ok(as(server, owner, 'POST', '/oauth2/applications', { name: 'Uploader' }));
  // VIEW_CHANNEL, SEND_MESSAGES, ATTACH_FILES, READ_MESSAGE_HISTORY
  const permissions = [10n, 11n, 15n, 16n].reduce((a, bit) => a | (1n << bit), 0n);
  await ok(
    as(server, owner, 'POST', '/oauth2/authorize/consent', {
      client_id: app.id,
      scope: 'bot',
      guild_id: guild.id,
      permissions: permissions.toString(),
    }),
  );
  png = await sharp({ create: { width: 5, height: 3, channels: 3, background: '#445566' } })
    .png()
    .toBuffer();
  client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: server.url } });
  const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
  await client.login(app.bot.token);
  await ready;
});

after(async () => {
  await client?.destroy();
  await server?.close();
});

test('channel.send({ files }) and message.edit({ attachments: [kept], files: [new] })', async () => {
  assert.ok(client);
  const channel = (await client.channels.fetch(channelId)) as TextChannel;
  const message = await channel.send({
    content: 'two files',
    files: [
      new AttachmentBuilder(png, { name: 'one.png', description: 'first' }),
      new AttachmentBuilder(Buffer.from('hello'), { name: 'two.txt' }),
    ],
  });
  const sent = [...message.attachments.values()];
  assert.deepEqual(
    sent.map((a) => a.name),
    ['one.png', 'two.txt'],
  );
  assert.equal(sent[0]?.description, 'first');
  assert.equal(sent[0]?.width, 5);

  const kept = sent[1];
  assert.ok(kept);
  const edited = await message.edit({
    content: 'one kept, one new',
    attachments: [kept],
    files: [new AttachmentBuilder(png, { name: 'three.png' })],
  });
  assert.deepEqual(
    [...edited.attachments.values()].map((a) => a.name),
    ['two.txt', 'three.png'],
  );
  assert.equal(edited.attachments.get(kept.id)?.url, kept.url);
  const media = await fetch(kept.url);
  assert.equal(await media.text(), 'hello');
});
