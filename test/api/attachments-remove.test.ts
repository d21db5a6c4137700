import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { as, DispatchRecorder, guildWithMembers, ok } from '../support/chat.ts';
import type { TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Removing one attachment (docs/media.md, Attachments): an edit listing the ones that stay. */
let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let member: TestUser;
let channelId: string;
let png: Buffer;

async function postFiles(user: TestUser, content: string, names: string[]) {
  const body = new FormData();
  body.append(
    'payload_json',
    JSON.stringify({ content, attachments: names.map((filename, id) => ({ id, filename })) }),
  );
  names.forEach((name, index) => {
    const bytes = name.endsWith('.png') ? png : Buffer.from(`text of ${name}\n`);
    const type = name.endsWith('.png') ? 'image/png' : 'text/plain';
    body.append(`files[${index}]`, new Blob([new Uint8Array(bytes)], { type }), name);
  });
  const res = await fetch(`${server.url}/v1/channels/${channelId}/messages`, {
    method: 'POST',
    body,
    headers: { authorization: user.token },
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as any;
}

/** The status a file's media URL answers now. */
async function served(url: string): Promise<number> {
  const res = await fetch(url.replace(/^https?:\/\/[^/]+/, server.url));
  await res.arrayBuffer();
  return res.status;
}

before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#aa3300' } })
    .png()
    .toBuffer();
  const setup = await guildWithMembers(server, 1);
  owner = setup.owner;
  member = setup.members[0] as TestUser;
  channelId = setup.channelId;
});
after(async () => {
  events?.close();
  await server?.close();
});

describe('removing one attachment', () => {
  it('keeps the listed ones, announces the new list and stops serving the removed file', async () => {
    const message = await postFiles(owner, 'two files', ['photo.png', 'notes.txt']);
    const [photo, notes] = message.attachments;
    assert.equal(await served(photo.url), 200);

    // Someone else cannot remove it.
    const foreign = await as(server, member, 'PATCH', `/channels/${channelId}/messages/${message.id}`, {
      attachments: [{ id: notes.id }],
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.code, 'CANNOT_EDIT_OTHER_USER_MESSAGE');
    assert.equal(await served(photo.url), 200);

    events.clear();
    const edited = await as(server, owner, 'PATCH', `/channels/${channelId}/messages/${message.id}`, {
      attachments: [{ id: notes.id }],
    });
    assert.equal(edited.status, 200, edited.text);
    assert.deepEqual(edited.body.attachments, [notes]);
    assert.equal(edited.body.content, 'two files');
    const update = events.one('MESSAGE_UPDATE', (d) => (d.payload as any).id === message.id);
    assert.deepEqual((update.payload as any).attachments, [notes]);
    const read = await ok(as(server, member, 'GET', `/channels/${channelId}/messages/${message.id}`));
    assert.deepEqual(read.attachments, [notes]);
    assert.equal(await served(photo.url), 404);
    assert.equal(await served(notes.url), 200);

    // The last one too, when the message keeps its words.
    const emptied = await ok(
      as(server, owner, 'PATCH', `/channels/${channelId}/messages/${message.id}`, { attachments: [] }),
    );
    assert.deepEqual(emptied.attachments, []);
    assert.equal(await served(notes.url), 404);
  });

  it('refuses removing the only content, and leaves the file', async () => {
    const message = await postFiles(owner, '', ['only.png']);
    const res = await as(server, owner, 'PATCH', `/channels/${channelId}/messages/${message.id}`, {
      attachments: [],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'CANNOT_SEND_EMPTY_MESSAGE');
    assert.equal(await served(message.attachments[0].url), 200);
  });

  it('keeps a file a forward of the message still shows', async () => {
    const message = await postFiles(owner, 'forward me', ['kept.png']);
    const [kept] = message.attachments;
    const forward = await ok(
      as(server, member, 'POST', `/channels/${channelId}/messages`, {
        message_reference: { type: 1, message_id: message.id, channel_id: channelId },
      }),
    );
    const edited = await ok(
      as(server, owner, 'PATCH', `/channels/${channelId}/messages/${message.id}`, { attachments: [] }),
    );
    assert.deepEqual(edited.attachments, []);
    const read = await ok(as(server, member, 'GET', `/channels/${channelId}/messages/${forward.id}`));
    assert.deepEqual(read.message_snapshots[0].message.attachments, [kept]);
    assert.equal(await served(kept.url), 200);
  });
});
