import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { APIApplication, APIApplicationCommand } from 'discord-api-types/v10';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The application command index (docs/bots.md): what the web client's slash-command picker lists. Only the
 * commands of applications installed in the guild (bot members) and only those the person may use, by the
 * same rule invocation applies (`default_member_permissions`, then the guild's overrides).
 */

type IndexApplication = Pick<APIApplication, 'id' | 'name' | 'icon' | 'description'> & { bot_id?: string };
interface CommandIndex {
  applications: IndexApplication[];
  application_commands: APIApplicationCommand[];
  version: string;
}

const BAN_MEMBERS = 1n << 2n;
const ROLE = 1;
const USER = 2;
const CHANNEL = 3;

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let guildId: string;
let channelId: string;
let otherChannelId: string;
let app: { id: string; bot: string; botUserId: string; name: string };
let stranger: { id: string; bot: string };
const ids = new Map<string, string>();

async function createApp(name: string) {
  const created = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name } });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id as string, bot: `Bot ${created.body.bot.token}`, botUserId: created.body.bot.id };
}

const index = (user: TestUser, path: string) => request<CommandIndex>(server, 'GET', path, { auth: user.token });
const names = (body: CommandIndex) => body.application_commands.map((c) => c.name).sort();

function invoke(user: TestUser, name: string, channel = channelId) {
  return request(server, 'POST', '/v1/interactions', {
    auth: user.token,
    body: {
      type: 2,
      application_id: app.id,
      guild_id: guildId,
      channel_id: channel,
      data: { id: ids.get(name), name, type: 1, options: [] },
    },
  });
}

before(async () => {
  server = await startTestServer();
  [owner, member, outsider] = await Promise.all([registerUser(server), registerUser(server), registerUser(server)]);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Index Den' } });
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const other = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
    auth: owner.token,
    body: { name: 'quiet', type: 0 },
  });
  otherChannelId = other.body.id;
  const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, { auth: owner.token, body: {} });
  assert.equal((await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token })).status, 200);

  const made = await createApp('Indexer');
  const consent = await request(server, 'POST', '/v1/oauth2/authorize/consent', {
    auth: owner.token,
    body: { client_id: made.id, scope: 'bot', guild_id: guildId, permissions: String((1n << 10n) | (1n << 11n)) },
  });
  assert.equal(consent.status, 200, consent.text);
  app = { ...made, name: 'Indexer' };
  const global = await request(server, 'PUT', `/v1/applications/${app.id}/commands`, {
    auth: app.bot,
    body: [
      { name: 'ping', description: 'Replies pong' },
      { name: 'ban', description: 'Bans someone', default_member_permissions: String(BAN_MEMBERS) },
      { name: 'hidden', description: 'Not for everyone' },
      { name: 'guildonly', description: 'Never in DMs', dm_permission: false },
      { type: 2, name: 'Wave at' },
    ],
  });
  assert.equal(global.status, 200, global.text);
  for (const c of global.body) ids.set(c.name, c.id);
  const local = await request(server, 'POST', `/v1/applications/${app.id}/guilds/${guildId}/commands`, {
    auth: app.bot,
    body: { name: 'local', description: 'Only here' },
  });
  assert.equal(local.status, 201, local.text);
  ids.set('local', local.body.id);
  // An application that has commands but whose bot is in no guild of these people.
  stranger = await createApp('Stranger');
  const theirs = await request(server, 'PUT', `/v1/applications/${stranger.id}/commands`, {
    auth: stranger.bot,
    body: [{ name: 'elsewhere', description: 'Not installed here' }],
  });
  assert.equal(theirs.status, 200, theirs.text);
});

after(async () => {
  await server?.close();
});

