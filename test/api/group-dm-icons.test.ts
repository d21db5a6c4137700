import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { as, befriend, DispatchRecorder, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** A group DM's icon (docs/chat.md, group DMs; docs/media.md, `/channel-icons/…`): set, served, cleared, refused. */
let server: TestServer;
let events: DispatchRecorder;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let png: Buffer;

const dataUri = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;

before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)];
  await befriend(server, alice, bob);
  await befriend(server, alice, carol);
  png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
});

after(async () => {
  events?.close();
  await server?.close();
});

async function newGroup(name = 'trio') {
  return ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id], name }));
}

describe('group DM icons', () => {
  it('lets any recipient set the icon: CHANNEL_UPDATE to everyone, a type 5 system message, served by hash', async () => {
    const group = await newGroup();
    assert.equal(group.icon, null);
    events.clear();
    const res = await as(server, bob, 'PATCH', `/channels/${group.id}`, { icon: dataUri(png) });
    assert.equal(res.status, 200, res.text);
    const hash = res.body.icon as string;
    assert.match(hash, /^[0-9a-f]{8}$/);
    assert.deepEqual(res.body, {
      id: group.id,
      type: 3,
      name: 'trio',
      icon: hash,
      owner_id: alice.id,
      recipients: res.body.recipients,
      last_message_id: null,
      last_pin_timestamp: null,
    });
    assert.deepEqual(res.body.recipients.map((u: any) => u.id).sort(), [alice.id, carol.id].sort());

    const updates = events.of('CHANNEL_UPDATE');
    assert.deepEqual(updates.flatMap((d) => (d.audience as any).userIds).sort(), [alice.id, bob.id, carol.id].sort());
    for (const update of updates) assert.equal((update.payload as any).icon, hash);
    const system = events.one('MESSAGE_CREATE').payload as any;
    assert.equal(system.type, 5);
    assert.equal(system.content, '');
    assert.equal(system.author.id, bob.id);
    assert.equal(system.channel_id, group.id);

    const seen = await ok(as(server, carol, 'GET', `/channels/${group.id}`));
    assert.equal(seen.icon, hash);
    const listed = (await ok(as(server, alice, 'GET', '/users/@me/channels'))).find((c: any) => c.id === group.id);
    assert.equal(listed.icon, hash);
    const history = await ok(as(server, alice, 'GET', `/channels/${group.id}/messages`));
    assert.deepEqual(
      history.map((m: any) => [m.type, m.author.id]),
      [[5, bob.id]],
    );

    const served = await fetch(`${server.url}/media/channel-icons/${group.id}/${hash}.png?size=16`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 16);
    const webp = await fetch(`${server.url}/media/channel-icons/${group.id}/${hash}.webp`);
    assert.equal(webp.status, 200);
    assert.equal(webp.headers.get('content-type'), 'image/webp');
    const stale = await fetch(`${server.url}/media/channel-icons/${group.id}/00000000.png`);
    assert.equal(stale.status, 404);
    assert.equal(((await stale.json()) as any).code, 'NOT_FOUND');
    // Not a guild icon: the guild icon route does not serve it.
    assert.equal((await fetch(`${server.url}/media/icons/${group.id}/${hash}.png`)).status, 404);
  });

  it('posts no system message when the icon stays the same, and one when it is removed', async () => {
    const group = await newGroup('quiet');
    const hash = (await ok(as(server, alice, 'PATCH', `/channels/${group.id}`, { icon: dataUri(png) }))).icon;
    events.clear();
    const renamed = await ok(as(server, carol, 'PATCH', `/channels/${group.id}`, { name: 'loud' }));
    assert.equal(renamed.icon, hash, 'an absent icon is left as it was');
    const renamedNotice = events.one('MESSAGE_CREATE').payload as any;
    assert.deepEqual([renamedNotice.type, renamedNotice.content, renamedNotice.author.id], [4, 'loud', carol.id]);
    events.clear();
    const same = await ok(as(server, carol, 'PATCH', `/channels/${group.id}`, { icon: dataUri(png), name: 'loud' }));
    assert.equal(same.icon, hash);
    assert.equal(events.of('MESSAGE_CREATE').length, 0, 'the same name and the same image post nothing');
    assert.equal(events.of('CHANNEL_UPDATE').length, 3);

    events.clear();
    const cleared = await ok(as(server, carol, 'PATCH', `/channels/${group.id}`, { icon: null }));
    assert.equal(cleared.icon, null);
    const system = events.one('MESSAGE_CREATE').payload as any;
    assert.deepEqual([system.type, system.author.id], [5, carol.id]);
    assert.equal((await ok(as(server, bob, 'GET', `/channels/${group.id}`))).icon, null);
  });

  it('a rename posts a CHANNEL_NAME_CHANGE (type 4) with the new name; each rename its own, a same-name PATCH none', async () => {
    const group = await newGroup('before');
    events.clear();
    await ok(as(server, bob, 'PATCH', `/channels/${group.id}`, { name: 'after' }));
    await ok(as(server, alice, 'PATCH', `/channels/${group.id}`, { name: 'again' }));
    await ok(as(server, carol, 'PATCH', `/channels/${group.id}`, { name: 'again' }));
    const history = await ok(as(server, carol, 'GET', `/channels/${group.id}/messages`));
    assert.deepEqual(
      history.map((m: any) => [m.type, m.content, m.author.id]),
      [
        [4, 'again', alice.id],
        [4, 'after', bob.id],
      ],
    );
    assert.equal((await ok(as(server, carol, 'GET', `/channels/${group.id}`))).name, 'again');
  });

  it('refuses a bad data URI with the same 400 as an avatar, and changes nothing', async () => {
    const group = await newGroup('strict');
    for (const bad of ['data:image/png;base64,aGVsbG8=', 'https://example.com/x.png', 'data:text/plain;base64,aGk=']) {
      const avatar = await as(server, bob, 'PATCH', '/users/@me', { avatar: bad });
      const icon = await as(server, bob, 'PATCH', `/channels/${group.id}`, { icon: bad });
      assert.equal(icon.status, 400);
      assert.equal(icon.body.code, 'INVALID_FORM_BODY');
      assert.deepEqual(
        icon.body.errors.map((e: any) => [e.path, e.code]),
        [['icon', 'INVALID_FORMAT']],
      );
      assert.equal(avatar.status, icon.status);
      assert.deepEqual(
        { ...icon.body, errors: icon.body.errors.map((e: any) => ({ ...e, path: 'avatar' })) },
        avatar.body,
        'the same body as an avatar, but for the field',
      );
    }
    assert.equal((await ok(as(server, bob, 'GET', `/channels/${group.id}`))).icon, null);
  });

  it('still serves an icon stored beside guild icons, where group DM icons were kept before', async () => {
    const group = await newGroup('older');
    await server.app.services.objects.put(`icons/${group.id}/0123abcd`, png, 'image/png');
    const served = await fetch(`${server.url}/media/channel-icons/${group.id}/0123abcd.png?size=32`);
    assert.equal(served.status, 200);
    assert.equal((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width, 32);
    assert.equal((await fetch(`${server.url}/media/channel-icons/${group.id}/0123abce.png`)).status, 404);
    assert.equal((await fetch(`${server.url}/media/channel-icons/${group.id}/not-a-hash.png`)).status, 404);
  });

  it('refuses people outside the group, and 1:1 DMs', async () => {
    const group = await newGroup('closed');
    const dave = await registerUser(server);
    const outsider = await as(server, dave, 'PATCH', `/channels/${group.id}`, { icon: dataUri(png) });
    assert.equal(outsider.status, 403);
    assert.equal(outsider.body.code, 'MISSING_ACCESS');
    const dm = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipient_id: bob.id }));
    const oneToOne = await as(server, alice, 'PATCH', `/channels/${dm.id}`, { icon: dataUri(png) });
    assert.equal(oneToOne.status, 403);
    assert.equal(oneToOne.body.code, 'MISSING_PERMISSIONS');
    assert.equal((await ok(as(server, alice, 'GET', `/channels/${group.id}`))).icon, null);
  });
});
