import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addBotToGuild } from '../support/applications.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, type GatewayClient, readyClient } from './gateway-client.ts';

/**
 * Command options as a person's client sends them and as the bot receives them (docs/bots.md#invoking-a-command):
 * every option type, `resolved` in Discord's shapes (discord-api-types' APIInteractionDataResolved), files of
 * attachment options, values checked against the command, and autocomplete (type 4 → callback 8 → the person).
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
let voiceId: string;
let applicationId: string;
let roleId: string;
let pickId: string;
let findId: string;

const FORM = { code: 'INVALID_FORM_BODY', message: 'Invalid form body' };

before(async () => {
  server = await startTestServer();
  [owner, member] = await Promise.all([registerUser(server), registerUser(server)]);
  const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Options' } });
  guildId = guild.body.id;
  channelId = guild.body.system_channel_id;
  const invite = await request(server, 'POST', `/v1/channels/${channelId}/invites`, { auth: owner.token, body: {} });
  assert.equal((await request(server, 'POST', `/v1/invites/${invite.body.code}`, { auth: member.token })).status, 200);
  const voice = await request(server, 'POST', `/v1/guilds/${guildId}/channels`, {
    auth: owner.token,
    body: { name: 'Lounge', type: 2 },
  });
  voiceId = voice.body.id;
  const elsewhere = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Elsewhere' } });
  otherChannelId = elsewhere.body.system_channel_id;
  const role = await request(server, 'POST', `/v1/guilds/${guildId}/roles`, {
    auth: owner.token,
    body: { name: 'Helpers', color: 0x3498db, permissions: '0' },
  });
  roleId = role.body.id;
  const added = await request(server, 'PUT', `/v1/guilds/${guildId}/members/${member.id}/roles/${roleId}`, {
    auth: owner.token,
  });
  assert.equal(added.status, 204);
  const app = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: { name: 'Opts' } });
  applicationId = app.body.id;
  bot = `Bot ${app.body.bot.token}`;
  await addBotToGuild(server, owner, applicationId, guildId);
  const commands = await request(server, 'PUT', `/v1/applications/${applicationId}/guilds/${guildId}/commands`, {
    auth: bot,
    body: [
      {
        name: 'pick',
        description: 'Every kind of option',
        options: [
          { type: 8, name: 'role', description: 'A role', required: true },
          { type: 9, name: 'who', description: 'Someone or a role' },
          { type: 6, name: 'member', description: 'A member' },
          { type: 7, name: 'where', description: 'A text channel', channel_types: [0] },
          { type: 4, name: 'count', description: 'How many', min_value: 1, max_value: 10 },
          { type: 10, name: 'ratio', description: 'How much', min_value: 0, max_value: 1 },
          {
            type: 3,
            name: 'size',
            description: 'How big',
            choices: [
              { name: 'Small', value: 'small' },
              { name: 'Large', value: 'large' },
            ],
          },
          { type: 5, name: 'loud', description: 'In capitals' },
          { type: 11, name: 'file', description: 'A file' },
        ],
      },
      {
        name: 'find',
        description: 'Finds a fruit',
        options: [
          { type: 3, name: 'query', description: 'Fruit', required: true, autocomplete: true },
          { type: 4, name: 'limit', description: 'At most' },
        ],
      },
    ],
  });
  assert.equal(commands.status, 200, commands.text);
  pickId = commands.body.find((c: { name: string }) => c.name === 'pick').id;
  findId = commands.body.find((c: { name: string }) => c.name === 'find').id;
  ({ client: memberGw } = await readyClient(server, member.token));
  ({ client: botGw } = await readyClient(server, app.body.bot.token));
});

after(async () => {
  await memberGw?.close();
  await botGw?.close();
  await server?.close();
});

function body(type: 2 | 4, id: string, name: string, options: unknown[], extra: Record<string, unknown> = {}) {
  return {
    type,
    application_id: applicationId,
    guild_id: guildId,
    channel_id: channelId,
    nonce: `n${Date.now()}`,
    data: { id, name, type: 1, options, ...extra },
  };
}

function invoke(payload: unknown, user = member) {
  return request(server, 'POST', '/v1/interactions', { auth: user.token, body: payload });
}

async function invokeWithFile(payload: unknown, file: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('payload_json', JSON.stringify(payload));
  form.append('files[0]', new Blob([new Uint8Array(file)], { type }), filename);
  const res = await fetch(`${server.url}/v1/interactions`, {
    method: 'POST',
    body: form,
    headers: { authorization: member.token },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const interactionFor = (name: string) => (f: Frame) =>
  f.t === 'INTERACTION_CREATE' && (f.d as { data?: { name?: string } }).data?.name === name;

describe('command options', () => {
  it('every option type reaches the bot with resolved users, members, roles, channels and attachments', async () => {
    const note = Buffer.from('remember the milk\n');
    const payload = body(2, pickId, 'pick', [
      { type: 8, name: 'role', value: roleId },
      { type: 9, name: 'who', value: roleId },
      { type: 6, name: 'member', value: member.id },
      { type: 7, name: 'where', value: channelId },
      { type: 4, name: 'count', value: 3 },
      { type: 10, name: 'ratio', value: 0.5 },
      { type: 3, name: 'size', value: 'large' },
      { type: 5, name: 'loud', value: true },
      { type: 11, name: 'file', value: 0 },
    ]);
    (payload.data as Record<string, unknown>).attachments = [{ id: '0', filename: 'note.txt' }];
    const sent = await invokeWithFile(payload, note, 'note.txt', 'text/plain');
    assert.equal(sent.status, 204, JSON.stringify(sent.body));
    const frame = await botGw.next(interactionFor('pick'));
    const d = frame.d as any;
    const roles = await request(server, 'GET', `/v1/guilds/${guildId}/roles`, { auth: owner.token });
    const position = roles.body.find((r: { id: string }) => r.id === roleId).position;
    const attachmentId = d.data.options[8].value as string;
    assert.match(attachmentId, /^\d+$/);
    const memberView = await request(server, 'GET', `/v1/guilds/${guildId}/members/${member.id}`, {
      auth: owner.token,
    });
    assert.deepEqual(d.data, {
      id: pickId,
      name: 'pick',
      type: 1,
      guild_id: guildId,
      options: [
        { type: 8, name: 'role', value: roleId },
        { type: 9, name: 'who', value: roleId },
        { type: 6, name: 'member', value: member.id },
        { type: 7, name: 'where', value: channelId },
        { type: 4, name: 'count', value: 3 },
        { type: 10, name: 'ratio', value: 0.5 },
        { type: 3, name: 'size', value: 'large' },
        { type: 5, name: 'loud', value: true },
        { type: 11, name: 'file', value: attachmentId },
      ],
      resolved: {
        users: { [member.id]: memberView.body.user },
        members: {
          [member.id]: {
            avatar: null,
            banner: null,
            communication_disabled_until: null,
            flags: 0,
            joined_at: memberView.body.joined_at,
            nick: null,
            pending: false,
            premium_since: null,
            roles: [roleId],
            // The member's permissions in the invoked channel: the invoker here, so the payload's own.
            permissions: d.member.permissions,
          },
        },
        roles: {
          [roleId]: {
            id: roleId,
            name: 'Helpers',
            color: 0x3498db,
            colors: { primary_color: 0x3498db, secondary_color: null, tertiary_color: null },
            position,
            permissions: '0',
            hoist: false,
            mentionable: false,
            managed: false,
            icon: null,
            unicode_emoji: null,
            flags: 0,
          },
        },
        channels: { [channelId]: { id: channelId, name: 'general', type: 0, permissions: d.member.permissions } },
        attachments: {
          [attachmentId]: {
            id: attachmentId,
            filename: 'note.txt',
            description: null,
            content_type: 'text/plain',
            size: note.length,
            url: `${server.url}/media/attachments/${channelId}/${attachmentId}/note.txt`,
            proxy_url: `${server.url}/media/attachments/${channelId}/${attachmentId}/note.txt`,
            flags: 0,
          },
        },
      },
    });
    const media = await fetch(d.data.resolved.attachments[attachmentId].url, { headers: { authorization: bot } });
    assert.equal(media.status, 200);
    assert.ok(Buffer.from(await media.arrayBuffer()).equals(note));
  });

  it('values are checked against the command: types, ranges, choices, names, required, ids, files', async () => {
    const cases: [unknown[], Record<string, unknown>[]][] = [
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 4, name: 'count', value: 11 },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'At most 10' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 4, name: 'count', value: 2.5 },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'Must be an integer' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 10, name: 'ratio', value: '0.5' },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'Must be a number' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 3, name: 'size', value: 'huge' },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'Not one of the choices' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 3, name: 'colour', value: 'red' },
        ],
        [{ path: 'data.options.1.name', code: 'INVALID_FORMAT', message: 'Not an option of this command' }],
      ],
      [
        [{ type: 6, name: 'member', value: member.id }],
        [{ path: 'data.options', code: 'BASE_TYPE_REQUIRED', message: 'The option role is required' }],
      ],
      [
        [{ type: 8, name: 'role', value: '123456789012345678' }],
        [{ path: 'data.options.0.value', code: 'INVALID_FORMAT', message: 'Unknown role' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 7, name: 'where', value: otherChannelId },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'Unknown channel' }],
      ],
      [
        // A voice channel is not among the option's channel_types.
        [
          { type: 8, name: 'role', value: roleId },
          { type: 7, name: 'where', value: voiceId },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'Unknown channel' }],
      ],
      [
        [
          { type: 8, name: 'role', value: roleId },
          { type: 11, name: 'file', value: 0 },
        ],
        [{ path: 'data.options.1.value', code: 'INVALID_FORMAT', message: 'No such entry in data.attachments' }],
      ],
      [
        [{ type: 8, name: 'role', value: roleId, focused: true }],
        [{ path: 'data.options.0.focused', code: 'INVALID_FORMAT', message: 'This option has no autocomplete' }],
      ],
    ];
    for (const [options, errors] of cases) {
      const res = await invoke(body(2, pickId, 'pick', options));
      assert.equal(res.status, 400, JSON.stringify(options));
      assert.deepEqual(res.body, { ...FORM, errors }, JSON.stringify(options));
    }
    // A file no attachment option names.
    const stray = await invokeWithFile(
      body(2, pickId, 'pick', [{ type: 8, name: 'role', value: roleId }]),
      Buffer.from('x'),
      'a.txt',
      'text/plain',
    );
    assert.equal(stray.status, 400);
    assert.deepEqual(stray.body, {
      ...FORM,
      errors: [{ path: 'data.attachments', code: 'INVALID_FORMAT', message: 'Only attachment options carry files' }],
    });
    assert.equal(await botGw.nothing(interactionFor('pick')), true);
  });

  it('autocomplete: the focused text reaches the bot, whose choices reach the person', async () => {
    const payload = body(4, findId, 'find', [
      { type: 3, name: 'query', value: 'ap', focused: true },
      { type: 4, name: 'limit', value: 2 },
    ]);
    const sent = await invoke(payload);
    assert.equal(sent.status, 204, sent.text);
    const frame = await botGw.next(interactionFor('find'));
    const d = frame.d as Record<string, any>;
    assert.equal(d.type, 4);
    assert.deepEqual(d.data, {
      id: findId,
      name: 'find',
      type: 1,
      guild_id: guildId,
      options: [
        { type: 3, name: 'query', value: 'ap', focused: true },
        { type: 4, name: 'limit', value: 2 },
      ],
    });
    const created = await memberGw.next((f) => f.t === 'INTERACTION_CREATE' && (f.d as any).id === d.id);
    assert.deepEqual(created.d, { id: d.id, nonce: payload.nonce });
    // Anything but choices is refused, and so are choices not shaped as Discord's.
    const wrongType = await request(server, 'POST', `/v1/interactions/${d.id}/${d.token}/callback`, {
      body: { type: 4, data: { content: 'no' } },
    });
    assert.equal(wrongType.status, 400);
    assert.deepEqual(wrongType.body, {
      ...FORM,
      errors: [{ path: 'type', code: 'INVALID_FORMAT', message: 'Not a response to this interaction' }],
    });
    const badChoice = await request(server, 'POST', `/v1/interactions/${d.id}/${d.token}/callback`, {
      body: { type: 8, data: { choices: [{ name: 'Apple', value: { nested: true } }] } },
    });
    assert.equal(badChoice.status, 400);
    assert.equal(badChoice.body.code, 'INVALID_FORM_BODY');
    const choices = [
      { name: 'Apple', value: 'apple' },
      { name: 'Apricot', name_localizations: { fr: 'Abricot' }, value: 'apricot' },
    ];
    const answered = await request(server, 'POST', `/v1/interactions/${d.id}/${d.token}/callback`, {
      body: { type: 8, data: { choices } },
    });
    assert.equal(answered.status, 204, answered.text);
    const shown = await memberGw.next((f) => f.t === 'APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE');
    assert.deepEqual(shown.d, { id: d.id, choices });

    // Exactly one focused option, and only an autocomplete one; required options may still be missing.
    const none = await invoke(body(4, findId, 'find', [{ type: 4, name: 'limit', value: 2 }]));
    assert.equal(none.status, 400);
    assert.deepEqual(none.body, {
      ...FORM,
      errors: [{ path: 'data.options', code: 'INVALID_FORMAT', message: 'Exactly one option is focused' }],
    });
    const notText = await invoke(body(4, findId, 'find', [{ type: 3, name: 'query', value: 3, focused: true }]));
    assert.equal(notText.status, 400);
    assert.deepEqual(notText.body, {
      ...FORM,
      errors: [{ path: 'data.options.0.value', code: 'INVALID_FORMAT', message: 'The text typed so far' }],
    });
  });

  it('attachment options need ATTACH_FILES', async () => {
    const everyone = await request(server, 'PATCH', `/v1/guilds/${guildId}/roles/${guildId}`, {
      auth: owner.token,
      body: { permissions: String((1n << 10n) | (1n << 11n)) },
    });
    assert.equal(everyone.status, 200, everyone.text);
    const payload = body(2, pickId, 'pick', [
      { type: 8, name: 'role', value: roleId },
      { type: 11, name: 'file', value: 0 },
    ]);
    (payload.data as Record<string, unknown>).attachments = [{ id: '0', filename: 'a.txt' }];
    const res = await invokeWithFile(payload, Buffer.from('x'), 'a.txt', 'text/plain');
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { code: 'MISSING_PERMISSIONS', message: 'Missing permissions' });
  });

  it('autocomplete has its own allowance: typing never uses up the invocations (limits on)', async () => {
    const strict = { 'x-test-strict': 'true' };
    const send = (payload: unknown) =>
      request(server, 'POST', '/v1/interactions', { auth: member.token, body: payload, headers: strict });
    await request(server, 'POST', '/v1/test/rate-limits/reset', { harness: true });
    // The server's clock stands still, so the allowances do not refill while the requests go out one by one.
    await request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 0, frozen: true } });
    after(() => request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms: 0 } }));
    for (let typed = 1; typed <= 25; typed++) {
      const res = await send(
        body(4, findId, 'find', [{ type: 3, name: 'query', value: 'a'.repeat(typed), focused: true }]),
      );
      assert.equal(res.status, 204, `keystroke ${typed}: ${res.text}`);
    }
    const tooFast = await send(body(4, findId, 'find', [{ type: 3, name: 'query', value: 'ab', focused: true }]));
    assert.equal(tooFast.status, 429);
    assert.equal(tooFast.body.code, 'RATE_LIMITED');
    for (let run = 1; run <= 10; run++) {
      const res = await send(body(2, findId, 'find', [{ type: 3, name: 'query', value: 'apple' }]));
      assert.equal(res.status, 204, `invocation ${run}: ${res.text}`);
    }
    const eleventh = await send(body(2, findId, 'find', [{ type: 3, name: 'query', value: 'apple' }]));
    assert.equal(eleventh.status, 429);
    assert.equal(eleventh.body.code, 'RATE_LIMITED');
    assert.ok(Number(eleventh.headers.get('retry-after')) >= 1);
    await request(server, 'POST', '/v1/test/rate-limits/reset', { harness: true });
  });
});
