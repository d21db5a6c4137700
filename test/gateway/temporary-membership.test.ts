import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { as, newGuild, ok } from '../support/chat.ts';
import { registerUser, type TestUser } from '../support/client.ts';
import { createTestDatabase } from '../support/pg-database.ts';
import { newTestSecrets, startTestServer, type TestServer } from '../support/server.ts';
import { type Frame, GatewayClient } from './gateway-client.ts';

/**
 * Invite `temporary` membership (issue 16, Discord's semantics): whoever joins through a temporary invite is
 * removed when their last gateway session goes away, unless they hold a role by then.
 */
let server: TestServer;
let owner: TestUser;
let guild: { id: string; system_channel_id: string };
let watcher: GatewayClient;
const open: GatewayClient[] = [];

async function connect(target: TestServer, user: TestUser, extra: Record<string, unknown> = {}) {
  const client = GatewayClient.connect(target);
  open.push(client);
  await client.ready(user.token, extra);
  return client;
}

async function invite(temporary: boolean, on: TestServer = server): Promise<any> {
  return ok(as(on, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { temporary, unique: true }));
}

const removed = (userId: string) => (f: Frame) =>
  f.t === 'GUILD_MEMBER_REMOVE' && f.d.guild_id === guild.id && f.d.user.id === userId;
const offline = (userId: string) => (f: Frame) =>
  f.t === 'PRESENCE_UPDATE' && f.d.user.id === userId && f.d.status === 'offline' && f.d.guild_id === guild.id;

async function memberStatus(userId: string, on: TestServer = server): Promise<number> {
  return (await as(on, owner, 'GET', `/guilds/${guild.id}/members/${userId}`)).status;
}

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  guild = await newGuild(server, owner, 'Drop-in');
  watcher = await connect(server, owner);
});

after(async () => {
  await Promise.all(open.map((c) => c.close(1000)));
  await server?.close();
});

describe('temporary membership', () => {
  it('announces itself on the invite, and ends when the member disconnects', async () => {
    const temp = await invite(true);
    assert.equal(temp.temporary, true);
    assert.equal((await ok(as(server, owner, 'GET', `/invites/${temp.code}`))).temporary, true);
    const user = await registerUser(server);
    const gw = await connect(server, user);
    const joined = await ok(as(server, user, 'POST', `/invites/${temp.code}`));
    assert.equal(joined.temporary, true);
    assert.equal((await gw.dispatch('GUILD_CREATE')).d.id, guild.id);
    await watcher.next((f) => f.t === 'GUILD_MEMBER_ADD' && f.d.user.id === user.id);
    assert.equal(await memberStatus(user.id), 200);

    await gw.close(1000);
    const remove = await watcher.next(removed(user.id));
    assert.equal(remove.d.user.username, user.username);
    const gone = await as(server, owner, 'GET', `/guilds/${guild.id}/members/${user.id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { code: 'UNKNOWN_MEMBER', message: 'Unknown member' });
    const outside = await as(server, user, 'GET', `/guilds/${guild.id}/channels`);
    assert.equal(outside.status, 403);
    assert.equal(outside.body.code, 'MISSING_ACCESS');
    // Back online, the guild is no longer theirs; the same invite lets them in again (temporarily).
    const again = GatewayClient.connect(server);
    open.push(again);
    const ready = await again.ready(user.token);
    assert.equal(
      ready.d.guilds.some((g: { id: string }) => g.id === guild.id),
      false,
    );
    await ok(as(server, user, 'POST', `/invites/${temp.code}`));
    assert.equal(await memberStatus(user.id), 200);
    await again.terminate();
    await watcher.next(removed(user.id));
    assert.equal(await memberStatus(user.id), 404);
  });

  it('lasts while any of the member’s sessions is still open', async () => {
    const temp = await invite(true);
    const user = await registerUser(server);
    const first = await connect(server, user, {
      presence: { status: 'online', afk: false, activities: [{ name: 'first', type: 0 }] },
    });
    await connect(server, user, {
      presence: { status: 'online', afk: false, activities: [{ name: 'second', type: 0 }] },
    });
    await ok(as(server, user, 'POST', `/invites/${temp.code}`));
    await watcher.next((f) => f.t === 'GUILD_MEMBER_ADD' && f.d.user.id === user.id);
    await first.close(1000);
    // The presence that follows the first close is announced after the membership was decided on.
    const shown = await watcher.next(
      (f) =>
        f.t === 'PRESENCE_UPDATE' &&
        f.d.user.id === user.id &&
        f.d.guild_id === guild.id &&
        f.d.activities.length === 1 &&
        f.d.activities[0].name === 'second',
    );
    assert.equal(shown.d.status, 'online');
    assert.equal(await memberStatus(user.id), 200);
  });

  it('becomes permanent when the member was given a role meanwhile', async () => {
    const temp = await invite(true);
    const role = await ok(as(server, owner, 'POST', `/guilds/${guild.id}/roles`, { name: 'regular' }));
    const user = await registerUser(server);
    const gw = await connect(server, user);
    await ok(as(server, user, 'POST', `/invites/${temp.code}`));
    await ok(as(server, owner, 'PUT', `/guilds/${guild.id}/members/${user.id}/roles/${role.id}`), 204);
    await gw.close(1000);
    await watcher.next(offline(user.id));
    const kept = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/members/${user.id}`));
    assert.deepEqual(kept.roles, [role.id]);
    // Having survived one disconnect with a role, the membership is an ordinary one: losing the role is fine.
    await ok(as(server, owner, 'DELETE', `/guilds/${guild.id}/members/${user.id}/roles/${role.id}`), 204);
    const back = await connect(server, user);
    await back.close(1000);
    await watcher.next(offline(user.id));
    assert.equal(await memberStatus(user.id), 200);
  });

  it('becomes permanent through an ordinary invite, and ordinary members never leave on disconnect', async () => {
    const temp = await invite(true);
    const normal = await invite(false);
    const upgraded = await registerUser(server);
    const gw = await connect(server, upgraded);
    await ok(as(server, upgraded, 'POST', `/invites/${temp.code}`));
    const accepted = await as(server, upgraded, 'POST', `/invites/${normal.code}`);
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.temporary, false);
    await gw.close(1000);
    await watcher.next(offline(upgraded.id));
    assert.equal(await memberStatus(upgraded.id), 200);

    const plain = await registerUser(server);
    const plainGw = await connect(server, plain);
    await ok(as(server, plain, 'POST', `/invites/${normal.code}`));
    await plainGw.terminate();
    await watcher.next(offline(plain.id));
    assert.equal(await memberStatus(plain.id), 200);
  });

  it('refuses a temporary invite that is not a boolean', async () => {
    const res = await as(server, owner, 'POST', `/channels/${guild.system_channel_id}/invites`, { temporary: 'yes' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_FORM_BODY');
  });
});

