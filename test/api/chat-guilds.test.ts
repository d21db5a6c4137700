import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, request } from '../support/client.ts';
import { as, DispatchRecorder, join, newGuild, ok } from '../support/chat.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let events: DispatchRecorder;
before(async () => {
  server = await startTestServer();
  events = new DispatchRecorder(server);
});
after(async () => {
  events?.close();
  await server?.close();
});

describe('guild creation', () => {
  it('creates a guild with @everyone and a general system channel, and tells the owner', async () => {
    const owner = await registerUser(server);
    events.clear();
    const res = await as(server, owner, 'POST', '/guilds', { name: 'My place' });
    assert.equal(res.status, 200);
    const guild = res.body;
    assert.match(guild.id, /^\d+$/);
    assert.equal(guild.name, 'My place');
    assert.equal(guild.owner_id, owner.id);
    assert.match(guild.system_channel_id, /^\d+$/);
    const everyone = guild.roles.find((r: any) => r.id === guild.id);
    assert.equal(everyone.name, '@everyone');
    assert.equal(everyone.permissions, String(0n | (1n << 0n) | (1n << 6n) | (1n << 9n) | (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n) | (1n << 18n) | (1n << 20n) | (1n << 21n) | (1n << 25n) | (1n << 26n) | (1n << 37n) | (1n << 43n)));
    const channels = await ok(as(server, owner, 'GET', `/guilds/${guild.id}/channels`));
    assert.equal(channels.length, 1);
    assert.equal(channels[0].id, guild.system_channel_id);
    assert.equal(channels[0].name, 'general');
    assert.equal(channels[0].type, 0);
    const created = events.one('GUILD_CREATE');
    assert.deepEqual(created.audience, { kind: 'users', userIds: [owner.id] });
    assert.equal(created.payload.id, guild.id);
    assert.equal((created.payload.properties as any).name, 'My place');
    assert.equal((created.payload.channels as any[]).length, 1);
    assert.equal(created.payload.member_count, 1);
  });
});
