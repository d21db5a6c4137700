import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { CREDENTIALS_REVOKED_TOPIC, type CredentialsRevoked } from '../../src/domains/auth/sessions.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { createApplication } from '../support/applications.ts';
import { registerUser, request, type TestUser } from '../support/client.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let stranger: TestUser;
const revoked: CredentialsRevoked[] = [];

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  stranger = await registerUser(server);
  server.app.services.bus.subscribe(CREDENTIALS_REVOKED_TOPIC, (m) => revoked.push(m));
});
after(async () => {
  await server?.close();
});

const BOT_TOKEN = /^(\d+)\.[A-Za-z0-9_-]{43}$/;

describe('creating an application', () => {
  it('returns the application with its client secret and bot token, once', async () => {
    const res = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: owner.token,
      body: { name: 'My Cool App!', redirect_uris: ['https://app.example/cb', 'http://127.0.0.1:8000/cb'] },
    });
    assert.equal(res.status, 200);
    const app = res.body;
    assert.match(app.id, /^\d+$/);
    assert.equal(app.name, 'My Cool App!');
    assert.deepEqual(app.redirect_uris, ['https://app.example/cb', 'http://127.0.0.1:8000/cb']);
    assert.equal(app.bot_public, true);
    assert.equal(app.bot_require_code_grant, false);
    assert.match(app.client_secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(app.bot.id, app.id);
    assert.equal(app.bot.username, 'My_Cool_App');
    assert.equal(app.bot.discriminator, '0001');
    assert.equal(app.bot.mfa_enabled, false);
    assert.deepEqual(app.bot.authenticator_types, []);
    assert.equal(app.bot.flags, 0);
    const match = BOT_TOKEN.exec(app.bot.token);
    assert.ok(match, 'bot token has the <application_id>.<43 base64url> form');
    assert.equal(match[1], app.id);

    const again = await request(server, 'GET', `/v1/oauth2/applications/${app.id}`, { auth: owner.token });
    assert.equal(again.status, 200);
    assert.equal(again.body.client_secret, undefined);
    assert.equal(again.body.bot.token, undefined);
    assert.equal(again.body.bot.id, app.id);
  });

  it('stores the bot token and client secret only as digests', async () => {
    const app = await createApplication(server, owner);
    const [row] = await server.app.services.db.query<{ bot_token_hash: string; client_secret_hash: string }>(
      'SELECT bot_token_hash, client_secret_hash FROM applications WHERE id = $1',
      [app.id],
    );
    assert.equal(row?.bot_token_hash, digest(app.botToken));
    assert.equal(row?.client_secret_hash, digest(app.clientSecret));
    const [user] = await server.app.services.db.query<{ is_bot: boolean }>('SELECT is_bot FROM users WHERE id = $1', [
      app.id,
    ]);
    assert.equal(user?.is_bot, true);
  });

  it('the bot token authenticates the bot user', async () => {
    const app = await createApplication(server, owner, { name: 'whoami' });
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, app.id);
    assert.equal(me.body.bot, true);
  });

  it('validates the name and redirect URIs', async () => {
    const noName = await request(server, 'POST', '/v1/oauth2/applications', { auth: owner.token, body: {} });
    assert.equal(noName.status, 400);
    assert.equal(noName.body.code, 'INVALID_FORM_BODY');
    assert.equal(noName.body.errors[0].path, 'name');

    for (const bad of ['http://app.example/cb', 'ftp://x.example/', 'https://app.example/cb#frag', 'not a url']) {
      const res = await request(server, 'POST', '/v1/oauth2/applications', {
        auth: owner.token,
        body: { name: 'x', redirect_uris: ['https://ok.example/cb', bad] },
      });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.path, e.code]),
        [['redirect_uris.1', 'INVALID_REDIRECT_URI']],
      );
    }
    const tooMany = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: owner.token,
      body: { name: 'x', redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
    });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.errors[0].path, 'redirect_uris');
  });

  it('allows 25 applications per owner, then 400 MAX_APPLICATIONS', async () => {
    const busy = await registerUser(server);
    for (let i = 0; i < 25; i += 1) await createApplication(server, busy, { name: `app ${i}` });
    const res = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: busy.token,
      body: { name: 'one more' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'MAX_APPLICATIONS');
    const list = await request(server, 'GET', '/v1/users/@me/applications', { auth: busy.token });
    assert.equal(list.body.length, 25);
  });
});

