import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, befriend, guildWithMembers, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * A deleted message's files leave the object store (docs/media.md, Attachments): deleted one by one, in bulk, by a
 * ban's purge (the request), with their channel, thread or guild (the janitor's sweep); a forward keeps what it shows.
 */
let server: TestServer;
let owner: TestUser;
let member: TestUser;
let banned: TestUser;
let guildId: string;
let channelId: string;

/** Sends a message with one text file per name to `path` (a channel's messages, a webhook), as `token` if given. */
async function sendFiles(path: string, token: string | undefined, content: string, names: string[]) {
  const body = new FormData();
  body.append(
    'payload_json',
    JSON.stringify({ content, attachments: names.map((filename, id) => ({ id, filename })) }),
  );
  names.forEach((name, index) => {
    body.append(`files[${index}]`, new Blob([`text of ${name}\n`], { type: 'text/plain' }), name);
  });
  const res = await fetch(`${server.url}/v1${path}`, {
    method: 'POST',
    body,
    headers: token ? { authorization: token } : {},
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { id: string; attachments: { id: string; url: string }[] };
}

const postFiles = (user: TestUser, channel: string, content: string, names: string[]) =>
  sendFiles(`/channels/${channel}/messages`, user.token, content, names);

/** The status each file's media URL answers now (through the real media route). */
async function served(...files: { url: string }[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const file of files) {
    const res = await fetch(file.url.replace(/^https?:\/\/[^/]+/, server.url));
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

const sweep = () => server.app.services.janitor.sweep();

before(async () => {
  server = await startTestServer();
  const setup = await guildWithMembers(server, 2);
  owner = setup.owner;
  member = setup.members[0] as TestUser;
  banned = setup.members[1] as TestUser;
  guildId = setup.guild.id;
  channelId = setup.channelId;
});
after(async () => {
  await server?.close();
});

describe('files of deleted messages', () => {
  it('DELETE of one message: its files answer 404 at once, another message’s keep 200', async () => {
    const gone = await postFiles(member, channelId, 'two files', ['a.txt', 'b.txt']);
    const kept = await postFiles(member, channelId, 'stays', ['c.txt']);
    assert.deepEqual(await served(...gone.attachments, ...kept.attachments), [200, 200, 200]);
    await ok(as(server, member, 'DELETE', `/channels/${channelId}/messages/${gone.id}`), 204);
    assert.deepEqual(await served(...gone.attachments, ...kept.attachments), [404, 404, 200]);

    // A moderator's deletion of someone else's message, the same.
    await ok(as(server, owner, 'DELETE', `/channels/${channelId}/messages/${kept.id}`), 204);
    assert.deepEqual(await served(...kept.attachments), [404]);
  });

  it('bulk delete: the deleted messages’ files answer 404, the rest 200', async () => {
    const first = await postFiles(member, channelId, 'one', ['one.txt']);
    const second = await postFiles(owner, channelId, 'two', ['two.txt', 'three.txt']);
    const kept = await postFiles(member, channelId, 'kept', ['kept.txt']);
    await ok(
      as(server, owner, 'POST', `/channels/${channelId}/messages/bulk-delete`, { messages: [first.id, second.id] }),
      204,
    );
    assert.deepEqual(
      await served(...first.attachments, ...second.attachments, ...kept.attachments),
      [404, 404, 404, 200],
    );
  });

  it('a forward keeps the file it shows (200) until the forward is deleted too (404)', async () => {
    const source = await postFiles(owner, channelId, 'forward me', ['shown.txt']);
    const forward = await ok(
      as(server, member, 'POST', `/channels/${channelId}/messages`, {
        message_reference: { type: 1, message_id: source.id, channel_id: channelId },
      }),
    );
    await ok(as(server, owner, 'DELETE', `/channels/${channelId}/messages/${source.id}`), 204);
    const read = await ok(as(server, owner, 'GET', `/channels/${channelId}/messages/${forward.id}`));
    assert.deepEqual(read.message_snapshots[0].message.attachments, source.attachments);
    assert.deepEqual(await served(...source.attachments), [200]);
    await sweep();
    assert.deepEqual(await served(...source.attachments), [200]);

    await ok(as(server, member, 'DELETE', `/channels/${channelId}/messages/${forward.id}`), 204);
    assert.deepEqual(await served(...source.attachments), [404]);
  });

  it('a ban with delete_message_seconds: the purged messages’ files answer 404', async () => {
    const purged = await postFiles(banned, channelId, 'spam', ['spam.txt']);
    const other = await postFiles(member, channelId, 'not spam', ['fine.txt']);
    await ok(as(server, owner, 'PUT', `/guilds/${guildId}/bans/${banned.id}`, { delete_message_seconds: 3600 }), 204);
    const gone = await as(server, owner, 'GET', `/channels/${channelId}/messages/${purged.id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(await served(...purged.attachments, ...other.attachments), [404, 200]);
  });

  it('a deleted channel takes its threads’ and messages’ files with it at the janitor’s sweep; a forward elsewhere keeps its file', async () => {
    const doomed = await ok(as(server, owner, 'POST', `/guilds/${guildId}/channels`, { name: 'doomed' }));
    const inChannel = await postFiles(owner, doomed.id, 'in the channel', ['channel.txt']);
    const forwarded = await postFiles(owner, doomed.id, 'forwarded', ['forwarded.txt']);
    await ok(
      as(server, owner, 'POST', `/channels/${channelId}/messages`, {
        message_reference: { type: 1, message_id: forwarded.id, channel_id: doomed.id },
      }),
    );
    const thread = await ok(as(server, owner, 'POST', `/channels/${doomed.id}/threads`, { name: 'side', type: 11 }));
    const inThread = await postFiles(member, thread.id, 'in the thread', ['thread.txt']);
    assert.deepEqual(await served(...inChannel.attachments, ...inThread.attachments), [200, 200]);

    await ok(as(server, owner, 'DELETE', `/channels/${doomed.id}`), 204);
    await sweep();
    assert.deepEqual(
      await served(...inChannel.attachments, ...inThread.attachments, ...forwarded.attachments),
      [404, 404, 200],
    );
  });

  it('a deleted thread’s files answer 404 after the janitor’s sweep', async () => {
    const thread = await ok(as(server, owner, 'POST', `/channels/${channelId}/threads`, { name: 'short', type: 11 }));
    const message = await postFiles(member, thread.id, 'in a thread', ['short.txt']);
    await ok(as(server, owner, 'DELETE', `/channels/${thread.id}`), 204);
    await sweep();
    assert.deepEqual(await served(...message.attachments), [404]);
  });

  it('a webhook’s deletion of its message: the files answer 404 at once', async () => {
    const hook = await ok(as(server, owner, 'POST', `/channels/${channelId}/webhooks`, { name: 'Uploader' }));
    const message = await sendFiles(`/webhooks/${hook.id}/${hook.token}?wait=true`, undefined, 'hooked', ['hook.txt']);
    assert.deepEqual(await served(...message.attachments), [200]);
    await ok(as(server, { auth: '' }, 'DELETE', `/webhooks/${hook.id}/${hook.token}/messages/${message.id}`), 204);
    assert.deepEqual(await served(...message.attachments), [404]);
  });

  it('a group DM the last recipient left: its files answer 404 after the janitor’s sweep', async () => {
    const [alice, bob, carol] = [await registerUser(server), await registerUser(server), await registerUser(server)];
    await befriend(server, alice, bob);
    await befriend(server, alice, carol);
    const group = await ok(as(server, alice, 'POST', '/users/@me/channels', { recipients: [bob.id, carol.id] }));
    assert.equal(group.type, 3);
    const message = await postFiles(bob, group.id, 'in the group', ['group.txt']);
    for (const user of [bob, carol]) await ok(as(server, user, 'DELETE', `/channels/${group.id}`), 204);
    await sweep();
    assert.deepEqual(await served(...message.attachments), [200]);
    await ok(as(server, alice, 'DELETE', `/channels/${group.id}`), 204);
    await sweep();
    assert.deepEqual(await served(...message.attachments), [404]);
  });

  it('a deleted guild’s files answer 404 after the janitor’s sweep', async () => {
    const founder = await registerUser(server);
    const guild = await newGuild(server, founder, 'Short-lived');
    const message = await postFiles(founder, guild.system_channel_id, 'soon gone', ['guild.txt']);
    assert.deepEqual(await served(...message.attachments), [200]);
    await ok(as(server, founder, 'POST', `/guilds/${guild.id}/delete`, { password: founder.password }), 204);
    await sweep();
    assert.deepEqual(await served(...message.attachments), [404]);
  });
});
