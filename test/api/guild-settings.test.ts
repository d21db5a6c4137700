import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { createApplication } from '../support/applications.ts';
import {
  as,
  assertOnlyFormError,
  befriend,
  friendsWithDm,
  guildWithMembers,
  join,
  newGuild,
  ok,
} from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// docs/chat.md#notification-settings: PATCH /users/@me/guilds/{id}/settings and /users/@me/guilds/@me/settings (the
// direct conversations' entry, guild_id null), USER_GUILD_SETTINGS_UPDATE, READY.

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let guild: any;
let general: string;
const sockets: GatewayClient[] = [];

before(async () => {
  server = await startTestServer();
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  [alice, bob] = setup.members as [TestUser, TestUser];
  guild = setup.guild;
  general = setup.channelId;
});
after(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server?.close();
});

async function connect(user: TestUser): Promise<{ client: GatewayClient; ready: any }> {
  const { client, ready } = await readyClient(server, user.token);
  sockets.push(client);
  return { client, ready: ready.d };
}

/** The user's READY `user_guild_settings`, from a fresh session. */
async function readySettings(user: TestUser): Promise<any> {
  const { client, ready } = await readyClient(server, user.token);
  await client.close();
  return ready.d.user_guild_settings;
}

const patch = (user: TestUser | { auth: string }, guildId: string, body: unknown) =>
  as(server, user, 'PATCH', `/users/@me/guilds/${guildId}/settings`, body);

const DEFAULTS = {
  muted: false,
  mute_config: null,
  message_notifications: 3,
  suppress_everyone: false,
  suppress_roles: false,
  mobile_push: true,
  hide_muted_channels: false,
  notify_highlights: 0,
  flags: 0,
  channel_overrides: [],
};

describe('PATCH /users/@me/guilds/{id}/settings', () => {
  it('answers the whole object, merges what is left out and keeps the version growing', async () => {
    const user = (await guildWithMembers(server, 1)).members[0] as TestUser;
    const own = await newGuild(server, user, 'Own');
    const first = await ok(patch(user, own.id, { muted: true }));
    assert.deepEqual(first, { guild_id: own.id, ...DEFAULTS, muted: true, version: 1 });

    const channel = own.system_channel_id as string;
    const second = await ok(
      patch(user, own.id, {
        message_notifications: 1,
        suppress_everyone: true,
        mute_config: { end_time: null, selected_time_window: -1 },
        channel_overrides: { [channel]: { message_notifications: 0, collapsed: true } },
      }),
    );
    assert.deepEqual(second, {
      guild_id: own.id,
      ...DEFAULTS,
      muted: true,
      mute_config: { end_time: null, selected_time_window: -1 },
      message_notifications: 1,
      suppress_everyone: true,
      channel_overrides: [
        { channel_id: channel, muted: false, mute_config: null, message_notifications: 0, collapsed: true },
      ],
      version: 2,
    });

    // A channel's members left out keep their value; back at every default, the override goes.
    const third = await ok(patch(user, own.id, { muted: false, channel_overrides: { [channel]: { muted: true } } }));
    assert.equal(third.muted, false);
    assert.deepEqual(third.channel_overrides, [
      { channel_id: channel, muted: true, mute_config: null, message_notifications: 0, collapsed: true },
    ]);
    assert.equal(third.version, 3);
    const fourth = await ok(
      patch(user, own.id, {
        channel_overrides: { [channel]: { muted: false, message_notifications: 3, collapsed: false } },
      }),
    );
    assert.deepEqual(fourth.channel_overrides, []);
    assert.equal(fourth.message_notifications, 1);
    assert.equal(fourth.version, 4);
  });

  it('a mute whose end has passed reads as no mute; one in the future stays', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const timed = await ok(
      patch(alice, guild.id, { muted: true, mute_config: { end_time: future, selected_time_window: 3600 } }),
    );
    assert.equal(timed.muted, true);
    assert.deepEqual(timed.mute_config, { end_time: future, selected_time_window: 3600 });
    const past = new Date(Date.now() - 1000).toISOString();
    const ended = await ok(patch(alice, guild.id, { mute_config: { end_time: past, selected_time_window: 900 } }));
    assert.equal(ended.muted, false);
    assert.equal(ended.mute_config, null);
    const cleared = await ok(patch(alice, guild.id, { muted: false, mute_config: null }));
    assert.equal(cleared.mute_config, null);
  });

  it('refuses bad bodies with 400 and the field errors of the catalogue', async () => {
    assertOnlyFormError(await patch(alice, guild.id, { muted: 'yes' }), 'muted', 'BASE_TYPE_REQUIRED');
    assertOnlyFormError(
      await patch(alice, guild.id, { message_notifications: 4 }),
      'message_notifications',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { message_notifications: 1.5 }),
      'message_notifications',
      'BASE_TYPE_REQUIRED',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { mute_config: { end_time: 'tomorrow', selected_time_window: 60 } }),
      'mute_config.end_time',
      'INVALID_FORMAT',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { mute_config: { end_time: null } }),
      'mute_config.selected_time_window',
      'BASE_TYPE_REQUIRED',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { channel_overrides: { [general]: { collapsed: 1 } } }),
      `channel_overrides.${general}.collapsed`,
      'BASE_TYPE_REQUIRED',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { channel_overrides: { 'not-an-id': { muted: true } } }),
      'channel_overrides.not-an-id',
      'INVALID_SNOWFLAKE_FORMAT',
    );
    assertOnlyFormError(
      await patch(alice, guild.id, { channel_overrides: { '18446744073709551616': { muted: true } } }),
      'channel_overrides.18446744073709551616',
      'SNOWFLAKE_OUT_OF_RANGE',
    );
    // A channel of another guild is not one of this guild's.
    const other = await newGuild(server, owner, 'Other');
    assertOnlyFormError(
      await patch(alice, guild.id, { channel_overrides: { [other.system_channel_id]: { muted: true } } }),
      `channel_overrides.${other.system_channel_id}`,
      'UNKNOWN_GUILD_CHANNEL',
    );
    const many = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [String(1000 + i), { muted: true }]));
    assertOnlyFormError(
      await patch(alice, guild.id, { channel_overrides: many }),
      'channel_overrides',
      'CONTENT_EXCEEDS_MAX_LENGTH',
    );
    assertOnlyFormError(await patch(alice, guild.id, ['muted']), 'root', 'BASE_TYPE_REQUIRED');
    // Nothing refused was stored.
    const { entries } = await readySettings(alice);
    assert.equal(entries.find((e: any) => e.guild_id === guild.id)?.channel_overrides.length ?? 0, 0);
  });

  it('a guild the caller is not in, an unknown guild and a malformed id are 404 UNKNOWN_GUILD', async () => {
    const other = await newGuild(server, owner, 'Not hers');
    for (const id of [other.id, '123456789012345678', 'nope', '99999999999999999999999']) {
      const res = await patch(alice, id, { muted: true });
      assert.equal(res.status, 404, id);
      assert.deepEqual(res.body, { code: 'UNKNOWN_GUILD', message: 'Unknown guild' }, id);
    }
  });

  it('is for people: a bot member gets 403 ACCESS_DENIED', async () => {
    const app = await createApplication(server, owner);
    const res = await patch({ auth: `Bot ${app.botToken}` }, guild.id, { muted: true });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCESS_DENIED');
  });
});