describe('listing and reading applications', () => {
  it('lists only the caller’s applications, without secrets', async () => {
    const lister = await registerUser(server);
    const a = await createApplication(server, lister, { name: 'first' });
    const b = await createApplication(server, lister, { name: 'second' });
    await createApplication(server, stranger, { name: 'not mine' });
    for (const path of ['/v1/users/@me/applications', '/v1/oauth2/applications/@me']) {
      const res = await request(server, 'GET', path, { auth: lister.token });
      assert.equal(res.status, 200, path);
      assert.deepEqual(
        res.body.map((x: any) => x.id),
        [a.id, b.id],
      );
      for (const x of res.body) {
        assert.equal(x.client_secret, undefined);
        assert.equal(x.bot.token, undefined);
      }
    }
  });

  it('GET /oauth2/applications/@me with a bot token returns the bot’s own application', async () => {
    const app = await createApplication(server, owner, { name: 'selfie' });
    const res = await request(server, 'GET', '/v1/oauth2/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, app.id);
    assert.equal(res.body.owner.id, owner.id);
    assert.equal(res.body.bot.id, app.id);
    // The application's own Ed25519 public key, the one GET /applications/@me shows.
    assert.match(res.body.verify_key, /^[0-9a-f]{64}$/);
    const me = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(res.body.verify_key, me.body.verify_key);
    assert.equal(res.body.verify_key, app.body.verify_key);
  });

  it('owner-only: another user gets 403 ACCESS_DENIED, unknown ids 404 UNKNOWN_APPLICATION', async () => {
    const app = await createApplication(server, owner);
    for (const [method, path] of [
      ['GET', `/v1/oauth2/applications/${app.id}`],
      ['PATCH', `/v1/oauth2/applications/${app.id}`],
      ['PATCH', `/v1/oauth2/applications/${app.id}/bot`],
      ['DELETE', `/v1/oauth2/applications/${app.id}`],
      ['POST', `/v1/oauth2/applications/${app.id}/bot/reset-token`],
      ['POST', `/v1/oauth2/applications/${app.id}/client-secret/reset`],
    ] as const) {
      const res = await request(server, method, path, {
        auth: stranger.token,
        ...(method === 'GET' ? {} : { body: { password: stranger.password } }),
      });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.code, 'ACCESS_DENIED');
    }
    for (const id of ['1234567890123', 'abc', '99999999999999999999999']) {
      const res = await request(server, 'GET', `/v1/oauth2/applications/${id}`, { auth: owner.token });
      assert.equal(res.status, 404, id);
      assert.equal(res.body.code, 'UNKNOWN_APPLICATION');
    }
  });

  it('GET /oauth2/applications/{id}/public needs no credential and shows the caller when signed in', async () => {
    const app = await createApplication(server, owner, { name: 'Public', redirect_uris: ['https://p.example/cb'] });
    const anon = await request(server, 'GET', `/v1/oauth2/applications/${app.id}/public`);
    assert.equal(anon.status, 200);
    assert.equal(anon.body.id, app.id);
    assert.equal(anon.body.name, 'Public');
    assert.equal(anon.body.description, null);
    assert.deepEqual(anon.body.redirect_uris, ['https://p.example/cb']);
    assert.deepEqual(anon.body.scopes, ['identify', 'email', 'guilds', 'connections', 'bot', 'openid', 'profile']);
    assert.equal(anon.body.bot_public, true);
    assert.equal(anon.body.bot.id, app.id);
    assert.equal(anon.body.current_user, null);
    assert.equal(anon.body.client_secret, undefined);
    const signedIn = await request(server, 'GET', `/v1/oauth2/applications/${app.id}/public`, { auth: stranger.token });
    assert.equal(signedIn.body.current_user.id, stranger.id);
    const missing = await request(server, 'GET', '/v1/oauth2/applications/42/public');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'UNKNOWN_APPLICATION');
  });
});

