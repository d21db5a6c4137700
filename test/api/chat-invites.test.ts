import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { as, bits, DispatchRecorder, newGuild, ok, P } from '../support/chat.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
let owner: TestUser;
let guild: any;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
  owner = await registerUser(server);
  guild = await newGuild(server, owner, 'Invitational');
});
after(async () => {
  events?.close();
  await server?.close();
});

const clock = (offset_ms: number) => request(server, 'POST', '/v1/test/clock', { harness: true, body: { offset_ms } });

describe('invites', () => {
  it('creates an 8-character base62 invite with metadata and dispatches INVITE_CREATE', async () => {
    events.clear();
    const res = await as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, {
      max_age: 3600,
      max_uses: 5,
    });
    assert.equal(res.status, 200);
    const invite = res.body;
    assert.match(invite.code, /^[A-Za-z0-9]{8}$/);
    assert.equal(invite.type, 0);
    assert.deepEqual(invite.guild, { id: guild.id, name: 'Invitational', icon: null, features: [] });
    assert.deepEqual(invite.channel, { id: guild.system_channel_id, name: 'general', type: 0 });
    assert.equal(invite.inviter.id, owner.id);
    assert.equal(invite.member_count, 1);
    assert.equal(invite.max_age, 3600);
    assert.equal(invite.max_uses, 5);
    assert.equal(invite.uses, 0);
    assert.equal(invite.temporary, false);
    assert.equal(Date.parse(invite.expires_at) - Date.parse(invite.created_at), 3600_000);
    const dispatched = events.one('INVITE_CREATE');
    assert.equal(dispatched.payload.code, invite.code);
    assert.deepEqual(dispatched.audience, { kind: 'channel', guildId: guild.id, channelId: guild.system_channel_id });
  });

  it('defaults to never expiring, and reuses an identical invite unless unique', async () => {
    const a = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, {}));
    assert.equal(a.max_age, 0);
    assert.equal(a.expires_at, null);
    const b = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, {}));
    assert.equal(b.code, a.code);
    const c = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true }));
    assert.notEqual(c.code, a.code);
  });

  it('is readable without authentication, without metadata', async () => {
    const invite = await ok(
      as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true }),
    );
    const res = await request(server, 'GET', `/v1/invites/${invite.code}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.code, invite.code);
    assert.equal(res.body.guild.id, guild.id);
    assert.equal(res.body.uses, undefined);
    const unknown = await request(server, 'GET', '/v1/invites/zzzzzzzz');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_INVITE');
    const weird = await request(server, 'GET', '/v1/invites/abc-def!');
    assert.equal(weird.body.code, 'UNKNOWN_INVITE');
  });

  it('accepts idempotently, counting a use once and dispatching the join', async () => {
    const user = await registerUser(server);
    const invite = await ok(
      as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true }),
    );
    events.clear();
    const res = await as(server, user, 'POST', `/invites/${invite.code}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.guild.id, guild.id);
    const add = events.one('GUILD_MEMBER_ADD');
    assert.deepEqual(add.audience, { kind: 'guild', guildId: guild.id });
    assert.equal((add.payload.user as any).id, user.id);
    assert.equal(add.payload.guild_id, guild.id);
    const create = events.one('GUILD_CREATE');
    assert.deepEqual(create.audience, { kind: 'users', userIds: [user.id] });
    const joinMessage = events.one('MESSAGE_CREATE');
    assert.equal(joinMessage.payload.type, 7);
    assert.equal((joinMessage.payload.author as any).id, user.id);
    events.clear();
    assert.equal((await as(server, user, 'POST', `/invites/${invite.code}`)).status, 200);
    assert.equal(events.seen.length, 0, 'joining twice changes nothing');
    const list = await ok(as(server, owner, 'GET', `/channels/${guild.system_channel_id}/invites`));
    assert.equal(list.find((i: any) => i.code === invite.code).uses, 1);
  });

  it('stops at max_uses', async () => {
    const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { max_uses: 1 }));
    const first = await registerUser(server);
    const second = await registerUser(server);
    assert.equal((await as(server, first, 'POST', `/invites/${invite.code}`)).status, 200);
    const res = await as(server, second, 'POST', `/invites/${invite.code}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'UNKNOWN_INVITE');
  });

  it('expires after max_age', async () => {
    const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { max_age: 60 }));
    const user = await registerUser(server);
    await clock(61_000);
    try {
      const res = await as(server, user, 'POST', `/invites/${invite.code}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'UNKNOWN_INVITE');
      assert.equal((await request(server, 'GET', `/v1/invites/${invite.code}`)).status, 404);
    } finally {
      await clock(0);
    }
  });

  it('is user-only to accept', async () => {
    const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, {}));
    const { createApplication } = await import('../support/applications.ts');
    const app = await createApplication(server, owner);
    const res = await as(server, { auth: `Bot ${app.botToken}` }, 'POST', `/invites/${invite.code}`);
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ACCESS_DENIED');
  });

  it('needs CREATE_INSTANT_INVITE to create and MANAGE_CHANNELS / MANAGE_GUILD to list', async () => {
    const user = await registerUser(server);
    const invite = await ok(as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, {}));
    await ok(as(server, user, 'POST', `/invites/${invite.code}`));
    assert.equal((await as(server, user, 'POST', `/channels/${guild.system_channel_id}/invites`, {})).status, 200);
    assert.equal(
      (await as(server, user, 'GET', `/channels/${guild.system_channel_id}/invites`)).body.code,
      'MISSING_PERMISSIONS',
    );
    assert.equal((await as(server, user, 'GET', `/guilds/${guild.id}/invites`)).body.code, 'MISSING_PERMISSIONS');
    const all = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/invites`));
    assert.ok(all.length >= 3);
    assert.ok(all.every((i: any) => typeof i.uses === 'number'));
    await ok(
      as(server, owner, 'PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
        permissions: bits(P.VIEW_CHANNEL, P.SEND_MESSAGES, P.READ_MESSAGE_HISTORY),
      }),
    );
    const denied = await as(server, user, 'POST', `/channels/${guild.system_channel_id}/invites`, {});
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
  });

  it('deletes for the creator or MANAGE_GUILD, dispatching INVITE_DELETE', async () => {
    const user = await registerUser(server);
    const other = await registerUser(server);
    const invite = await ok(
      as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { unique: true }),
    );
    await ok(as(server, user, 'POST', `/invites/${invite.code}`));
    await ok(as(server, other, 'POST', `/invites/${invite.code}`));
    const denied = await as(server, user, 'DELETE', `/invites/${invite.code}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'MISSING_PERMISSIONS');
    events.clear();
    assert.equal((await as(server, owner, 'DELETE', `/invites/${invite.code}`)).status, 204);
    assert.deepEqual(events.one('INVITE_DELETE').payload, {
      code: invite.code,
      channel_id: guild.system_channel_id,
      guild_id: guild.id,
    });
    assert.equal((await as(server, owner, 'DELETE', `/invites/${invite.code}`)).body.code, 'UNKNOWN_INVITE');
  });
});
