import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayClient, readyClient } from '../gateway/gateway-client.ts';
import { as, assertOnlyFormError, guildWithMembers, ok, P } from '../support/chat.ts';
import { harness, registerUser, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let alice: TestUser;
let bob: TestUser;
let outsider: TestUser;
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
  outsider = await registerUser(server);
});
after(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server?.close();
});

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const schedule = (user: TestUser, channelId: string, body: Record<string, unknown>) =>
  as(server, user, 'POST', `/channels/${channelId}/scheduled-messages`, body);

/** Polls the author's list of a channel until `check` holds (the delivery task runs every 250 ms in test mode). */
async function listUntil(user: TestUser, channelId: string, check: (list: any[]) => boolean): Promise<any[]> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const list = await ok(as(server, user, 'GET', `/channels/${channelId}/scheduled-messages`));
    if (check(list)) return list;
    if (Date.now() > deadline) throw new Error(`timed out; list: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('scheduled messages (docs/chat.md#scheduled-messages)', () => {
  it('are made, listed, read, edited and cancelled by their author only', async () => {
    const at = inSeconds(3600);
    const made = await ok(schedule(alice, general, { content: 'later', scheduled_at: at }));
    assert.match(made.id, /^\d+$/);
    assert.deepEqual(
      { ...made, id: undefined, created_at: undefined },
      {
        id: undefined,
        channel_id: general,
        scheduled_at: new Date(at).toISOString(),
        created_at: undefined,
        content: 'later',
        embeds: [],
        allowed_mentions: null,
        message_reference: null,
        flags: 0,
        tts: false,
        failure: null,
      },
    );
    assert.deepEqual(await ok(as(server, alice, 'GET', `/channels/${general}/scheduled-messages`)), [made]);
    assert.deepEqual(await ok(as(server, alice, 'GET', `/channels/${general}/scheduled-messages/${made.id}`)), made);
    // Another member sees none of it and cannot touch it.
    assert.deepEqual(await ok(as(server, bob, 'GET', `/channels/${general}/scheduled-messages`)), []);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { content: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await as(server, bob, method, `/channels/${general}/scheduled-messages/${made.id}`, body);
      assert.equal(res.status, 404, `${method}: ${res.text}`);
      assert.equal(res.body.code, 'UNKNOWN_SCHEDULED_MESSAGE');
    }
    const later = inSeconds(7200);
    const edited = await ok(
      as(server, alice, 'PATCH', `/channels/${general}/scheduled-messages/${made.id}`, {
        content: 'even later',
        scheduled_at: later,
      }),
    );
    assert.equal(edited.content, 'even later');
    assert.equal(edited.scheduled_at, new Date(later).toISOString());
    const cancelled = await as(server, alice, 'DELETE', `/channels/${general}/scheduled-messages/${made.id}`);
    assert.equal(cancelled.status, 204);
    const again = await as(server, alice, 'DELETE', `/channels/${general}/scheduled-messages/${made.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'UNKNOWN_SCHEDULED_MESSAGE');
    assert.deepEqual(await ok(as(server, alice, 'GET', `/channels/${general}/scheduled-messages`)), []);
  });

  it('refuses what a message would be refused, and a time in the past or over a year ahead', async () => {
    assertOnlyFormError(await schedule(alice, general, { content: 'x' }), 'scheduled_at', 'BASE_TYPE_REQUIRED');
    assertOnlyFormError(
      await schedule(alice, general, { content: 'x', scheduled_at: 'tomorrow' }),
      'scheduled_at',
      'INVALID_FORMAT',
    );
    assertOnlyFormError(
      await schedule(alice, general, { content: 'x', scheduled_at: inSeconds(-60) }),
      'scheduled_at',
      'INVALID_FORMAT',
    );
    assertOnlyFormError(
      await schedule(alice, general, { content: 'x', scheduled_at: inSeconds(366 * 24 * 3600) }),
      'scheduled_at',
      'INVALID_FORMAT',
    );
    const empty = await schedule(alice, general, { content: '  ', scheduled_at: inSeconds(60) });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'CANNOT_SEND_EMPTY_MESSAGE');
    const voice = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/channels`, { name: 'talk', type: 2 }));
    const inVoice = await schedule(owner, voice.id, { content: 'x', scheduled_at: inSeconds(60) });
    assert.equal(inVoice.status, 400);
    assert.equal(inVoice.body.code, 'CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL');
    // A stranger gets what posting a message there gets.
    const stranger = await schedule(outsider, general, { content: 'x', scheduled_at: inSeconds(60) });
    const posting = await as(server, outsider, 'POST', `/channels/${general}/messages`, { content: 'x' });
    assert.equal(stranger.status, 403);
    assert.deepEqual(stranger.body, posting.body);
    const badId = await as(server, alice, 'GET', `/channels/${general}/scheduled-messages/not-an-id`);
    assert.equal(badId.status, 404);
    assert.equal(badId.body.code, 'UNKNOWN_SCHEDULED_MESSAGE');
  });

  it('is posted on time as its author, to everyone in the channel, and leaves the list', async () => {
    const { client } = await readyClient(server, bob.token);
    sockets.push(client);
    const at = inSeconds(1.5);
    const made = await ok(schedule(alice, general, { content: 'posted on time', scheduled_at: at }));
    const frame = await client.dispatch('MESSAGE_CREATE', 8000);
    const message = frame.d as any;
    assert.equal(message.content, 'posted on time');
    assert.equal(message.author.id, alice.id);
    assert.equal(message.channel_id, general);
    assert.ok(Date.now() >= new Date(at).getTime(), 'not before its time');
    // Its id is minted at delivery, so it sorts after what was posted before it.
    const mintedAt = Number((BigInt(message.id) >> 22n) + 1420070400000n);
    assert.ok(mintedAt >= new Date(at).getTime(), `the message id is of the delivery time (${mintedAt} < ${at})`);
    const listed = await ok(as(server, alice, 'GET', `/channels/${general}/messages?limit=1`));
    assert.equal(listed[0].id, message.id);
    await listUntil(alice, general, (list) => list.every((s) => s.id !== made.id));
  });

  it('that can no longer be posted stays listed with the reason; edited, it waits and is posted', async () => {
    const made = await ok(schedule(bob, general, { content: 'denied', scheduled_at: inSeconds(1) }));
    // Bob loses SEND_MESSAGES in the channel before the time comes.
    await ok(
      as(server, owner, 'PUT', `/channels/${general}/permissions/${bob.id}`, {
        type: 1,
        allow: '0',
        deny: String(P.SEND_MESSAGES),
      }),
      204,
    );
    const [failed] = await listUntil(bob, general, (list) => list.some((s) => s.id === made.id && s.failure));
    assert.equal(failed.failure, 'MISSING_PERMISSIONS');
    // Editing it needs SEND_MESSAGES too; given back, the edit makes it wait again.
    const refused = await as(server, bob, 'PATCH', `/channels/${general}/scheduled-messages/${made.id}`, {
      scheduled_at: inSeconds(1),
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'MISSING_PERMISSIONS');
    await ok(as(server, owner, 'DELETE', `/channels/${general}/permissions/${bob.id}`), 204);
    const waiting = await ok(
      as(server, bob, 'PATCH', `/channels/${general}/scheduled-messages/${made.id}`, { scheduled_at: inSeconds(1) }),
    );
    assert.equal(waiting.failure, null);
    assert.equal(waiting.content, 'denied');
    await listUntil(bob, general, (list) => list.every((s) => s.id !== made.id));
    const recent = await ok(as(server, bob, 'GET', `/channels/${general}/messages?limit=5`));
    assert.ok(recent.some((m: any) => m.content === 'denied' && m.author.id === bob.id));
  });

  it('holds at most 100 waiting per account', async () => {
    const user = await registerUser(server);
    const invite = await ok(as(server, owner, 'POST', `/channels/${general}/invites`, {}));
    await ok(as(server, user, 'POST', `/invites/${invite.code}`));
    for (let i = 0; i < 100; i++) {
      if (i % 15 === 0) await harness(server, 'POST', '/rate-limits/reset');
      await ok(schedule(user, general, { content: `n${i}`, scheduled_at: inSeconds(3600) }));
    }
    await harness(server, 'POST', '/rate-limits/reset');
    const over = await schedule(user, general, { content: 'one too many', scheduled_at: inSeconds(3600) });
    assert.equal(over.status, 400);
    assert.equal(over.body.code, 'MAX_SCHEDULED_MESSAGES');
  });
});