// Two processes sharing PostgreSQL and Redis: the sessions of one member on both; only the last close ends it.
const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (adminUrl && redisUrl)
  describe('temporary membership across processes', () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    it('ends only when the member’s last session, on whichever process, goes away', async () => {
      const database = await createTestDatabase(adminUrl, 'temp');
      cleanups.push(database.drop);
      const env = {
        DATABASE_URL: database.url,
        HEARTH_SHARED_OBJECT_DIR: 'true',
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: `hearth-temp-${randomBytes(6).toString('hex')}:`,
      };
      const secrets = newTestSecrets();
      const a = await startTestServer(env, { secrets });
      cleanups.push(() => a.close());
      const b = await startTestServer(env, { secrets });
      cleanups.push(() => b.close());

      const host = await registerUser(a);
      const space = await ok(as(a, host, 'POST', '/guilds', { name: 'two nodes' }));
      const hostGw = GatewayClient.connect(a);
      open.push(hostGw);
      await hostGw.ready(host.token);
      const temp = await ok(
        as(a, host, 'POST', `/channels/${space.system_channel_id}/invites`, { temporary: true, unique: true }),
      );
      const user = await registerUser(a);
      const onA = GatewayClient.connect(a);
      open.push(onA);
      await onA.ready(user.token, {
        presence: { status: 'online', afk: false, activities: [{ name: 'on a', type: 0 }] },
      });
      const onB = GatewayClient.connect(b);
      open.push(onB);
      await onB.ready(user.token, {
        presence: { status: 'online', afk: false, activities: [{ name: 'on b', type: 0 }] },
      });
      await ok(as(b, user, 'POST', `/invites/${temp.code}`));
      await hostGw.next((f) => f.t === 'GUILD_MEMBER_ADD' && f.d.user.id === user.id);

      await onA.close(1000);
      await hostGw.next(
        (f) =>
          f.t === 'PRESENCE_UPDATE' &&
          f.d.user.id === user.id &&
          f.d.guild_id === space.id &&
          f.d.activities.length === 1 &&
          f.d.activities[0].name === 'on b',
      );
      assert.equal((await as(a, host, 'GET', `/guilds/${space.id}/members/${user.id}`)).status, 200);

      await onB.close(1000);
      const remove = await hostGw.next(
        (f) => f.t === 'GUILD_MEMBER_REMOVE' && f.d.guild_id === space.id && f.d.user.id === user.id,
      );
      assert.equal(remove.d.user.id, user.id);
      const gone = await as(a, host, 'GET', `/guilds/${space.id}/members/${user.id}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'UNKNOWN_MEMBER');
      await hostGw.close(1000);
    });
  });
