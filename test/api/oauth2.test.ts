import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { createApplication, type TestApplication } from '../support/applications.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import {
  approve,
  authorize,
  clientPost,
  codeFlow,
  codeFrom,
  consent,
  exchangeCode,
  issueTokens,
  pkcePair,
} from '../support/oauth2.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let user: TestUser;
let app: TestApplication;
let otherApp: TestApplication;
const REDIRECT = 'https://client.example/callback';
const ADMIN_SECRET = 'admin-client-secret-for-tests-0123456789';
const ADMIN_REDIRECT = 'https://admin.example/oauth2/callback';

before(async () => {
  server = await startTestServer({
    HEARTH_ADMIN_OAUTH2_CLIENT_SECRET: ADMIN_SECRET,
    HEARTH_ADMIN_OAUTH2_REDIRECT_URIS: ADMIN_REDIRECT,
  });
  owner = await registerUser(server);
  user = await registerUser(server);
  app = await createApplication(server, owner, { name: 'Client', redirect_uris: [REDIRECT, 'http://127.0.0.1:9/cb'] });
  otherApp = await createApplication(server, owner, { name: 'Other', redirect_uris: [REDIRECT] });
});
after(async () => {
  await server?.close();
});

function configuration(target: TestApplication, auth: 'basic' | 'post'): client.Configuration {
  const config = new client.Configuration(
    {
      issuer: server.url,
      authorization_endpoint: `${server.url}/v1/oauth2/authorize`,
      token_endpoint: `${server.url}/v1/oauth2/token`,
      revocation_endpoint: `${server.url}/v1/oauth2/token/revoke`,
      introspection_endpoint: `${server.url}/v1/oauth2/introspect`,
      userinfo_endpoint: `${server.url}/v1/oauth2/userinfo`,
      code_challenge_methods_supported: ['S256'],
    },
    target.id,
    target.clientSecret,
    auth === 'basic' ? client.ClientSecretBasic(target.clientSecret) : client.ClientSecretPost(target.clientSecret),
  );
  client.allowInsecureRequests(config);
  return config;
}

