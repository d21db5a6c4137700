import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { digest, randomBase62 } from '../../src/platform/crypto/tokens.ts';
import { createApplication, type TestApplication } from '../support/applications.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { issueTokens } from '../support/oauth2.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The credential × policy matrix for bot tokens and OAuth2 access tokens (docs/conventions.md#policies),
 * and the two routes that parse `Authorization` themselves (docs/conventions.md). The low ban threshold only matters
 * for requests sent with `X-Test-Strict: true`.
 */
let server: TestServer;
let user: TestUser;
let app: TestApplication;
let revokedBot: string;
const cred: Record<string, string> = {};

before(async () => {
  server = await startTestServer({
    HEARTH_IP_BAN_FAILURES: '5',
    HEARTH_RATE_LIMITS: JSON.stringify({ 'oauth2:token': { limit: 2, windowSeconds: 60 } }),
  });
  user = await registerUser(server);
  const owner = await registerUser(server);
  app = await createApplication(server, owner, { name: 'Matrix', redirect_uris: ['https://m.example/cb'] });
  const other = await createApplication(server, owner, { name: 'Matrix 2', redirect_uris: ['https://m.example/cb'] });
  const doomed = await createApplication(server, owner, { name: 'Revoked', redirect_uris: ['https://m.example/cb'] });
  const reset = await request(server, 'POST', `/v1/oauth2/applications/${doomed.id}/bot/reset-token`, {
    auth: owner.token,
    body: { password: owner.password },
  });
  assert.equal(reset.status, 200);
  revokedBot = doomed.botToken;

  const identify = await issueTokens(server, user, app, 'identify');
  const guildsOnly = await issueTokens(server, user, other, 'guilds');
  const revokedBearer = await issueTokens(server, user, doomed, 'identify');
  const revoke = await request(server, 'DELETE', `/v1/oauth2/@me/authorizations/${doomed.id}`, { auth: user.token });
  assert.equal(revoke.status, 204);

  // An Admin API key row for the user, so the "Admin key outside /admin" column is a real, valid key.
  const keyId = server.app.services.ids.next();
  const adminKey = `fa_${keyId}_${randomBase62(32)}`;
  await server.app.services.db.query(
    `INSERT INTO admin_api_keys (key_id, owner_id, secret_hash, name, acls) VALUES ($1, $2, $3, 'k', '{*}')`,
    [keyId, user.id, digest(adminKey)],
  );

  cred.session = user.token;
  cred.bearerSession = `Bearer ${user.token}`;
  cred.bot = `Bot ${app.botToken}`;
  cred.revokedBot = `Bot ${revokedBot}`;
  cred.bearerIdentify = `Bearer ${identify.access_token}`;
  cred.bearerGuilds = `Bearer ${guildsOnly.access_token}`;
  cred.revokedBearer = `Bearer ${revokedBearer.access_token}`;
  cred.adminKey = `Admin ${adminKey}`;
});
after(async () => {
  await server?.close();
});

type Expected = number | [number, string] | [number, string, string];

async function check(method: string, path: string, credential: string | undefined, expected: Expected, body?: unknown) {
  const res = await request(server, method, path, {
    ...(credential !== undefined ? { auth: credential } : {}),
    ...(body !== undefined ? { body } : {}),
  });
  const [status, code, requiredScope] = Array.isArray(expected) ? expected : [expected];
  const label = `${method} ${path} with ${credential?.split(' ')[0] ?? 'nothing'}`;
  assert.equal(res.status, status, `${label}: ${res.text}`);
  if (code !== undefined) assert.equal(res.body.code, code, label);
  if (status === 403 && code === 'MISSING_OAUTH_SCOPE') assert.equal(res.body.required_scope, requiredScope, label);
  else assert.equal(res.body?.required_scope, undefined, label);
  assert.equal(res.headers.get('www-authenticate'), null, label);
  return res;
}

const UNAUTHORIZED: Expected = [401, 'UNAUTHORIZED'];
const ACCESS_DENIED: Expected = [403, 'ACCESS_DENIED'];

describe('credential × policy matrix: bots and access tokens', () => {
  it('user route that opted in to `identify` (GET /users/@me)', async () => {
    const path = '/v1/users/@me';
    await check('GET', path, cred.session, 200);
    await check('GET', path, cred.bearerSession, 200);
    const bot = await check('GET', path, cred.bot, 200);
    assert.equal(bot.body.id, app.id);
    await check('GET', path, cred.revokedBot, UNAUTHORIZED);
    const bearer = await check('GET', path, cred.bearerIdentify, 200);
    assert.equal(bearer.body.id, user.id);
    assert.equal(bearer.body.email, undefined, 'email needs the email scope');
    await check('GET', path, cred.bearerGuilds, [403, 'MISSING_OAUTH_SCOPE', 'identify']);
    await check('GET', path, cred.revokedBearer, UNAUTHORIZED);
    await check('GET', path, cred.adminKey, UNAUTHORIZED);
    await check('GET', path, undefined, UNAUTHORIZED);
  });

  it('user route without OAuth2 opt-in (GET /users/{id}, GET /oauth2/applications/@me)', async () => {
    for (const path of [`/v1/users/${user.id}`, '/v1/oauth2/applications/@me']) {
      await check('GET', path, cred.session, 200);
      await check('GET', path, cred.bot, 200);
      await check('GET', path, cred.bearerIdentify, ACCESS_DENIED);
      await check('GET', path, cred.bearerGuilds, ACCESS_DENIED);
      await check('GET', path, cred.revokedBearer, UNAUTHORIZED);
      await check('GET', path, cred.revokedBot, UNAUTHORIZED);
    }
  });

  it('user-only routes refuse bots and access tokens with 403 ACCESS_DENIED', async () => {
    for (const path of ['/v1/auth/sessions', '/v1/users/@me/applications', '/v1/oauth2/@me/authorizations']) {
      await check('GET', path, cred.session, 200);
      await check('GET', path, cred.bot, ACCESS_DENIED);
      await check('GET', path, cred.bearerIdentify, ACCESS_DENIED);
      await check('GET', path, cred.revokedBot, UNAUTHORIZED);
      await check('GET', path, undefined, UNAUTHORIZED);
    }
    await check('POST', '/v1/oauth2/applications', cred.bot, ACCESS_DENIED, { name: 'bot-made' });
    await check('POST', '/v1/oauth2/authorize/consent', cred.bot, ACCESS_DENIED, {
      client_id: app.id,
      scope: 'identify',
    });
  });

  it('bearer-only routes refuse every other credential with 401 UNAUTHORIZED', async () => {
    const path = '/v1/oauth2/@me';
    for (const other of [cred.session, cred.bearerSession, cred.bot, cred.revokedBot, cred.adminKey, undefined]) {
      await check('GET', path, other, UNAUTHORIZED);
    }
    await check('GET', path, cred.bearerIdentify, 200);
    await check('GET', path, cred.bearerGuilds, 200);
    await check('GET', path, cred.revokedBearer, UNAUTHORIZED);
  });

  it('bearer-only route with a scope (GET /oauth2/userinfo)', async () => {
    const path = '/v1/oauth2/userinfo';
    await check('GET', path, cred.bearerIdentify, 200);
    await check('GET', path, cred.bearerGuilds, [403, 'MISSING_OAUTH_SCOPE', 'identify']);
    await check('GET', path, cred.session, UNAUTHORIZED);
    await check('GET', path, cred.bot, UNAUTHORIZED);
  });

  it('Admin routes: a bot token is 401, a non-Admin application’s bearer 403', async () => {
    const path = '/v1/admin/users/me';
    await check('GET', path, cred.bot, UNAUTHORIZED);
    await check('GET', path, cred.revokedBot, UNAUTHORIZED);
    await check('GET', path, cred.bearerIdentify, ACCESS_DENIED);
    await check('GET', path, cred.revokedBearer, UNAUTHORIZED);
  });

  it('authentication area: bots are refused whether resolved from the credential or the body', async () => {
    // Account taken from the credential: user-only, so a bot is 403 ACCESS_DENIED (docs/conventions.md#policies).
    await check('POST', '/v1/auth/verify/resend', cred.bot, ACCESS_DENIED);
    await check('POST', '/v1/auth/verify/resend', cred.bearerIdentify, ACCESS_DENIED);
    // Logout with a bot token is a no-op that leaves the token working.
    await check('POST', '/v1/auth/logout', cred.bot, 204);
    await check('GET', '/v1/users/@me', cred.bot, 200);
    await check('POST', '/v1/auth/logout', cred.bearerIdentify, ACCESS_DENIED);
    // Account resolved from the body (docs/accounts.md#common-rules).
    const flagged = await registerUser(server);
    const flag = await harness(server, 'POST', `/users/${flagged.id}/set-bot-flag`, { is_bot: true });
    assert.equal(flag.status, 200);
    await check('POST', '/v1/auth/login', undefined, [403, 'BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED'], {
      email: flagged.email,
      password: flagged.password,
    });
  });
});

describe('GET /v1/gateway/bot: only the token form is checked', () => {
  const expectedBody = () => ({
    url: `${server.url.replace('http', 'ws')}/gateway`,
    shards: 1,
    session_start_limit: { total: 1000, remaining: 999, reset_after: 14400000, max_concurrency: 1 },
  });

  it('accepts Bot, bot, BOT, Bearer or no prefix, and well-formed unknown or revoked tokens', async () => {
    const token = app.botToken;
    for (const header of [
      `Bot ${token}`,
      `bot ${token}`,
      `BOT ${token}`,
      `bOt ${token}`,
      `Bearer ${token}`,
      `bearer ${token}`,
      `BEARER ${token}`,
      token,
      'Bot 123456.not-a-real-secret',
      '42.x',
      `Bot ${revokedBot}`,
    ]) {
      const res = await request(server, 'GET', '/v1/gateway/bot', { auth: header });
      assert.equal(res.status, 200, header);
      assert.deepEqual(res.body, expectedBody(), header);
    }
  });

  it('401 UNAUTHORIZED for missing, padded and malformed tokens', async () => {
    const token = app.botToken;
    for (const header of [
      undefined,
      `Bot  ${token}`,
      `Bot\t${token}`,
      `Bearer  ${token}`,
      `Bot ${token} x`,
      `Bot Bot ${token}`,
      `Basic ${token}`,
      'Bot',
      'Bot not-a-token',
      'Bot 123.',
      'Bot .abc',
      'Bot abc.def',
      user.token,
      `Bearer ${user.token}`,
      `Bot flx_${token}`,
    ]) {
      const res = await request(server, 'GET', '/v1/gateway/bot', header === undefined ? {} : { auth: header });
      assert.equal(res.status, 401, String(header));
      assert.deepEqual(res.body, { code: 'UNAUTHORIZED', message: 'Unauthorized' }, String(header));
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });
});

describe('GET /v1/applications/@me: the Bot prefix is required, in any case', () => {
  it('answers the bot’s application for Bot, bot and BOT', async () => {
    for (const prefix of ['Bot', 'bot', 'BOT', 'bOT']) {
      const res = await request(server, 'GET', '/v1/applications/@me', { auth: `${prefix} ${app.botToken}` });
      assert.equal(res.status, 200, prefix);
      assert.equal(res.body.id, app.id);
      assert.equal(res.body.name, 'Matrix');
      assert.equal(res.body.icon, null);
      assert.equal(res.body.description, null);
      assert.equal(res.body.bot_public, true);
      assert.equal(res.body.bot_require_code_grant, false);
      // The hex of the application's Ed25519 public key (docs/bots.md, interactions endpoint).
      assert.match(res.body.verify_key, /^[0-9a-f]{64}$/);
      assert.notEqual(res.body.verify_key, '0'.repeat(64));
      assert.equal(res.body.flags, 0);
      assert.equal(typeof res.body.owner.id, 'string');
      assert.equal(res.body.bot.id, app.id);
      assert.equal(res.body.bot.bot, true);
      assert.deepEqual(res.body.redirect_uris, ['https://m.example/cb']);
    }
  });

  it('401 INVALID_TOKEN for any credential without the Bot prefix', async () => {
    for (const header of [
      `Bearer ${app.botToken}`,
      app.botToken,
      user.token,
      `Bearer ${user.token}`,
      cred.bearerIdentify as string,
      cred.adminKey as string,
      'Basic abc',
      'garbage',
    ]) {
      const res = await request(server, 'GET', '/v1/applications/@me', { auth: header });
      assert.equal(res.status, 401, header);
      assert.equal(res.body.code, 'INVALID_TOKEN', header);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });

  it('401 UNAUTHORIZED when missing, or Bot with a padded, malformed, unknown or revoked token', async () => {
    for (const header of [
      undefined,
      `Bot  ${app.botToken}`,
      `Bot\t${app.botToken}`,
      'Bot',
      'Bot abc',
      `Bot ${app.id}.wrongsecret`,
      `Bot ${revokedBot}`,
      `Bot ${app.botToken}!`,
    ]) {
      const res = await request(server, 'GET', '/v1/applications/@me', header === undefined ? {} : { auth: header });
      assert.equal(res.status, 401, String(header));
      assert.equal(res.body.code, 'UNAUTHORIZED', String(header));
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });
});

describe('self-parsed routes count failures toward the IP ban', () => {
  it('malformed or unresolved credentials on the bot routes and bad client secrets lead to a ban', async () => {
    const strict = { 'x-test-strict': 'true' };
    const send = (path: string, auth: string) => request(server, 'GET', path, { auth, headers: strict });
    for (let i = 0; i < 10; i += 1) {
      const res = await send('/v1/gateway/bot', `Bot ${app.botToken}`);
      assert.equal(res.status, 200);
    }
    // Working credentials of the wrong kind (and an Admin key, ignored outside /admin) are not failures.
    for (let i = 0; i < 3; i += 1) {
      for (const auth of [cred.adminKey, user.token, cred.bearerIdentify] as string[]) {
        const res = await send('/v1/applications/@me', auth);
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'INVALID_TOKEN');
      }
    }
    const failures: [string, string][] = [
      ['/v1/gateway/bot', 'Bot malformed'],
      ['/v1/applications/@me', `Bot ${revokedBot}`],
      ['/v1/applications/@me', 'Bot abc'],
      ['/v1/applications/@me', 'not-a-session'],
    ];
    for (const [path, auth] of failures) {
      const res = await send(path, auth);
      assert.equal(res.status, 401, `${path} ${auth}`);
    }
    // OAuth2 client authentication failures count too (docs/conventions.md#ip-bans).
    const client = await request(server, 'POST', '/v1/oauth2/token', {
      raw: `grant_type=refresh_token&refresh_token=x&client_id=${app.id}&client_secret=wrong`,
      headers: { ...strict, 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(client.status, 401);
    assert.equal(client.body.error, 'invalid_client');
    const banned = await send('/v1/gateway/bot', `Bot ${app.botToken}`);
    assert.equal(banned.status, 403);
    assert.equal(banned.body.code, 'GLOBAL_IP_TEMPORARILY_BANNED');
    const reset = await harness(server, 'POST', '/rate-limits/reset');
    assert.equal(reset.status, 200);
    const again = await send('/v1/gateway/bot', `Bot ${app.botToken}`);
    assert.equal(again.status, 200);
  });
});

describe('rate limits of the client endpoints', () => {
  it('the token endpoint has its own bucket (oauth2:token)', async () => {
    const send = () =>
      request(server, 'POST', '/v1/oauth2/token', {
        raw: `grant_type=password&client_id=${app.id}&client_secret=${app.clientSecret}`,
        headers: { 'x-test-strict': 'true', 'content-type': 'application/x-www-form-urlencoded' },
      });
    assert.equal((await send()).body.error, 'unsupported_grant_type');
    assert.equal((await send()).body.error, 'unsupported_grant_type');
    const limited = await send();
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.equal(
      limited.headers.get('x-ratelimit-bucket'),
      createHash('sha256').update('oauth2:token').digest('hex').slice(0, 16),
    );
  });
});