describe('USER_GUILD_SETTINGS_UPDATE and READY', () => {
  it('reaches both sessions of the user and no other member, and READY carries the entries', async () => {
    const first = await connect(bob);
    const second = await connect(bob);
    const other = await connect(alice);
    const body = await ok(
      patch(bob, guild.id, { muted: true, channel_overrides: { [general]: { message_notifications: 2 } } }),
    );
    const [a, b] = await Promise.all([
      first.client.dispatch('USER_GUILD_SETTINGS_UPDATE'),
      second.client.dispatch('USER_GUILD_SETTINGS_UPDATE'),
    ]);
    assert.deepEqual(a.d, body);
    assert.deepEqual(b.d, body);
    assert.equal(body.muted, true);
    assert.ok(await other.client.nothing((f) => f.t === 'USER_GUILD_SETTINGS_UPDATE', 500));

    const settings = await readySettings(bob);
    assert.deepEqual(settings, { version: body.version, partial: false, entries: [body] });
  });

  it('an override of a deleted channel is left out of READY', async () => {
    const user = await registerUser(server);
    await join(server, owner, user, guild);
    const scratch = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'scratch' }));
    const body = await ok(
      patch(user, guild.id, {
        channel_overrides: { [scratch.id]: { muted: true }, [general]: { collapsed: true } },
      }),
    );
    assert.deepEqual(
      body.channel_overrides.map((o: any) => o.channel_id),
      [general, scratch.id].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)),
    );
    await ok(as(server, owner, 'DELETE', `/channels/${scratch.id}`), 204);
    const [entry] = (await readySettings(user)).entries;
    assert.deepEqual(
      entry.channel_overrides.map((o: any) => o.channel_id),
      [general],
    );
  });

  it('leaving the guild removes the settings: READY drops them and a rejoin starts from the defaults', async () => {
    const user = await registerUser(server);
    await join(server, owner, user, guild);
    await ok(patch(user, guild.id, { muted: true }));
    assert.equal((await readySettings(user)).entries.length, 1);
    await ok(as(server, user, 'DELETE', `/users/@me/guilds/${guild.id}`), 204);
    assert.deepEqual(await readySettings(user), { version: 0, partial: false, entries: [] });
    await join(server, owner, user, guild);
    assert.deepEqual(await readySettings(user), { version: 0, partial: false, entries: [] });
    const fresh = await ok(patch(user, guild.id, {}));
    assert.deepEqual(fresh, { guild_id: guild.id, ...DEFAULTS, version: 1 });
  });

  it('a new account and a bot get the empty envelope', async () => {
    const user = await registerUser(server);
    assert.deepEqual(await readySettings(user), { version: 0, partial: false, entries: [] });
    const app = await createApplication(server, owner);
    const { client, ready } = await readyClient(server, `Bot ${app.botToken}`);
    await client.close();
    assert.deepEqual(ready.d.user_guild_settings, { version: 0, partial: false, entries: [] });
  });
});

