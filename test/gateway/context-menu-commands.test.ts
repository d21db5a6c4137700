import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addBotToGuild } from '../support/applications.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * User and message commands (docs/bots.md#user-and-message-commands): registered without description or
 * options, names with spaces and capitals; invoked with a `target_id`, the bot receives discord-api-types'
 * APIUserApplicationCommandInteractionData / APIMessageApplicationCommandInteractionData and answers as for a
 * slash command.
 */

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let memberGw: GatewayClient;
let botGw: GatewayClient;
let bot: string;
let guildId: string;
let channelId: string;
let otherChannelId: string;
let applicationId: string;
let userCmd: string;
let messageCmd: string;
let slashCmd: string;

const FORM = { code: 'INVALID_FORM_BODY', message: 'Invalid form body' };

before(async () => {
  server = await startTestServer();
  [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Menus' } });
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const other = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
    auth: owner.token,
    body: { name: 'other', type: 0 },
  });
  otherChannelId = other.body.id;
  const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, { auth: owner.token, body: {} });
  assert.equal((await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token })).status, 200);
  const app = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'Menu' } });
  applicationId = app.body.id;
  bot = `Bot ${app.body.bot.token}`;
  await addBotToGuild(server, owner, applicationId, guildId);
  ({ client: memberGw } = await readyClient(server, member.token));
  ({ client: botGw } = await readyClient(server, app.body.bot.token));
});

after(async () => {
  await memberGw?.close();
  await botGw?.close();
  await server?.close();
});

function invoke(data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return request(server, 'POST', '/v1/interactions', {
    auth: member.token,
    body: { type: 2, application_id: applicationId, guild_id: guildId, channel_id: channelId, ...extra, data },
  });
}

const interactionFor = (name: string) => (f: Frame) =>
  f.t === 'INTERACTION_CREATE' && (f.d as { data?: { name?: string } }).data?.name === name;