describe('updating applications and bots', () => {
  it('PATCH changes only the given members; null clears the redirect URIs', async () => {
    const app = await createApplication(server, owner, { redirect_uris: ['https://a.example/cb'] });
    const res = await request(server, 'PATCH', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { name: 'Renamed', bot_public: false },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Renamed');
    assert.equal(res.body.bot_public, false);
    assert.deepEqual(res.body.redirect_uris, ['https://a.example/cb']);
    const cleared = await request(server, 'PATCH', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { redirect_uris: null, bot_require_code_grant: true },
    });
    assert.deepEqual(cleared.body.redirect_uris, []);
    assert.equal(cleared.body.bot_require_code_grant, true);
    assert.equal(cleared.body.name, 'Renamed');
    const bad = await request(server, 'PATCH', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { redirect_uris: ['http://evil.example/'] },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].code, 'INVALID_REDIRECT_URI');
  });

  it('PATCH /bot edits the bot profile and only flag bits 4 and 5', async () => {
    const app = await createApplication(server, owner);
    const res = await request(server, 'PATCH', `/v1/oauth2/applications/${app.id}/bot`, {
      auth: owner.token,
      body: { username: 'helper_bot', bio: 'I help', bot_flags: 16 },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      id: app.id,
      username: 'helper_bot',
      discriminator: '0001',
      avatar: null,
      banner: null,
      bio: 'I help',
      flags: 16,
    });
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(me.body.username, 'helper_bot');
    const bad = await request(server, 'PATCH', `/v1/oauth2/applications/${app.id}/bot`, {
      auth: owner.token,
      body: { bot_flags: 1 },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
    assert.equal(bad.body.errors[0].path, 'bot_flags');
  });
});

describe('secrets and deletion (sudo mode)', () => {
  it('resetting the bot token needs sudo, kills the old token and announces it to the gateway', async () => {
    const app = await createApplication(server, owner);
    const noSudo = await request(server, 'POST', `/v1/oauth2/applications/${app.id}/bot/reset-token`, {
      auth: owner.token,
    });
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');

    revoked.length = 0;
    const res = await request(server, 'POST', `/v1/oauth2/applications/${app.id}/bot/reset-token`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(res.status, 200);
    assert.match(res.body.token, BOT_TOKEN);
    assert.notEqual(res.body.token, app.botToken);
    assert.equal(res.body.bot.id, app.id);
    assert.equal(res.body.bot.token, undefined);
    assert.deepEqual(revoked, [{ kind: 'bot', userId: app.id, applicationId: app.id }]);

    const old = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'UNAUTHORIZED');
    const fresh = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${res.body.token}` });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.id, app.id);
  });

  it('resetting the client secret needs sudo and returns the new secret once', async () => {
    const app = await createApplication(server, owner);
    const noSudo = await request(server, 'POST', `/v1/oauth2/applications/${app.id}/client-secret/reset`, {
      auth: owner.token,
    });
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');
    const res = await request(server, 'POST', `/v1/oauth2/applications/${app.id}/client-secret/reset`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(res.status, 200);
    assert.match(res.body.client_secret, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(res.body.client_secret, app.clientSecret);
    assert.equal(res.body.id, app.id);
  });

  it('deleting needs sudo, then the application, bot token and listing entry are gone', async () => {
    const app = await createApplication(server, owner);
    const noSudo = await request(server, 'DELETE', `/v1/oauth2/applications/${app.id}`, { auth: owner.token });
    assert.equal(noSudo.status, 403);
    assert.equal(noSudo.body.code, 'SUDO_MODE_REQUIRED');
    const wrong = await request(server, 'DELETE', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { password: 'wrong-password-123' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errors[0].code, 'INVALID_PASSWORD');

    revoked.length = 0;
    const res = await request(server, 'DELETE', `/v1/oauth2/applications/${app.id}`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(res.status, 204);
    assert.deepEqual(revoked, [{ kind: 'bot', userId: app.id, applicationId: app.id }]);
    const get = await request(server, 'GET', `/v1/oauth2/applications/${app.id}`, { auth: owner.token });
    assert.equal(get.status, 404);
    assert.equal(get.body.code, 'UNKNOWN_APPLICATION');
    const bot = await request(server, 'GET', '/v1/users/@me', { auth: `Bot ${app.botToken}` });
    assert.equal(bot.status, 401);
    const list = await request(server, 'GET', '/v1/users/@me/applications', { auth: owner.token });
    assert.ok(!list.body.some((x: any) => x.id === app.id));
  });
});

describe('the built-in Admin OAuth2 application', () => {
  it('is hidden from listings, 404 on application routes, and its bot token never works', async () => {
    const admin = await registerUser(server);
    const id = server.app.services.ids.next();
    const token = `${id}.${'A'.repeat(43)}`;
    await server.app.services.db.query('INSERT INTO users (id, username, is_bot) VALUES ($1, $2, true)', [
      id,
      'admin_bot',
    ]);
    await server.app.services.db.query(
      `INSERT INTO applications (id, owner_id, name, client_secret_hash, bot_user_id, bot_token_hash, is_admin_builtin)
       VALUES ($1, $2, 'Admin', $3, $1, $4, true)`,
      [id, admin.id, digest('secret'), digest(token)],
    );
    const list = await request(server, 'GET', '/v1/users/@me/applications', { auth: admin.token });
    assert.deepEqual(list.body, []);
    for (const [method, path] of [
      ['GET', `/v1/oauth2/applications/${id}`],
      ['PATCH', `/v1/oauth2/applications/${id}`],
      ['GET', `/v1/oauth2/applications/${id}/public`],
      ['DELETE', `/v1/oauth2/applications/${id}`],
      ['POST', `/v1/oauth2/applications/${id}/bot/reset-token`],
    ] as const) {
      const res = await request(server, method, path, {
        auth: admin.token,
        ...(method === 'GET' ? {} : { body: { password: admin.password } }),
      });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, 'UNKNOWN_APPLICATION');
    }
    const bot = await request(server, 'GET', '/v1/applications/@me', { auth: `Bot ${token}` });
    assert.equal(bot.status, 401);
    assert.equal(bot.body.code, 'UNAUTHORIZED');
  });
});

describe('@discordjs/rest, unmodified', () => {
  it('reads /applications/@me and /gateway/bot with a real bot token', async () => {
    const app = await createApplication(server, owner, { name: 'djs', redirect_uris: ['https://djs.example/cb'] });
    const rest = new REST({ version: '1', api: server.url }).setToken(app.botToken);
    const me = (await rest.get('/applications/@me')) as any;
    assert.equal(me.id, app.id);
    assert.equal(me.name, 'djs');
    assert.equal(me.owner.id, owner.id);
    assert.equal(me.bot.id, app.id);
    assert.equal(me.bot_public, true);
    assert.equal(me.bot_require_code_grant, false);
    assert.equal(me.flags, 0);
    assert.deepEqual(me.redirect_uris, ['https://djs.example/cb']);
    const gateway = (await rest.get('/gateway/bot')) as any;
    assert.deepEqual(gateway, {
      url: `${server.url.replace('http', 'ws')}/gateway`,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 14400000, max_concurrency: 1 },
    });
  });

  it('surfaces a 401 UNAUTHORIZED for a revoked bot token', async () => {
    const app = await createApplication(server, owner);
    await request(server, 'POST', `/v1/oauth2/applications/${app.id}/bot/reset-token`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    const rest = new REST({ version: '1', api: server.url, retries: 0 }).setToken(app.botToken);
    await assert.rejects(rest.get('/applications/@me'), (error: unknown) => {
      assert.ok(error instanceof DiscordAPIError);
      assert.equal(error.status, 401);
      assert.equal(error.code, 'UNAUTHORIZED');
      return true;
    });
  });
});
