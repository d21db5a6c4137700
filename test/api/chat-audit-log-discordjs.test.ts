import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  AuditLogEvent,
  Client,
  Events,
  GatewayIntentBits,
  type Guild,
  type GuildAuditLogsEntry,
  GuildEmoji,
  Role,
  type TextChannel,
  User,
} from 'discord.js';
import sharp from 'sharp';
import { as, join, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** An unmodified discord.js 14 client (only `rest: { api }` set) reading the guild audit log. */

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let client: Client | undefined;
let guildRow: any;
let botId: string;
const streamed: GuildAuditLogsEntry[] = [];

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  alice = await registerUser(server);
  bob = await registerUser(server);
  guildRow = await ok(as(server, owner, 'POST', '/guilds', { name: 'Audit Den' }));
  await join(server, owner, alice, guildRow);
  await join(server, owner, bob, guildRow);
  const app = await ok(as(server, owner, 'POST', '/oauth2/applications', { name: 'Auditor' }));
  botId = app.bot.id;
  // KICK_MEMBERS, BAN_MEMBERS, MANAGE_CHANNELS, VIEW_AUDIT_LOG, VIEW_CHANNEL, SEND_MESSAGES, READ_MESSAGE_HISTORY,
  // MANAGE_ROLES
  const permissions = [1n, 2n, 4n, 7n, 10n, 11n, 16n, 28n].reduce((a, bit) => a | (1n << bit), 0n);
  await ok(
    as(server, owner, 'POST', '/oauth2/authorize/consent', {
      client_id: app.id,
      scope: 'bot',
      guild_id: guildRow.id,
      permissions: permissions.toString(),
    }),
  );
  client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildModeration],
    rest: { api: server.url },
  });
  client.on(Events.GuildAuditLogEntryCreate, (entry) => {
    streamed.push(entry);
  });
  const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
  await client.login(app.bot.token);
  await ready;
  await waitFor(() => client?.guilds.cache.has(guildRow.id) ?? false);
});

after(async () => {
  await client?.destroy();
  await server?.close();
});

function guild(): Guild {
  const found = client?.guilds.cache.get(guildRow.id);
  assert.ok(found);
  return found;
}

test('guild.fetchAuditLogs() lists the bot install with executor and target resolved', async () => {
  const logs = await guild().fetchAuditLogs({ type: AuditLogEvent.BotAdd });
  assert.equal(logs.entries.size, 1);
  const entry = logs.entries.first() as GuildAuditLogsEntry;
  assert.equal(entry.action, AuditLogEvent.BotAdd);
  assert.ok(entry.executor instanceof User);
  assert.equal(entry.executor?.id, owner.id);
  assert.equal(entry.executor?.username, owner.username);
  assert.ok(entry.target instanceof User);
  assert.equal((entry.target as User).id, botId);
  assert.equal(entry.reason, null);
});

test('a kick made over HTTP with a reason comes back as a MemberKick entry', async () => {
  await ok(
    as(server, owner, 'DELETE', `/guilds/${guildRow.id}/members/${alice.id}`, undefined, {
      'X-Audit-Log-Reason': encodeURIComponent('off-topic, twice'),
    }),
    204,
  );
  const logs = await guild().fetchAuditLogs({ type: AuditLogEvent.MemberKick });
  const entry = logs.entries.first() as GuildAuditLogsEntry;
  assert.equal(entry.actionType, 'Delete');
  assert.equal(entry.targetType, 'User');
  assert.equal(entry.executorId, owner.id);
  assert.equal(entry.executor?.id, owner.id);
  assert.ok(entry.target instanceof User);
  assert.equal((entry.target as User).id, alice.id);
  assert.equal((entry.target as User).username, alice.username);
  assert.equal(entry.reason, 'off-topic, twice');
});