describe('user and message commands', () => {
  it('registers with spaces and capitals kept, no description, no options', async () => {
    const put = await request(server, 'PUT', `/v1/applications/${applicationId}/guilds/${guildId}/commands`, {
      auth: bot,
      body: [
        { type: 2, name: 'High Five' },
        { type: 3, name: 'Report Message' },
        { type: 1, name: 'ping', description: 'Pong' },
      ],
    });
    assert.equal(put.status, 200, put.text);
    const byName = (n: string) => put.body.find((c: { name: string }) => c.name === n);
    userCmd = byName('High Five').id;
    messageCmd = byName('Report Message').id;
    slashCmd = byName('ping').id;
    assert.deepEqual(byName('High Five'), {
      id: userCmd,
      application_id: applicationId,
      guild_id: guildId,
      version: byName('High Five').version,
      type: 2,
      name: 'High Five',
      name_localizations: null,
      description: '',
      description_localizations: null,
      default_member_permissions: null,
      dm_permission: true,
      contexts: null,
      integration_types: [0],
      nsfw: false,
    });
    assert.equal(byName('Report Message').type, 3);
    assert.equal(byName('Report Message').description, '');
    // The index the web client reads lists them with the slash command.
    const index = await request(server, 'GET', `/v1/channels/${channelId}/application-command-index`, {
      auth: member.token,
    });
    assert.equal(index.status, 200);
    assert.deepEqual(
      index.body.application_commands.map((c: { name: string; type: number }) => [c.type, c.name]).sort(),
      [
        [1, 'ping'],
        [2, 'High Five'],
        [3, 'Report Message'],
      ],
    );
  });

  it('refuses a description, options or a name over 32 characters on a context-menu command', async () => {
    const url = `/v1/applications/${applicationId}/commands`;
    const described = await request(server, 'POST', url, {
      auth: bot,
      body: { type: 3, name: 'Quote', description: 'Quotes' },
    });
    assert.equal(described.status, 400);
    assert.deepEqual(described.body, {
      ...FORM,
      errors: [{ path: 'description', code: 'INVALID_FORMAT', message: 'Context-menu commands have no description' }],
    });
    const long = await request(server, 'POST', url, { auth: bot, body: { type: 2, name: 'A'.repeat(33) } });
    assert.equal(long.status, 400);
    assert.equal(long.body.code, 'INVALID_FORM_BODY');
    assert.deepEqual(
      long.body.errors.map((e: { path: string }) => e.path),
      ['name'],
    );
    const exactly = await request(server, 'POST', url, { auth: bot, body: { type: 2, name: `Say ${'b'.repeat(28)}` } });
    assert.equal(exactly.status, 201, exactly.text);
    assert.equal(exactly.body.name, `Say ${'b'.repeat(28)}`);
  });

  it('a user command reaches the bot with target_id and the resolved user and member; its reply reaches the channel', async () => {
    const sent = await invoke({ id: userCmd, name: 'High Five', type: 2, target_id: owner.id });
    assert.equal(sent.status, 204, sent.text);
    const d = (await botGw.next(interactionFor('High Five'))).d as any;
    const target = await request(server, 'GET', `/v1/guilds/${guildId}/members/${owner.id}`, { auth: owner.token });
    assert.deepEqual(d.data, {
      id: userCmd,
      name: 'High Five',
      type: 2,
      guild_id: guildId,
      target_id: owner.id,
      resolved: {
        users: { [owner.id]: target.body.user },
        members: {
          [owner.id]: {
            avatar: null,
            banner: null,
            communication_disabled_until: null,
            flags: 0,
            joined_at: target.body.joined_at,
            nick: null,
            pending: false,
            premium_since: null,
            roles: [],
            permissions: d.data.resolved.members[owner.id].permissions,
          },
        },
      },
    });
    assert.match(d.data.resolved.members[owner.id].permissions, /^\d+$/);
    assert.equal(d.type, 2);
    assert.equal(d.member.user.id, member.id);
    const answer = await request(server, 'POST', `/v1/interactions/${d.id}/${d.token}/callback`, {
      auth: bot,
      body: { type: 4, data: { content: `High five, <@${owner.id}>!` } },
    });
    assert.equal(answer.status, 204, answer.text);
    const shown = await memberGw.next(
      (f) => f.t === 'MESSAGE_CREATE' && (f.d as { content?: string }).content === `High five, <@${owner.id}>!`,
    );
    assert.equal(shown.d.interaction_metadata.name, 'High Five');
    assert.equal(shown.d.interaction_metadata.user.id, member.id);
    // A context-menu command's reply is type 23 and names its target (discord-api-types).
    assert.equal(shown.d.type, 23);
    assert.deepEqual(shown.d.interaction_metadata.target_user, target.body.user);
    assert.equal(shown.d.interaction_metadata.target_message_id, undefined);
  });

  it('a message command reaches the bot with the resolved message as the channel shows it', async () => {
    const posted = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content: 'report me' },
    });
    assert.equal(posted.status, 200, posted.text);
    const sent = await invoke({ id: messageCmd, name: 'Report Message', type: 3, target_id: posted.body.id });
    assert.equal(sent.status, 204, sent.text);
    const d = (await botGw.next(interactionFor('Report Message'))).d as any;
    const seen = await request(server, 'GET', `/v1/channels/${channelId}/messages/${posted.body.id}`, {
      auth: member.token,
    });
    assert.deepEqual(d.data, {
      id: messageCmd,
      name: 'Report Message',
      type: 3,
      guild_id: guildId,
      target_id: posted.body.id,
      resolved: { messages: { [posted.body.id]: seen.body } },
    });
    const answer = await request(server, 'POST', `/v1/interactions/${d.id}/${d.token}/callback`, {
      auth: bot,
      body: { type: 4, data: { content: 'Reported.', flags: 64 } },
    });
    assert.equal(answer.status, 204, answer.text);
    const shown = await memberGw.next(
      (f) => f.t === 'MESSAGE_CREATE' && (f.d as { content?: string }).content === 'Reported.',
    );
    assert.equal(shown.d.flags, 64);
    assert.equal(shown.d.type, 23);
    assert.equal(shown.d.interaction_metadata.target_message_id, posted.body.id);
    assert.equal(shown.d.interaction_metadata.target_user, undefined);
  });

  it('refuses a missing, unknown or misplaced target, options, a wrong type, and a target on a slash command', async () => {
    const missing = await invoke({ id: userCmd, name: 'High Five', type: 2 });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      ...FORM,
      errors: [{ path: 'data.target_id', code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }],
    });
    const nobody = await invoke({ id: userCmd, name: 'High Five', type: 2, target_id: '123456789012345678' });
    assert.equal(nobody.status, 404);
    assert.deepEqual(nobody.body, { code: 'UNKNOWN_USER', message: 'Unknown user' });
    const elsewhere = await request(server, 'POST', `/v1/channels/${otherChannelId}/messages`, {
      auth: owner.token,
      body: { content: 'not here' },
    });
    const misplaced = await invoke({ id: messageCmd, name: 'Report Message', type: 3, target_id: elsewhere.body.id });
    assert.equal(misplaced.status, 404);
    assert.deepEqual(misplaced.body, { code: 'UNKNOWN_MESSAGE', message: 'Unknown message' });
    const options = await invoke({
      id: userCmd,
      name: 'High Five',
      type: 2,
      target_id: owner.id,
      options: [{ type: 3, name: 'x', value: 'y' }],
    });
    assert.equal(options.status, 400);
    assert.deepEqual(options.body, {
      ...FORM,
      errors: [{ path: 'data.options', code: 'INVALID_FORMAT', message: 'The command has no options' }],
    });
    const wrongType = await invoke({ id: userCmd, name: 'High Five', type: 3, target_id: owner.id });
    assert.equal(wrongType.status, 400);
    assert.deepEqual(wrongType.body, {
      ...FORM,
      errors: [{ path: 'data.type', code: 'INVALID_FORMAT', message: 'Not the command’s type' }],
    });
    const slash = await invoke({ id: slashCmd, name: 'ping', type: 1, target_id: owner.id });
    assert.equal(slash.status, 400);
    assert.deepEqual(slash.body, {
      ...FORM,
      errors: [
        { path: 'data.target_id', code: 'INVALID_FORMAT', message: 'Only user and message commands have a target' },
      ],
    });
    assert.equal(await botGw.nothing(interactionFor('High Five')), true);
    assert.equal(await botGw.nothing(interactionFor('Report Message')), true);
  });
});