describe('PATCH /users/@me/guilds/@me/settings (direct conversations)', () => {
  /** Alice with a 1:1 DM with Bob and a group DM with Bob and Carol. */
  async function conversations() {
    const { alice: me, bob: friend, channelId: dm } = await friendsWithDm(server);
    const carol = await registerUser(server);
    await befriend(server, me, carol);
    const group = await ok(as(server, me, 'POST', '/users/@me/channels', { recipients: [friend.id, carol.id] }));
    return { me, friend, carol, dm, group: group.id as string };
  }

  it('keeps DM and group DM overrides in the entry with guild_id null, with its guild-level members stored', async () => {
    const { me, dm, group } = await conversations();
    const first = await ok(
      patch(me, '@me', { channel_overrides: { [dm]: { muted: true }, [group]: { message_notifications: 1 } } }),
    );
    const ordered = [dm, group].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1));
    const views: Record<string, object> = {
      [dm]: { channel_id: dm, muted: true, mute_config: null, message_notifications: 3, collapsed: false },
      [group]: { channel_id: group, muted: false, mute_config: null, message_notifications: 1, collapsed: false },
    };
    assert.deepEqual(first, {
      guild_id: null,
      ...DEFAULTS,
      channel_overrides: ordered.map((id) => views[id]),
      version: 1,
    });
    // The guild-level members are accepted and stored as given (they decide nothing for a conversation);
    // `%40me`, as the established client encodes it, is the same route.
    const second = await ok(
      as(server, me, 'PATCH', '/users/@me/guilds/%40me/settings', {
        suppress_everyone: true,
        message_notifications: 2,
        channel_overrides: { [dm]: { muted: false } },
      }),
    );
    assert.deepEqual(second, {
      guild_id: null,
      ...DEFAULTS,
      suppress_everyone: true,
      message_notifications: 2,
      channel_overrides: [views[group]],
      version: 2,
    });
  });

  it('refuses keys that are not conversations of the caller with exact codes, and stores nothing', async () => {
    const { me, dm } = await conversations();
    const others = await friendsWithDm(server);
    const cases: [string, string][] = [
      [general, 'UNKNOWN_PRIVATE_CHANNEL'], // a guild channel (of a guild she is not in)
      [others.channelId, 'UNKNOWN_PRIVATE_CHANNEL'], // a DM of two other people
      ['123456789012345678', 'UNKNOWN_PRIVATE_CHANNEL'], // no channel at all
      ['not-an-id', 'INVALID_SNOWFLAKE_FORMAT'],
      ['18446744073709551616', 'SNOWFLAKE_OUT_OF_RANGE'],
    ];
    for (const [key, code] of cases)
      assertOnlyFormError(
        await patch(me, '@me', { channel_overrides: { [dm]: { muted: true }, [key]: { muted: true } } }),
        `channel_overrides.${key}`,
        code,
      );
    // A channel of a guild she is in is not a conversation either.
    const own = await newGuild(server, me, 'Hers');
    const res = await patch(me, '@me', { channel_overrides: { [own.system_channel_id]: { muted: true } } });
    assertOnlyFormError(res, `channel_overrides.${own.system_channel_id}`, 'UNKNOWN_PRIVATE_CHANNEL');
    assert.deepEqual(res.body.errors, [
      {
        path: `channel_overrides.${own.system_channel_id}`,
        code: 'UNKNOWN_PRIVATE_CHANNEL',
        message: 'Not a direct conversation of yours',
      },
    ]);
    assertOnlyFormError(
      await patch(me, '@me', { channel_overrides: { [dm]: { muted: 'yes' } } }),
      `channel_overrides.${dm}.muted`,
      'BASE_TYPE_REQUIRED',
    );
    // Nothing refused was stored: no entry was made.
    assert.deepEqual(
      (await readySettings(me)).entries.filter((e: any) => e.guild_id === null),
      [],
    );
  });

  it('reaches both sessions of the caller and no other recipient; READY carries the entry beside the guilds', async () => {
    const { me, friend, dm, group } = await conversations();
    const own = await newGuild(server, me, 'Mine');
    const guildEntry = await ok(patch(me, own.id, { muted: true }));
    const first = await connect(me);
    const second = await connect(me);
    const other = await connect(friend);
    const body = await ok(patch(me, '@me', { channel_overrides: { [dm]: { muted: true } } }));
    const [a, b] = await Promise.all([
      first.client.dispatch('USER_GUILD_SETTINGS_UPDATE'),
      second.client.dispatch('USER_GUILD_SETTINGS_UPDATE'),
    ]);
    assert.deepEqual(a.d, body);
    assert.deepEqual(b.d, body);
    assert.ok(await other.client.nothing((f) => f.t === 'USER_GUILD_SETTINGS_UPDATE', 500));
    assert.deepEqual(await readySettings(me), {
      version: Math.max(guildEntry.version, body.version),
      partial: false,
      entries: [guildEntry, body],
    });
    // The other recipient has no entry of her own.
    assert.deepEqual(await readySettings(friend), { version: 0, partial: false, entries: [] });

    // Leaving the group DM leaves its override out of READY (and the next PATCH drops it).
    await ok(patch(me, '@me', { channel_overrides: { [group]: { muted: true } } }));
    await ok(as(server, me, 'DELETE', `/channels/${group}`), 204);
    const entry = (await readySettings(me)).entries.find((e: any) => e.guild_id === null);
    assert.deepEqual(
      entry.channel_overrides.map((o: any) => o.channel_id),
      [dm],
    );
    assertOnlyFormError(
      await patch(me, '@me', { channel_overrides: { [group]: { muted: false } } }),
      `channel_overrides.${group}`,
      'UNKNOWN_PRIVATE_CHANNEL',
    );
  });

  it('is for people: a bot gets 403 ACCESS_DENIED', async () => {
    const app = await createApplication(server, owner);
    const res = await patch({ auth: `Bot ${app.botToken}` }, '@me', { muted: true });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCESS_DENIED');
  });
});