test("the bot's own changes carry its reasons: roles, channels, bans", async () => {
  const role = await guild().roles.create({ name: 'Watchers', reason: 'new team' });
  const roleLogs = await guild().fetchAuditLogs({ type: AuditLogEvent.RoleCreate, user: botId });
  const roleEntry = roleLogs.entries.first() as GuildAuditLogsEntry;
  assert.equal(roleEntry.executor?.id, botId);
  assert.ok(roleEntry.target instanceof Role);
  assert.equal((roleEntry.target as Role).id, role.id);
  assert.equal(roleEntry.reason, 'new team');
  assert.deepEqual(
    roleEntry.changes.find((c) => c.key === 'name'),
    { key: 'name', new: 'Watchers' },
  );

  const channel = (await guild().channels.create({ name: 'mod-log', reason: 'for the log' })) as TextChannel;
  await channel.setName('moderation', 'clearer');
  const updates = await guild().fetchAuditLogs({ type: AuditLogEvent.ChannelUpdate });
  const update = updates.entries.first() as GuildAuditLogsEntry;
  assert.equal(update.targetType, 'Channel');
  assert.equal((update.target as TextChannel).id, channel.id);
  assert.equal(update.reason, 'clearer');
  assert.deepEqual(update.changes, [{ key: 'name', old: 'mod-log', new: 'moderation' }]);
  const created = await guild().fetchAuditLogs({ type: AuditLogEvent.ChannelCreate });
  assert.equal((created.entries.first() as GuildAuditLogsEntry).reason, 'for the log');

  await guild().bans.create(bob.id, { reason: 'raid' });
  const bans = await guild().fetchAuditLogs({ type: AuditLogEvent.MemberBanAdd });
  const ban = bans.entries.first() as GuildAuditLogsEntry;
  assert.equal(ban.actionType, 'Delete');
  assert.equal(ban.executor?.id, botId);
  assert.equal((ban.target as User).id, bob.id);
  assert.equal(ban.reason, 'raid');
});

test('an emoji made by the bot comes back as an EmojiCreate entry whose target is the GuildEmoji', async () => {
  const png = await sharp({ create: { width: 32, height: 32, channels: 4, background: '#3366ff' } })
    .png()
    .toBuffer();
  const emoji = await guild().emojis.create({ attachment: png, name: 'audited', reason: 'mascot' });
  const logs = await guild().fetchAuditLogs({ type: AuditLogEvent.EmojiCreate });
  const entry = logs.entries.first() as GuildAuditLogsEntry;
  assert.equal(entry.targetType, 'Emoji');
  assert.ok(entry.target instanceof GuildEmoji);
  assert.equal((entry.target as GuildEmoji).id, emoji.id);
  assert.equal(entry.executor?.id, botId);
  assert.equal(entry.reason, 'mascot');
  assert.deepEqual(entry.changes, [{ key: 'name', new: 'audited' }]);
});

test('fetchAuditLogs pages with limit and before, newest first', async () => {
  const all = await guild().fetchAuditLogs();
  assert.ok(all.entries.size >= 6);
  const ids = [...all.entries.keys()];
  const firstTwo = await guild().fetchAuditLogs({ limit: 2 });
  assert.deepEqual([...firstTwo.entries.keys()], ids.slice(0, 2));
  const nextTwo = await guild().fetchAuditLogs({ limit: 2, before: ids[1] });
  assert.deepEqual([...nextTwo.entries.keys()], ids.slice(2, 4));
  const byOwner = await guild().fetchAuditLogs({ user: owner.id });
  assert.ok(byOwner.entries.size > 0);
  assert.ok(byOwner.entries.every((e) => e.executorId === owner.id));
});

test('guildAuditLogEntryCreate reaches the bot, which holds VIEW_AUDIT_LOG', async () => {
  await ok(
    as(server, owner, 'PATCH', `/guilds/${guildRow.id}`, { name: 'Audit Den II' }, { 'X-Audit-Log-Reason': 'rebrand' }),
  );
  await waitFor(() => streamed.some((e) => e.action === AuditLogEvent.GuildUpdate));
  const entry = streamed.find((e) => e.action === AuditLogEvent.GuildUpdate) as GuildAuditLogsEntry;
  assert.equal(entry.targetType, 'Guild');
  assert.equal(entry.targetId, guildRow.id);
  assert.equal(entry.reason, 'rebrand');
  assert.deepEqual(entry.changes, [{ key: 'name', old: 'Audit Den', new: 'Audit Den II' }]);
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