describe('authorization code + PKCE with openid-client', () => {
  for (const auth of ['basic', 'post'] as const) {
    it(`runs the whole flow with client_secret_${auth}`, async () => {
      const config = configuration(app, auth);
      const { callback, tokens, state } = await codeFlow(server, config, user, {
        redirectUri: REDIRECT,
        scope: 'identify email',
        state: true,
        queryUnchanged: true,
      });
      assert.equal(callback.origin + callback.pathname, REDIRECT);
      assert.equal(callback.searchParams.get('state'), state);
      assert.match(callback.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);

      assert.equal(tokens.token_type, 'bearer');
      assert.equal(tokens.expires_in, 604800);
      assert.equal(tokens.scope, 'identify email');
      assert.match(tokens.access_token, /^[A-Za-z0-9_-]{43}$/);
      assert.match(tokens.refresh_token ?? '', /^[A-Za-z0-9_-]{43}$/);

      const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${tokens.access_token}` });
      assert.equal(me.status, 200);
      assert.equal(me.body.id, user.id);
      assert.equal(me.body.email, user.email);

      const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
      assert.equal(info.sub, user.id);
      assert.equal(info.email, user.email);

      // Rotation: every refresh hands out a new refresh token and retires the old one.
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
      assert.notEqual(refreshed.access_token, tokens.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      assert.equal(refreshed.scope, 'identify email');
      const again = await client.refreshTokenGrant(config, refreshed.refresh_token as string);

      const introspected = await client.tokenIntrospection(config, again.access_token);
      assert.equal(introspected.active, true);
      assert.equal(introspected.client_id, app.id);
      assert.equal(introspected.sub, user.id);
      assert.equal(introspected.username, user.username);
      assert.equal(introspected.scope, 'identify email');
      assert.equal(introspected.token_type, 'Bearer');
      assert.equal((introspected.exp as number) - (introspected.iat as number), 604800);
      const refreshInfo = await client.tokenIntrospection(config, again.refresh_token as string);
      assert.equal(refreshInfo.active, true);
      assert.equal(refreshInfo.token_type, 'refresh_token');
      assert.equal((await client.tokenIntrospection(config, tokens.refresh_token as string)).active, false);
      // Another client learns nothing about this client's tokens.
      assert.deepEqual(await client.tokenIntrospection(configuration(otherApp, auth), again.access_token), {
        active: false,
      });

      // Reuse detection: presenting a retired refresh token revokes the whole user+app grant.
      await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token as string), (error: any) => {
        assert.ok(error instanceof client.ResponseBodyError);
        assert.equal(error.error, 'invalid_grant');
        assert.equal(error.status, 400);
        return true;
      });
      for (const token of [tokens.access_token, refreshed.access_token, again.access_token]) {
        const res = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${token}` });
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'UNAUTHORIZED');
      }
      await assert.rejects(client.refreshTokenGrant(config, again.refresh_token as string), client.ResponseBodyError);
      assert.equal((await client.tokenIntrospection(config, again.access_token)).active, false);
    });
  }

  it('revocation (RFC 7009) ends the grant; unknown tokens also get 200', async () => {
    const config = configuration(app, 'basic');
    const { tokens } = await codeFlow(server, config, user, {
      redirectUri: REDIRECT,
      scope: 'identify',
      queryUnchanged: true,
    });
    assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, true);

    // Another client cannot revoke it.
    await client.tokenRevocation(configuration(otherApp, 'basic'), tokens.access_token);
    assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, true);

    await client.tokenRevocation(config, tokens.refresh_token as string);
    assert.equal((await client.tokenIntrospection(config, tokens.access_token)).active, false);
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${tokens.access_token}` });
    assert.equal(me.status, 401);
    await client.tokenRevocation(config, 'no-such-token');

    const raw = await clientPost(server, '/v1/oauth2/token/revoke', app, { token: 'still-unknown' });
    assert.equal(raw.status, 200);
    assert.equal(raw.text, '');
  });
});

describe('authorization server metadata (RFC 8414)', () => {
  it('configures a stock client from the issuer alone, and that configuration runs the whole flow', async () => {
    const metadata = await request(server, 'GET', '/.well-known/oauth-authorization-server');
    assert.equal(metadata.status, 200);
    assert.equal(metadata.body.issuer, server.url);
    assert.deepEqual(metadata.body.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(metadata.body.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.deepEqual(metadata.body.response_types_supported, ['code']);
    assert.ok(metadata.body.scopes_supported.includes('identify'));

    const config = await client.discovery(
      new URL(server.url),
      app.id,
      app.clientSecret,
      client.ClientSecretBasic(app.clientSecret),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    assert.equal(config.serverMetadata().token_endpoint, `${server.url}/v1/oauth2/token`);
    const { tokens } = await codeFlow(server, config, user, {
      redirectUri: REDIRECT,
      scope: 'identify',
      state: true,
      queryUnchanged: true,
    });
    const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
    assert.equal(info.sub, user.id);
  });
});

describe('the token endpoint', () => {
  afterEach(async () => {
    await harness(server, 'POST', '/clock', { offset_ms: 0 });
  });

  it('stores codes and tokens only as digests', async () => {
    const code = await approve(server, user, app);
    const codes = await server.app.services.db.query('SELECT 1 FROM oauth2_codes WHERE code_hash = $1', [digest(code)]);
    assert.equal(codes.length, 1);
    const res = await exchangeCode(server, app, code, REDIRECT);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(res.body).sort(), [
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    assert.equal(res.body.token_type, 'Bearer');
    const rows = await server.app.services.db.query<{ token_hash: string; kind: string }>(
      'SELECT token_hash, kind FROM oauth2_tokens WHERE token_hash = ANY($1::text[])',
      [[digest(res.body.access_token), digest(res.body.refresh_token), res.body.access_token]],
    );
    assert.deepEqual(rows.map((r) => r.kind).sort(), ['access', 'refresh']);
  });

  it('accepts a JSON body as well as a form', async () => {
    const code = await approve(server, user, app);
    const res = await request(server, 'POST', '/v1/oauth2/token', {
      body: {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: app.id,
        client_secret: app.clientSecret,
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.scope, 'identify');
  });

  it('answers a failed client authentication with 401 invalid_client and no WWW-Authenticate', async () => {
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['no credentials', { grant_type: 'refresh_token', refresh_token: 'x' }, {}],
      ['wrong secret', { grant_type: 'refresh_token', client_id: app.id, client_secret: 'nope' }, {}],
      ['unknown client', { grant_type: 'refresh_token', client_id: '12345', client_secret: app.clientSecret }, {}],
      ['malformed client id', { grant_type: 'refresh_token', client_id: 'abc', client_secret: 'x' }, {}],
      [
        'wrong basic secret',
        { grant_type: 'refresh_token' },
        { authorization: `Basic ${Buffer.from(`${app.id}:wrong`).toString('base64')}` },
      ],
      ['bearer instead of client auth', { grant_type: 'refresh_token' }, { authorization: 'Bearer abc' }],
      [
        'other client secret',
        { grant_type: 'refresh_token', client_id: app.id, client_secret: otherApp.clientSecret },
        {},
      ],
    ];
    for (const path of ['/v1/oauth2/token', '/v1/oauth2/token/revoke', '/v1/oauth2/introspect']) {
      for (const [name, params, headers] of cases) {
        const res = await clientPost(server, path, undefined, { token: 'x', ...params }, headers);
        assert.equal(res.status, 401, `${path} ${name}`);
        assert.equal(res.body.code, 'UNAUTHORIZED');
        assert.equal(res.body.error, 'invalid_client');
        assert.equal(typeof res.body.error_description, 'string');
        assert.equal(typeof res.body.message, 'string');
        assert.equal(res.headers.get('www-authenticate'), null);
      }
    }
  });

  it('answers request errors with 400 BAD_REQUEST and the OAuth2 error name', async () => {
    const expectError = async (params: Record<string, string>, error: string) => {
      const res = await clientPost(server, '/v1/oauth2/token', app, params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.equal(res.body.code, 'BAD_REQUEST');
      assert.equal(res.body.error, error);
    };
    await expectError({}, 'invalid_request');
    await expectError({ grant_type: 'password', username: 'a', password: 'b' }, 'unsupported_grant_type');
    await expectError({ grant_type: 'client_credentials' }, 'unsupported_grant_type');
    await expectError({ grant_type: 'authorization_code', redirect_uri: REDIRECT }, 'invalid_request');
    await expectError({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT }, 'invalid_grant');
    await expectError({ grant_type: 'refresh_token' }, 'invalid_request');
    await expectError({ grant_type: 'refresh_token', refresh_token: 'made-up' }, 'invalid_grant');
    const repeated = await request(server, 'POST', '/v1/oauth2/token', {
      raw: `grant_type=authorization_code&grant_type=refresh_token&client_id=${app.id}&client_secret=${app.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(repeated.status, 400);
    assert.equal(repeated.body.error, 'invalid_request');
  });

  it('codes are single use: a second use fails and revokes the grant', async () => {
    const code = await approve(server, user, app);
    const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT };
    const first = await clientPost(server, '/v1/oauth2/token', app, params);
    assert.equal(first.status, 200);
    const second = await clientPost(server, '/v1/oauth2/token', app, params);
    assert.equal(second.status, 400);
    assert.equal(second.body.error, 'invalid_grant');
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${first.body.access_token}` });
    assert.equal(me.status, 401);
  });

  it('a code only works for its own client and its exact redirect URI', async () => {
    const code = await approve(server, user, app);
    const foreign = await exchangeCode(server, otherApp, code, REDIRECT);
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error, 'invalid_grant');
    // Still unspent for its own client after the foreign attempt.
    const own = await exchangeCode(server, app, code, REDIRECT);
    assert.equal(own.status, 200);

    for (const redirect of [`${REDIRECT}/`, 'https://client.example/callback?x=1', undefined]) {
      const next = await approve(server, user, app);
      const res = await clientPost(server, '/v1/oauth2/token', app, {
        grant_type: 'authorization_code',
        code: next,
        ...(redirect !== undefined ? { redirect_uri: redirect } : {}),
      });
      assert.equal(res.status, 400, String(redirect));
      assert.equal(res.body.error, 'invalid_grant');
    }
  });

  it('enforces PKCE: verifier required iff challenged, and it must match', async () => {
    const { verifier, challenge } = pkcePair();
    const exchange = (code: string, extra: Record<string, string>) => exchangeCode(server, app, code, REDIRECT, extra);
    const missing = await exchange(await approve(server, user, app, { challenge }), {});
    assert.equal(missing.body.error, 'invalid_grant');
    const wrong = await exchange(await approve(server, user, app, { challenge }), {
      code_verifier: pkcePair().verifier,
    });
    assert.equal(wrong.body.error, 'invalid_grant');
    const unexpected = await exchange(await approve(server, user, app), { code_verifier: verifier });
    assert.equal(unexpected.body.error, 'invalid_grant');
    const ok = await exchange(await approve(server, user, app, { challenge }), { code_verifier: verifier });
    assert.equal(ok.status, 200);
  });

  it('codes expire after 10 minutes', async () => {
    const code = await approve(server, user, app);
    await harness(server, 'POST', '/clock', { offset_ms: 10 * 60_000 + 1000 });
    const res = await exchangeCode(server, app, code, REDIRECT);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  it('access tokens expire after 7 days, refresh tokens after 30', async () => {
    const tokens = await issueTokens(server, user, app, 'identify');
    await harness(server, 'POST', '/clock', { offset_ms: 7 * 24 * 3600_000 + 1000 });
    const me = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${tokens.access_token}` });
    assert.equal(me.status, 401);
    const refreshed = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    assert.equal(refreshed.status, 200);
    await harness(server, 'POST', '/clock', { offset_ms: 38 * 24 * 3600_000 });
    const late = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
    });
    assert.equal(late.status, 400);
    assert.equal(late.body.error, 'invalid_grant');
  });

  it('a refresh may narrow the scope but never widen it', async () => {
    const tokens = await issueTokens(server, user, app, 'identify email');
    const wider = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'identify email guilds',
    });
    assert.equal(wider.status, 400);
    assert.equal(wider.body.error, 'invalid_scope');
    const narrower = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'identify',
    });
    assert.equal(narrower.status, 200);
    assert.equal(narrower.body.scope, 'identify');
  });
});

