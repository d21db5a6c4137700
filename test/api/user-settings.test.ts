import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
before(async () => {
  server = await startTestServer();
  alice = await registerUser(server);
  bob = await registerUser(server);
});
after(async () => {
  await server.close();
});

describe('user settings', () => {
  test('GET answers every member, defaults included (restricted_guilds, guild_folders, flags…)', async () => {
    const res = await request(server, 'GET', '/v1/users/@me/settings', { auth: alice.token });
    assert.equal(res.status, 200);
    for (const key of [
      'restricted_guilds',
      'default_guilds_restricted',
      'guild_folders',
      'custom_status',
      'status_resets_at',
      'status_resets_to',
      'friend_source_flags',
      'incoming_call_flags',
      'group_dm_add_permission_flags',
      'time_format',
      'afk_timeout',
      'developer_mode',
      'message_display_compact',
      'inline_attachment_media',
      'render_embeds',
      'animate_emoji',
      'flags',
    ])
      assert.ok(key in res.body, key);
    assert.deepEqual(res.body.restricted_guilds, []);
    assert.equal(res.body.locale, 'en-US');
    assert.equal(res.body.theme, 'dark');
  });

  test('PATCH stores what changed, tells every session, and READY carries the whole object', async () => {
    const { client } = await readyClient(server, alice.token);
    const res = await request(server, 'PATCH', '/v1/users/@me/settings', {
      auth: alice.token,
      body: { theme: 'light', developer_mode: true, locale: 'fr', restricted_guilds: ['123'], unknown_member: 1 },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.theme, 'light');
    assert.equal(res.body.developer_mode, true);
    assert.equal(res.body.locale, 'fr');
    assert.deepEqual(res.body.restricted_guilds, ['123']);
    assert.equal('unknown_member' in res.body, false);
    const update = await client.dispatch('USER_SETTINGS_UPDATE');
    assert.deepEqual(update.d, { theme: 'light', developer_mode: true, restricted_guilds: ['123'], locale: 'fr' });
    await client.close();

    const me = await request(server, 'GET', '/v1/users/@me', { auth: alice.token });
    assert.equal(me.body.locale, 'fr');
    const again = GatewayClient.connect(server);
    const ready = await again.ready(alice.token);
    assert.equal(ready.d.user_settings.theme, 'light');
    assert.equal(ready.d.user_settings.locale, 'fr');
    assert.deepEqual(ready.d.user_settings.guild_folders, []);
    assert.equal(ready.d.user_settings.inline_embed_media, true);
    assert.deepEqual(ready.d.feature_flags, { disabled_gravity_surfaces: [], disabled_features: [] });
    await again.close();
  });

  test('bad values are refused with the field named', async () => {
    for (const body of [{ theme: 'pink' }, { locale: 'xx-XX' }, { afk_timeout: 5 }, { restricted_guilds: ['nope'] }]) {
      const res = await request(server, 'PATCH', '/v1/users/@me/settings', { auth: bob.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      const field = Object.keys(body)[0] as string;
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path.startsWith(field)),
        JSON.stringify(res.body.errors),
      );
    }
  });
});

describe('notes', () => {
  test('PUT sets a private note (USER_NOTE_UPDATE), GET reads it, READY lists it, an empty note deletes it', async () => {
    const { client } = await readyClient(server, bob.token);
    const put = await request(server, 'PUT', `/v1/users/@me/notes/${alice.id}`, {
      auth: bob.token,
      body: { note: 'met at the meetup' },
    });
    assert.equal(put.status, 204);
    assert.deepEqual((await client.dispatch('USER_NOTE_UPDATE')).d, { id: alice.id, note: 'met at the meetup' });
    const get = await request(server, 'GET', `/v1/users/@me/notes/${alice.id}`, { auth: bob.token });
    assert.deepEqual(get.body, { user_id: bob.id, note_user_id: alice.id, note: 'met at the meetup' });
    // Private: alice has written no note about herself, so she reads an empty one.
    const theirs = await request(server, 'GET', `/v1/users/@me/notes/${alice.id}`, { auth: alice.token });
    assert.deepEqual(theirs.body, { user_id: alice.id, note_user_id: alice.id, note: '' });
    const ready = await GatewayClient.connect(server).ready(bob.token);
    assert.deepEqual(ready.d.notes, { [alice.id]: 'met at the meetup' });

    await request(server, 'PUT', `/v1/users/@me/notes/${alice.id}`, { auth: bob.token, body: { note: '' } });
    const cleared = await request(server, 'GET', `/v1/users/@me/notes/${alice.id}`, { auth: bob.token });
    assert.equal(cleared.body.note, '');
    const ready2 = await GatewayClient.connect(server).ready(bob.token);
    assert.deepEqual(ready2.d.notes, {});
    const unknown = await request(server, 'PUT', '/v1/users/@me/notes/123456789012345678', {
      auth: bob.token,
      body: { note: 'x' },
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_USER');
    await client.close();
  });
});
