import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { PG_BIN, type ReplicatedPostgres, startReplicatedPostgres } from '../support/pg-replica.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Reads that tolerate lag go to a streaming replica (docs/deployment.md#read-replica): a primary and a replica
 * started with Debian's PostgreSQL, replay paused on purpose to show which one answers.
 */
if (!PG_BIN) {
  console.warn('!!! test/api/read-replica.test.ts: no PostgreSQL server binaries (Debian package postgresql): NOT run');
} else {
  let cluster: ReplicatedPostgres;
  let server: TestServer;
  let owner: TestUser;
  let guildId: string;
  let channelId: string;

  before(async () => {
    cluster = await startReplicatedPostgres();
    server = await startTestServer({ DATABASE_URL: cluster.primaryUrl, DATABASE_REPLICA_URL: cluster.replicaUrl });
    owner = await registerUser(server);
    const guild = await request(server, 'POST', '/v1/guilds', { auth: owner.token, body: { name: 'Replicated' } });
    assert.equal(guild.status, 200, guild.text);
    guildId = guild.body.id;
    channelId = guild.body.system_channel_id;
  });
  after(async () => {
    await server?.close();
    await cluster?.close();
  });

  const post = async (content: string) => {
    const res = await request(server, 'POST', `/v1/channels/${channelId}/messages`, {
      auth: owner.token,
      body: { content },
    });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const found = async (word: string) => {
    const res = await request(server, 'GET', `/v1/guilds/${guildId}/messages/search?content=${word}`, {
      auth: owner.token,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.total_results as number;
  };

  describe('a read replica (DATABASE_REPLICA_URL)', () => {
    it('answers message search while history and writes stay on the primary', async () => {
      await post('alpha on both');
      await cluster.caughtUp();
      assert.equal(await found('alpha'), 1);

      await cluster.pauseReplay();
      try {
        const id = await post('bravo only on the primary');
        const history = await request(server, 'GET', `/v1/channels/${channelId}/messages?limit=5`, {
          auth: owner.token,
        });
        assert.equal(history.body[0].id, id, 'history reads the primary');
        assert.equal(await found('bravo'), 0, 'search reads the replica, which has not replayed it yet');
      } finally {
        await cluster.resumeReplay();
      }
      await cluster.caughtUp();
      assert.equal(await found('bravo'), 1);
    });

    it('is part of readiness', async () => {
      const ready = await request(server, 'GET', '/_ready');
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.body.checks, {
        database: 'ok',
        read_replica: 'ok',
        shared_state: 'ok',
        object_store: 'ok',
      });
    });
  });
}