describe('the consent API', () => {
  const base = () => ({ client_id: app.id, scope: 'identify', redirect_uri: REDIRECT, response_type: 'code' });

  it('returns redirect_to with code and state, keeping the redirect URI exactly', async () => {
    const res = await consent(server, user, { ...base(), redirect_uri: 'http://127.0.0.1:9/cb', state: 'a b&c' });
    assert.equal(res.status, 200);
    const url = new URL(res.body.redirect_to);
    assert.equal(url.origin + url.pathname, 'http://127.0.0.1:9/cb');
    assert.equal(url.searchParams.get('state'), 'a b&c');
    assert.match(url.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts scopes separated by + or spaces', async () => {
    const res = await consent(server, user, { ...base(), scope: 'identify+email' });
    assert.equal(res.status, 200);
    const tokens = await exchangeCode(server, app, codeFrom(res), REDIRECT);
    assert.equal(tokens.body.scope, 'identify email');
  });

  it('rejects bad requests with INVALID_FORM_BODY on the offending member', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ scope: 'identify admin' }, 'scope', 'INVALID_SCOPE'],
      [{ scope: '' }, 'scope', 'INVALID_SCOPE'],
      [{ redirect_uri: 'https://client.example/other' }, 'redirect_uri', 'INVALID_REDIRECT_URI'],
      [{ redirect_uri: `${REDIRECT}/` }, 'redirect_uri', 'INVALID_REDIRECT_URI'],
      [{ redirect_uri: undefined }, 'redirect_uri', 'BASE_TYPE_REQUIRED'],
      [
        { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' },
        'code_challenge_method',
        'INVALID_FORMAT',
      ],
      [{ code_challenge: pkcePair().challenge }, 'code_challenge_method', 'BASE_TYPE_REQUIRED'],
      [{ code_challenge: 'short', code_challenge_method: 'S256' }, 'code_challenge', 'INVALID_FORMAT'],
      [{ response_type: 'token' }, 'response_type', 'INVALID_FORMAT'],
      [{ scope: 'bot' }, 'guild_id', 'BASE_TYPE_REQUIRED'],
      [{ scope: 'bot', guild_id: 'x' }, 'guild_id', 'INVALID_SNOWFLAKE_FORMAT'],
      [{ scope: 'bot', guild_id: '1', permissions: '-1' }, 'permissions', 'INVALID_FORMAT'],
    ];
    for (const [change, path, code] of cases) {
      const res = await consent(server, user, { ...base(), ...change });
      assert.equal(res.status, 400, JSON.stringify(change));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.path, e.code]),
        [[path, code]],
        JSON.stringify(change),
      );
    }
    const unknown = await consent(server, user, { ...base(), client_id: '424242' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'UNKNOWN_APPLICATION');
  });

  it('the bot scope installs through the bot installer, and a private bot only for its owner', async () => {
    const installs = server.app.services.botInstaller;
    const calls: unknown[] = [];
    const original = installs.install;
    installs.install = async (input) => {
      calls.push(input);
    };
    try {
      const ok = await consent(server, user, {
        client_id: app.id,
        scope: 'bot',
        guild_id: '123456789',
        permissions: '8',
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.redirect_to, `${server.url}/oauth2/authorized`);
      assert.deepEqual(calls, [
        { guildId: '123456789', botUserId: app.id, applicationName: 'Client', permissions: 8n, installedBy: user.id },
      ]);

      const priv = await createApplication(server, owner, { name: 'Private', bot_public: false });
      const denied = await consent(server, user, { client_id: priv.id, scope: 'bot', guild_id: '123456789' });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.code, 'BOT_IS_PRIVATE');
      assert.equal(calls.length, 1);
      const byOwner = await consent(server, owner, { client_id: priv.id, scope: 'bot', guild_id: '123456789' });
      assert.equal(byOwner.status, 200);
      assert.equal(calls.length, 2);

      const codeGrant = await createApplication(server, owner, {
        name: 'Code grant',
        bot_require_code_grant: true,
        redirect_uris: [REDIRECT],
      });
      const needsRedirect = await consent(server, owner, { client_id: codeGrant.id, scope: 'bot', guild_id: '1' });
      assert.equal(needsRedirect.status, 400);
      assert.equal(needsRedirect.body.errors[0].path, 'redirect_uri');
      const withCode = await consent(server, owner, {
        client_id: codeGrant.id,
        scope: 'bot identify',
        guild_id: '1',
        redirect_uri: REDIRECT,
      });
      assert.equal(withCode.status, 200);
      assert.ok(new URL(withCode.body.redirect_to).searchParams.get('code'));
    } finally {
      installs.install = original;
    }
  });

  it('passes the installer’s refusal through (no guild: 404 UNKNOWN_GUILD)', async () => {
    const res = await consent(server, user, { client_id: app.id, scope: 'bot', guild_id: '999999999999' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'UNKNOWN_GUILD');
  });
});

