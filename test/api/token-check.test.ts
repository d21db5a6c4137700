import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { digest, randomBase62 } from '../../src/platform/crypto/tokens.ts';
import { registerUser, request } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

/** Counts the credential look-ups (reads by token digest) the database runs while `work` does. */
async function statementsDuring(work: () => Promise<void>): Promise<number> {
  const db = server.app.services.db;
  const original = db.query.bind(db);
  let count = 0;
  db.query = ((...args: Parameters<typeof original>) => {
    // Background work (the janitor, batched last-used writes) may run meanwhile; only look-ups count.
    if (/^\s*SELECT/i.test(String(args[0])) && /token_hash|FROM applications/i.test(String(args[0]))) count++;
    return original(...args);
  }) as typeof db.query;
  try {
    await work();
  } finally {
    db.query = original;
  }
  return count;
}

describe('keyed check part in tokens', () => {
  test('issued session tokens keep the flx_ + 36 form and work', async () => {
    const user = await registerUser(server);
    assert.match(user.token, /^flx_[A-Za-z0-9]{36}$/);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: user.token });
    assert.equal(me.status, 200);
  });

  test('100 distinct forged session and bot tokens are refused without a database read', async () => {
    const statements = await statementsDuring(async () => {
      for (let i = 0; i < 50; i++) {
        const session = await request(server, 'GET', '/v1/users/@me', { auth: `flx_${randomBase62(36)}` });
        assert.equal(session.status, 401);
        assert.deepEqual(session.body, { code: 'UNAUTHORIZED', message: 'Unauthorized' });
        const bot = await request(server, 'GET', '/v1/users/@me', {
          auth: `Bot 1234567890123456.${randomBase62(43)}`,
        });
        assert.equal(bot.status, 401);
      }
    });
    assert.equal(statements, 0);
  });

  test('a session token issued before check parts (listed as legacy) keeps working', async () => {
    const user = await registerUser(server);
    const legacy = `flx_${randomBase62(36)}`;
    const { db, ids } = server.app.services;
    await db.query(
      `INSERT INTO sessions (id, user_id, token_hash, client_info, ip, created_at, last_used_at)
       VALUES ($1, $2, $3, '{}', '127.0.0.1', now(), now())`,
      [ids.next(), user.id, digest(legacy)],
    );
    const before = await request(server, 'GET', '/v1/users/@me', { auth: legacy });
    assert.equal(before.status, 401, 'not listed: refused by its check part');
    await db.query('INSERT INTO legacy_token_digests (token_hash) VALUES ($1)', [digest(legacy)]);
    await server.app.services.legacyTokenDigests.load();
    // The refusal above was cached briefly as unknown; a restart would not have it.
    await server.app.services.credentials.invalidate({ all: true });
    const after = await request(server, 'GET', '/v1/users/@me', { auth: legacy });
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.id, user.id);
  });
});