describe('suppress_everyone and suppress_roles in mention counts', () => {
  it('an @everyone or role ping does not count for a member who suppresses it; a ping by name always does', async () => {
    const setup = await guildWithMembers(server, 4);
    const [plain, noEveryone, noRoles, neither] = setup.members as [TestUser, TestUser, TestUser, TestUser];
    const { guild: g, channelId } = setup;
    const role = await ok(as(server, setup.owner, 'POST', `/guilds/${g.id}/roles`, { name: 'crew' }));
    for (const member of setup.members)
      await ok(as(server, setup.owner, 'PUT', `/guilds/${g.id}/members/${member.id}/roles/${role.id}`), 204);
    await ok(patch(noEveryone, g.id, { suppress_everyone: true }));
    await ok(patch(noRoles, g.id, { suppress_roles: true }));
    await ok(patch(neither, g.id, { suppress_everyone: true, suppress_roles: true }));
    const send = async (content: string) => {
      const message = await ok(as(server, setup.owner, 'POST', `/channels/${channelId}/messages`, { content }));
      return message;
    };
    const everyone = await send('@everyone hello');
    assert.equal(everyone.mention_everyone, true);
    const roles = await send(`<@&${role.id}> crew`);
    assert.deepEqual(roles.mention_roles, [role.id]);
    await send(`@everyone <@&${role.id}> both`);
    const counts = async () =>
      Promise.all(
        setup.members.map(async (user) => {
          const { client, ready } = await readyClient(server, user.token);
          await client.close();
          return ready.d.read_state.entries.find((e: any) => e.id === channelId)?.mention_count ?? 0;
        }),
      );
    assert.deepEqual(await counts(), [3, 2, 2, 0]);
    // By name, the ping counts whatever the settings.
    await send(setup.members.map((u) => `<@${u.id}>`).join(' '));
    assert.deepEqual(await counts(), [4, 3, 3, 1]);
    // @here pings those online: of the two online now, only the one who does not suppress it.
    await Promise.all([connect(plain), connect(noEveryone)]);
    await send('@here anyone?');
    assert.deepEqual(await counts(), [5, 3, 3, 1]);
    // A recount (a manual ack without a count: back to just after the first @everyone) honours them too.
    for (const user of setup.members)
      await ok(as(server, user, 'POST', `/channels/${channelId}/messages/${everyone.id}/ack`, { manual: true }));
    assert.deepEqual(await counts(), [4, 3, 3, 1]);
  });
});