describe('GET /oauth2/authorize', () => {
  it('prompt=none: a covering grant gets a code, anything else consent_required', async () => {
    const fresh = await registerUser(server);
    const query = { response_type: 'code', client_id: app.id, redirect_uri: REDIRECT, scope: 'identify', state: 's1' };
    const none = { ...query, prompt: 'none' };

    const anonymous = new URL((await authorize(server, none)).headers.get('location') as string);
    assert.equal(anonymous.searchParams.get('error'), 'consent_required');
    assert.equal(anonymous.searchParams.get('state'), 's1');

    const noGrant = new URL((await authorize(server, none, fresh.token)).headers.get('location') as string);
    assert.equal(noGrant.searchParams.get('error'), 'consent_required');

    await approve(server, fresh, app, { scope: 'identify' });
    const silent = await authorize(server, none, fresh.token);
    assert.equal(silent.status, 302);
    const location = new URL(silent.headers.get('location') as string);
    assert.equal(location.origin + location.pathname, REDIRECT);
    assert.equal(location.searchParams.get('state'), 's1');
    const tokens = await exchangeCode(server, app, location.searchParams.get('code') as string, REDIRECT);
    assert.equal(tokens.status, 200);
    assert.equal(tokens.body.scope, 'identify');

    const wider = new URL(
      (await authorize(server, { ...none, scope: 'identify email' }, fresh.token)).headers.get('location') as string,
    );
    assert.equal(wider.searchParams.get('error'), 'consent_required');
    const badScope = new URL(
      (await authorize(server, { ...none, scope: 'nope' }, fresh.token)).headers.get('location') as string,
    );
    assert.equal(badScope.searchParams.get('error'), 'invalid_scope');
  });

  it('never redirects to an unregistered redirect URI', async () => {
    const res = await authorize(server, {
      response_type: 'code',
      client_id: app.id,
      redirect_uri: 'https://evil.example/cb',
      scope: 'identify',
      prompt: 'none',
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
    const body = await res.json();
    assert.equal(body.code, 'INVALID_FORM_BODY');
    assert.equal(body.errors[0].code, 'INVALID_REDIRECT_URI');
  });
});

describe('token self-description and authorised applications', () => {
  it('GET /oauth2/@me and /oauth2/userinfo describe the token by scope', async () => {
    const identify = await issueTokens(server, user, app, 'identify');
    const me = await request(server, 'GET', '/v1/oauth2/@me', { auth: `Bearer ${identify.access_token}` });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.application, {
      id: app.id,
      name: 'Client',
      icon: null,
      description: null,
      bot_public: true,
      bot_require_code_grant: false,
      flags: 0,
    });
    assert.deepEqual(me.body.scopes, ['identify']);
    assert.ok(Date.parse(me.body.expires) > Date.now() + 6 * 24 * 3600_000);
    assert.equal(me.body.user.id, user.id);
    assert.equal(me.body.user.email, undefined);
    const info = await request(server, 'GET', '/v1/oauth2/userinfo', { auth: `Bearer ${identify.access_token}` });
    assert.deepEqual(Object.keys(info.body).sort(), [
      'avatar',
      'discriminator',
      'flags',
      'global_name',
      'id',
      'sub',
      'username',
    ]);
    assert.equal(info.body.sub, user.id);
    const users = await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${identify.access_token}` });
    assert.equal(users.status, 200);
    assert.equal(users.body.email, undefined);
    assert.equal(users.body.verified, undefined);

    const guildsOnly = await issueTokens(server, user, otherApp, 'guilds');
    const bare = await request(server, 'GET', '/v1/oauth2/@me', { auth: `Bearer ${guildsOnly.access_token}` });
    assert.equal(bare.status, 200);
    assert.equal(bare.body.user, undefined);
  });

  it('lists, revokes one, and revokes many authorisations', async () => {
    const holder = await registerUser(server);
    const a = await issueTokens(server, holder, app, 'identify');
    const b = await issueTokens(server, holder, otherApp, 'identify email');
    const list = await request(server, 'GET', '/v1/oauth2/@me/authorizations', { auth: holder.token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((x: any) => [x.application.id, x.scopes]),
      [
        [app.id, ['identify']],
        [otherApp.id, ['identify', 'email']],
      ],
    );
    assert.ok(!Number.isNaN(Date.parse(list.body[0].authorized_at)));

    const del = await request(server, 'DELETE', `/v1/oauth2/@me/authorizations/${app.id}`, { auth: holder.token });
    assert.equal(del.status, 204);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${a.access_token}` })).status, 401);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${b.access_token}` })).status, 200);

    const bad = await request(server, 'POST', '/v1/oauth2/@me/authorizations/revoke', {
      auth: holder.token,
      body: { application_ids: [] },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_FORM_BODY');
    const many = await request(server, 'POST', '/v1/oauth2/@me/authorizations/revoke', {
      auth: holder.token,
      body: { application_ids: [otherApp.id, '1'] },
    });
    assert.equal(many.status, 204);
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${b.access_token}` })).status, 401);
    const empty = await request(server, 'GET', '/v1/oauth2/@me/authorizations', { auth: holder.token });
    assert.deepEqual(empty.body, []);
  });

  it('deleting the application kills every token it issued', async () => {
    const doomed = await createApplication(server, owner, { name: 'Doomed', redirect_uris: [REDIRECT] });
    const tokens = await issueTokens(server, user, doomed, 'identify');
    assert.equal(
      (await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${tokens.access_token}` })).status,
      200,
    );
    const del = await request(server, 'DELETE', `/v1/oauth2/applications/${doomed.id}`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    assert.equal(del.status, 204);
    assert.equal(
      (await request(server, 'GET', '/v1/users/@me', { auth: `Bearer ${tokens.access_token}` })).status,
      401,
    );
  });

  it('resetting the client secret retires the old one', async () => {
    const rotating = await createApplication(server, owner, { name: 'Rotating', redirect_uris: [REDIRECT] });
    const reset = await request(server, 'POST', `/v1/oauth2/applications/${rotating.id}/client-secret/reset`, {
      auth: owner.token,
      body: { password: owner.password },
    });
    const oldSecret = await clientPost(server, '/v1/oauth2/introspect', rotating, { token: 'x' });
    assert.equal(oldSecret.status, 401);
    assert.equal(oldSecret.body.error, 'invalid_client');
    const newSecret = await clientPost(
      server,
      '/v1/oauth2/introspect',
      { id: rotating.id, clientSecret: reset.body.client_secret },
      { token: 'x' },
    );
    assert.equal(newSecret.status, 200);
    assert.deepEqual(newSecret.body, { active: false });
  });
});

describe('the built-in Admin OAuth2 application', () => {
  it('issues bearer tokens that Admin routes accept, subject to the user’s ACLs', async () => {
    const [row] = await server.app.services.db.query<{ id: string }>(
      'SELECT id FROM applications WHERE is_admin_builtin',
    );
    assert.ok(row, 'the Admin application exists');
    const admin: TestApplication = {
      id: row.id,
      clientSecret: ADMIN_SECRET,
      botToken: '',
      body: { redirect_uris: [ADMIN_REDIRECT] },
    };
    const operator = await registerUser(server);
    const tokens = await issueTokens(server, operator, admin, 'identify');
    const bearer = `Bearer ${tokens.access_token}`;
    const before = await request(server, 'GET', '/v1/admin/users/me', { auth: bearer });
    assert.equal(before.status, 403);
    assert.equal(before.body.code, 'MISSING_PERMISSIONS');
    const acl = await harness(server, 'POST', `/users/${operator.id}/acls`, { acls: ['admin:authenticate'] });
    assert.equal(acl.status, 200);
    const allowed = await request(server, 'GET', '/v1/admin/users/me', { auth: bearer });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.user.id, operator.id);

    // The same user's token from an ordinary application is refused there.
    const ordinary = await issueTokens(server, operator, app, 'identify');
    const denied = await request(server, 'GET', '/v1/admin/users/me', { auth: `Bearer ${ordinary.access_token}` });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.code, 'ACCESS_DENIED');
  });
});