describe('GET /guilds/{id}/application-command-index', () => {
  test("lists the installed application and its commands in discord-api-types' shape", async () => {
    const res = await index(owner, `/v1/guilds/${guildId}/application-command-index`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.applications, [
      { id: app.id, name: 'Indexer', icon: null, description: '', bot_id: app.botUserId },
    ]);
    // The owner may use everything; the stranger's command is not there.
    assert.deepEqual(names(res.body), ['Wave at', 'ban', 'guildonly', 'hidden', 'local', 'ping']);
    // Each command is the same object the application's own routes return.
    const own = await request(server, 'GET', `/v1/applications/${app.id}/commands`, { auth: app.bot });
    const ownLocal = await request(server, 'GET', `/v1/applications/${app.id}/guilds/${guildId}/commands`, {
      auth: app.bot,
    });
    const expected = [...own.body, ...ownLocal.body].sort((a, b) => a.name.localeCompare(b.name));
    const listed = [...res.body.application_commands].sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(listed, expected);
    const local = listed.find((c) => c.name === 'local');
    assert.equal(local?.guild_id, guildId);
    // The version is the newest command version.
    const newest = expected.map((c: APIApplicationCommand) => BigInt(c.version)).reduce((a, b) => (a > b ? a : b));
    assert.equal(res.body.version, String(newest));
  });

  test('default_member_permissions hides a command from a member without the permission', async () => {
    const res = await index(member, `/v1/guilds/${guildId}/application-command-index`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res.body), ['Wave at', 'guildonly', 'hidden', 'local', 'ping']);
    // Invocation agrees.
    const denied = await invoke(member, 'ban');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await invoke(member, 'ping')).status, 204);
  });

  test('the guild overrides filter the index as they filter invocation', async () => {
    const put = (commandId: string, permissions: unknown[]) =>
      request(server, 'PUT', `/v1/applications/${app.id}/guilds/${guildId}/commands/${commandId}/permissions`, {
        auth: app.bot,
        body: { permissions },
      });
    // A user entry denies `hidden` to the member alone.
    assert.equal(
      (await put(ids.get('hidden') as string, [{ id: member.id, type: USER, permission: false }])).status,
      200,
    );
    // A role entry lets a role's holders use `ban` without BAN_MEMBERS.
    const role = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
      auth: owner.token,
      body: { name: 'deputies', permissions: '0' },
    });
    assert.equal(role.status, 200, role.text);
    assert.equal(
      (await put(ids.get('ban') as string, [{ id: role.body.id, type: ROLE, permission: true }])).status,
      200,
    );
    // A channel entry keeps `local` out of one channel.
    assert.equal(
      (await put(ids.get('local') as string, [{ id: otherChannelId, type: CHANNEL, permission: false }])).status,
      200,
    );

    const before = await index(member, `/v1/guilds/${guildId}/application-command-index`);
    assert.deepEqual(names(before.body), ['Wave at', 'guildonly', 'local', 'ping']);
    assert.equal((await invoke(member, 'hidden')).body.code, 'MISSING_PERMISSIONS');
    const ownerView = await index(owner, `/v1/guilds/${guildId}/application-command-index`);
    assert.ok(names(ownerView.body).includes('hidden'));

    assert.equal(
      (
        await request(server, 'PUT', `/v1/guilds/${guildId}/members/${member.id}/roles/${role.body.id}`, {
          auth: owner.token,
        })
      ).status,
      204,
    );
    const after = await index(member, `/v1/guilds/${guildId}/application-command-index`);
    assert.deepEqual(names(after.body), ['Wave at', 'ban', 'guildonly', 'local', 'ping']);
    assert.equal((await invoke(member, 'ban')).status, 204);

    // The channel's index applies the channel entries; the guild's does not know the channel.
    const here = await index(member, `/v1/channels/${channelId}/application-command-index`);
    assert.equal(here.status, 200, here.text);
    assert.deepEqual(names(here.body), ['Wave at', 'ban', 'guildonly', 'local', 'ping']);
    const there = await index(member, `/v1/channels/${otherChannelId}/application-command-index`);
    assert.deepEqual(names(there.body), ['Wave at', 'ban', 'guildonly', 'ping']);
    assert.equal((await invoke(member, 'local', otherChannelId)).body.code, 'MISSING_PERMISSIONS');
    assert.equal((await invoke(member, 'local', channelId)).status, 204);

    // The application-wide default (the application's id) governs commands without their own list.
    assert.equal((await put(app.id, [{ id: guildId, type: ROLE, permission: false }])).status, 200);
    const restricted = await index(member, `/v1/guilds/${guildId}/application-command-index`);
    assert.deepEqual(names(restricted.body), ['ban', 'local']);
    assert.equal((await invoke(member, 'ping')).body.code, 'MISSING_PERMISSIONS');
    assert.equal((await put(app.id, [])).status, 200);
  });

  test('an application without a bot in the guild is not listed; a guild without one lists nothing', async () => {
    const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Empty' } });
    const res = await index(owner, `/v1/guilds/${guild.body.id}/application-command-index`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { applications: [], application_commands: [], version: '0' });
  });

  test('denials: non-members, unknown guilds, bots and anonymous callers', async () => {
    const outside = await index(outsider, `/v1/guilds/${guildId}/application-command-index`);
    assert.equal(outside.status, 403);
    assert.equal((outside.body as any).code, 'MISSING_ACCESS');
    const unknown = await index(outsider, '/v1/guilds/123456789012345678/application-command-index');
    assert.equal(unknown.status, 404);
    assert.equal((unknown.body as any).code, 'UNKNOWN_GUILD');
    const garbage = await index(outsider, '/v1/guilds/nope/application-command-index');
    assert.equal(garbage.status, 404);
    assert.equal((garbage.body as any).code, 'UNKNOWN_GUILD');
    const channel = await index(outsider, `/v1/channels/${channelId}/application-command-index`);
    assert.equal(channel.status, 403);
    assert.equal((channel.body as any).code, 'MISSING_ACCESS');
    const noChannel = await index(outsider, '/v1/channels/123456789012345678/application-command-index');
    assert.equal(noChannel.status, 404);
    assert.equal((noChannel.body as any).code, 'UNKNOWN_CHANNEL');
    const bot = await request(server, 'GET', `/v1/guilds/${guildId}/application-command-index`, { auth: app.bot });
    assert.equal(bot.status, 403);
    assert.equal(bot.body.code, 'ACCESS_DENIED');
    const anonymous = await request(server, 'GET', `/v1/guilds/${guildId}/application-command-index`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'UNAUTHORIZED');
  });
});

describe('GET /channels/{id}/application-command-index in a DM', () => {
  test("lists the bot's global commands that allow DMs; guild commands and other bots' are absent", async () => {
    const dm = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: member.token,
      body: { recipient_id: app.botUserId },
    });
    assert.equal(dm.status, 200, dm.text);
    const res = await index(member, `/v1/channels/${dm.body.id}/application-command-index`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.applications, [
      { id: app.id, name: 'Indexer', icon: null, description: '', bot_id: app.botUserId },
    ]);
    assert.deepEqual(names(res.body), ['Wave at', 'ban', 'hidden', 'ping']);
    const outside = await request(server, 'GET', `/v1/channels/${dm.body.id}/application-command-index`, {
      auth: outsider.token,
    });
    assert.equal(outside.status, 403);
    assert.equal(outside.body.code, 'MISSING_ACCESS');
    // A DM between two people has no applications.
    const people = await request(server, 'POST', '/v1/users/@me/channels', {
      auth: member.token,
      body: { recipient_id: owner.id },
    });
    const none = await index(member, `/v1/channels/${people.body.id}/application-command-index`);
    assert.deepEqual(none.body, { applications: [], application_commands: [], version: '0' });
  });
});
