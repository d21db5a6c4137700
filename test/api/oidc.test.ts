import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { createApplication, type TestApplication } from '../support/applications.ts';
import { harness, registerUser, request, type TestUser } from '../support/client.ts';
import { login } from '../support/lifecycle.ts';
import { authorize, clientPost, codeFlow, codeFrom, consent, exchangeCode, pkcePair } from '../support/oauth2.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let owner: TestUser;
let user: TestUser;
let app: TestApplication;
let otherApp: TestApplication;
const REDIRECT = 'https://rp.example/callback';

before(async () => {
  server = await startTestServer();
  owner = await registerUser(server);
  user = await registerUser(server);
  app = await createApplication(server, owner, { name: 'Relying party', redirect_uris: [REDIRECT] });
  otherApp = await createApplication(server, owner, { name: 'Other party', redirect_uris: [REDIRECT] });
});
after(async () => {
  await server?.close();
});
afterEach(async () => {
  await harness(server, 'POST', '/clock', { offset_ms: 0 });
});

/** at_hash computed independently of the server: the left 128 bits of SHA-256, base64url. */
function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** A relying party configured by OpenID discovery alone, verifying ID-token signatures against the JWKS. */
async function discovered(target: TestApplication, fetchHook?: client.CustomFetch): Promise<client.Configuration> {
  const config = await client.discovery(
    new URL(server.url),
    target.id,
    target.clientSecret,
    client.ClientSecretBasic(target.clientSecret),
    { execute: [client.allowInsecureRequests] },
  );
  client.enableNonRepudiationChecks(config);
  if (fetchHook) config[client.customFetch] = fetchHook;
  return config;
}

/** Consent + code exchange over raw HTTP; returns the token response body. */
async function rawTokens(who: TestUser, body: Record<string, unknown>, target: TestApplication = app) {
  const pkce = pkcePair();
  const res = await consent(server, who, {
    client_id: target.id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...body,
  });
  assert.equal(res.status, 200, res.text);
  const tokens = await exchangeCode(server, target, codeFrom(res), REDIRECT, { code_verifier: pkce.verifier });
  assert.equal(tokens.status, 200, tokens.text);
  return tokens.body;
}

describe('OpenID discovery', () => {
  it('publishes openid-configuration with the RFC 8414 issuer and endpoints', async () => {
    const oauth = await request(server, 'GET', '/.well-known/oauth-authorization-server');
    const res = await request(server, 'GET', '/.well-known/openid-configuration');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.issuer, server.url);
    assert.equal(doc.issuer, oauth.body.issuer);
    for (const member of [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'revocation_endpoint',
      'introspection_endpoint',
      'jwks_uri',
    ])
      assert.equal(doc[member], oauth.body[member], member);
    assert.equal(doc.jwks_uri, `${server.url}/v1/oauth2/jwks`);
    assert.equal(doc.userinfo_endpoint, `${server.url}/v1/oauth2/userinfo`);
    assert.equal(doc.end_session_endpoint, `${server.url}/v1/oauth2/logout`);
    assert.equal(oauth.body.end_session_endpoint, undefined, 'an OpenID member, not RFC 8414');
    assert.deepEqual(doc.scopes_supported, ['identify', 'email', 'guilds', 'connections', 'bot', 'openid', 'profile']);
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.subject_types_supported, ['public']);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256']);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(doc.grant_types_supported, ['authorization_code', 'refresh_token']);
    for (const claim of ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'email_verified', 'name'])
      assert.ok(doc.claims_supported.includes(claim), claim);
    assert.deepEqual(doc.prompt_values_supported, ['none', 'login', 'consent', 'select_account']);

    const jwks = await request(server, 'GET', '/v1/oauth2/jwks');
    assert.equal(jwks.status, 200);
    assert.equal(jwks.headers.get('cache-control'), 'public, max-age=300');
    assert.ok(jwks.body.keys.length >= 1);
    for (const key of jwks.body.keys) {
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      assert.equal(key.kty, 'EC');
      assert.equal(key.crv, 'P-256');
      assert.equal(key.alg, 'ES256');
      assert.equal(key.use, 'sig');
      assert.equal(key.d, undefined, 'no private part');
    }
  });
});

describe('code + PKCE with the openid scope (openid-client as the relying party)', () => {
  it('returns a signed ID token with nonce, auth_time and the email claims; refresh returns a fresh one', async () => {
    const signedInBy = Math.floor(Date.now() / 1000);
    const fresh = await registerUser(server);
    const config = await discovered(app);
    assert.equal(config.serverMetadata().issuer, server.url);
    const { tokens, nonce } = await codeFlow(server, config, fresh, {
      redirectUri: REDIRECT,
      scope: 'openid email',
      state: true,
      nonce: true,
      maxAge: 300,
    });
    assert.equal(tokens.scope, 'email openid');
    assert.equal(typeof tokens.id_token, 'string');
    const claims = tokens.claims();
    assert.ok(claims);
    assert.equal(claims.iss, server.url);
    assert.equal(claims.sub, fresh.id);
    assert.equal(claims.aud, app.id);
    assert.equal(claims.azp, app.id);
    assert.equal(claims.nonce, nonce);
    assert.equal(claims.email, fresh.email);
    assert.equal(claims.email_verified, false);
    assert.equal(claims.preferred_username, undefined, 'no profile claims without profile or identify');
    assert.equal(claims.name, undefined);
    assert.equal(claims.exp - claims.iat, 3600);
    // OIDC Core 3.3.2.11 / 3.1.3.6: left half of SHA-256 (ES256) of the access token's ASCII, base64url.
    assert.equal(claims.at_hash, atHash(tokens.access_token));
    assert.ok(typeof claims.auth_time === 'number');
    assert.ok(claims.auth_time >= signedInBy - 1 && claims.auth_time <= claims.iat, 'auth_time is the sign-in');

    // The signature checks out against the published keys for any JOSE library too.
    const header = decodeProtectedHeader(tokens.id_token as string);
    assert.equal(header.alg, 'ES256');
    assert.equal(header.typ, 'JWT');
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string));
    const verified = await jwtVerify(tokens.id_token as string, jwks, { issuer: server.url, audience: app.id });
    assert.equal(verified.payload.sub, fresh.id);
    assert.equal(verified.protectedHeader.kid, header.kid);

    const info = await client.fetchUserInfo(config, tokens.access_token, fresh.id);
    assert.deepEqual(info, { sub: fresh.id, email: fresh.email, email_verified: false });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    assert.notEqual(refreshed.id_token, tokens.id_token);
    const again = refreshed.claims();
    assert.ok(again);
    assert.equal(again.sub, fresh.id);
    assert.equal(again.aud, app.id);
    assert.equal(again.auth_time, claims.auth_time, 'auth_time stays the original sign-in');
    assert.equal(again.nonce, undefined, 'no nonce on a refreshed ID token');
    assert.equal(again.email, fresh.email);
    assert.equal(again.at_hash, atHash(refreshed.access_token), 'at_hash of the refreshed access token');
    assert.notEqual(again.at_hash, claims.at_hash);

    // Narrowed to no openid: no ID token.
    const narrowed = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.refresh_token as string,
      scope: 'email',
    });
    assert.equal(narrowed.status, 200);
    assert.equal(narrowed.body.scope, 'email');
    assert.equal(narrowed.body.id_token, undefined);
  });

  it('states preferred_username and name with profile or identify, and no email without email', async () => {
    const named = await registerUser(server);
    await request(server, 'PATCH', '/v1/users/@me', { auth: named.token, body: { global_name: 'Named One' } });
    for (const scope of ['openid profile', 'openid identify']) {
      const body = await rawTokens(named, { scope, nonce: 'n-1' });
      assert.deepEqual(Object.keys(body).sort(), [
        'access_token',
        'expires_in',
        'id_token',
        'refresh_token',
        'scope',
        'token_type',
      ]);
      const claims = decodeJwt(body.id_token);
      assert.deepEqual(Object.keys(claims).sort(), [
        'at_hash',
        'aud',
        'auth_time',
        'azp',
        'exp',
        'iat',
        'iss',
        'name',
        'nonce',
        'preferred_username',
        'sub',
      ]);
      assert.equal(claims.preferred_username, named.username);
      assert.equal(claims.name, 'Named One');
      assert.equal(claims.nonce, 'n-1');
    }
    const profile = await rawTokens(named, { scope: 'openid profile' });
    assert.equal(decodeJwt(profile.id_token).nonce, undefined, 'no nonce when none was sent');
    const info = await request(server, 'GET', '/v1/oauth2/userinfo', { auth: `Bearer ${profile.access_token}` });
    assert.equal(info.status, 200);
    assert.deepEqual(info.body, { sub: named.id, preferred_username: named.username, name: 'Named One' });

    const plain = await rawTokens(named, { scope: 'identify' });
    assert.equal(plain.id_token, undefined, 'no ID token without openid');
  });

  it('a tampered ID token fails verification', async () => {
    const tampered = async (change: (token: string) => string) => {
      const hook: client.CustomFetch = async (url, options) => {
        const response = await fetch(url, options as RequestInit);
        if (!url.endsWith('/v1/oauth2/token')) return response;
        const body = await response.json();
        body.id_token = change(body.id_token);
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      };
      const config = await discovered(app, hook);
      const { tokens } = await codeFlow(server, config, user, {
        redirectUri: REDIRECT,
        scope: 'openid email',
        nonce: true,
      });
      return tokens;
    };
    const segments = (token: string) => token.split('.') as [string, string, string];
    // Another subject in the payload, the original signature kept.
    const otherSubject = (token: string) => {
      const [head, payload, signature] = segments(token);
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      claims.email = 'attacker@evil.example';
      return `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    };
    // One signature byte flipped.
    const flipped = (token: string) => {
      const [head, payload, signature] = segments(token);
      const bytes = Buffer.from(signature, 'base64url');
      bytes[5] = (bytes[5] as number) ^ 0x01;
      return `${head}.${payload}.${bytes.toString('base64url')}`;
    };
    for (const change of [otherSubject, flipped]) {
      await assert.rejects(tampered(change), (error: any) => {
        assert.equal(error.code, 'OAUTH_INVALID_RESPONSE');
        assert.equal(error.cause?.message, 'JWT signature verification failed');
        return true;
      });
    }
    // The untampered control passes through the same hook.
    const ok = await tampered((token) => token);
    assert.equal(ok.claims()?.sub, user.id);

    const body = await rawTokens(user, { scope: 'openid' });
    const jwks = createRemoteJWKSet(new URL(`${server.url}/v1/oauth2/jwks`));
    await assert.rejects(jwtVerify(flipped(body.id_token), jwks), errors.JWSSignatureVerificationFailed);
    await assert.rejects(jwtVerify(otherSubject(body.id_token), jwks), errors.JWSSignatureVerificationFailed);
    await assert.rejects(
      jwtVerify(body.id_token, jwks, { audience: otherApp.id }),
      (error: any) => error.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && error.claim === 'aud',
    );
  });
});

describe('prompt and max_age', () => {
  it('prompt=none: login_required without a session, a code with nonce and auth_time with one', async () => {
    const silentUser = await registerUser(server);
    const base = {
      response_type: 'code',
      client_id: app.id,
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      nonce: 'silent-nonce',
      prompt: 'none',
    };
    const anonymous = await authorize(server, base);
    assert.equal(anonymous.status, 302);
    const anon = new URL(anonymous.headers.get('location') as string);
    assert.equal(anon.origin + anon.pathname, REDIRECT);
    assert.equal(anon.searchParams.get('error'), 'login_required');
    assert.equal(anon.searchParams.get('state'), 'st');

    const noGrant = new URL((await authorize(server, base, silentUser.token)).headers.get('location') as string);
    assert.equal(noGrant.searchParams.get('error'), 'consent_required');

    await rawTokens(silentUser, { scope: 'openid' });
    const silent = await authorize(server, base, silentUser.token);
    assert.equal(silent.status, 302);
    const location = new URL(silent.headers.get('location') as string);
    assert.equal(location.searchParams.get('state'), 'st');
    const code = location.searchParams.get('code') as string;
    assert.match(code, /^[A-Za-z0-9_-]{43}$/);
    const tokens = await exchangeCode(server, app, code, REDIRECT);
    assert.equal(tokens.status, 200);
    const claims = decodeJwt(tokens.body.id_token);
    assert.equal(claims.nonce, 'silent-nonce');
    assert.equal(claims.sub, silentUser.id);
    // A NUL in the nonce is an invalid request sent back to the client (it used to be a 500 storing the code).
    const nulNonce = new URL(
      (await authorize(server, { ...base, nonce: 'a\u0000b' }, silentUser.token)).headers.get('location') as string,
    );
    assert.equal(nulNonce.searchParams.get('error'), 'invalid_request');
    assert.equal(nulNonce.searchParams.get('state'), 'st');

    // The session signed in a while ago: max_age decides.
    await harness(server, 'POST', '/clock', { offset_ms: 120_000 });
    const tooOld = new URL(
      (await authorize(server, { ...base, max_age: '60' }, silentUser.token)).headers.get('location') as string,
    );
    assert.equal(tooOld.searchParams.get('error'), 'login_required');
    assert.equal(tooOld.searchParams.get('state'), 'st');
    const recentEnough = new URL(
      (await authorize(server, { ...base, max_age: '600' }, silentUser.token)).headers.get('location') as string,
    );
    assert.ok(recentEnough.searchParams.get('code'));
    assert.equal(recentEnough.searchParams.get('error'), null);

    const combined = new URL(
      (await authorize(server, { ...base, prompt: 'none login' }, silentUser.token)).headers.get('location') as string,
    );
    assert.equal(combined.searchParams.get('error'), 'invalid_request');
  });

  it('prompt=login and max_age at consent: 403 LOGIN_REQUIRED until the user signs in again', async () => {
    const returning = await registerUser(server);
    const base = { scope: 'openid', client_id: app.id, redirect_uri: REDIRECT, response_type: 'code' };
    // Just registered: the sign-in is fresh.
    assert.equal((await consent(server, returning, { ...base, prompt: 'login' })).status, 200);

    await harness(server, 'POST', '/clock', { offset_ms: 120_000 });
    for (const extra of [{ prompt: 'login' }, { max_age: '60' }, { max_age: 0 }, { prompt: 'consent login' }]) {
      const res = await consent(server, returning, { ...base, ...extra });
      assert.equal(res.status, 403, JSON.stringify(extra));
      assert.equal(res.body.code, 'LOGIN_REQUIRED');
      assert.equal(res.body.message, 'Sign in again to continue');
    }
    assert.equal((await consent(server, returning, { ...base, max_age: '600' })).status, 200);
    assert.equal((await consent(server, returning, { ...base, prompt: 'consent' })).status, 200);

    // Signing in again satisfies prompt=login; auth_time is the new sign-in.
    const signedIn = await login(server, returning.email, returning.password);
    assert.equal(signedIn.status, 200, signedIn.text);
    const again = { ...returning, token: signedIn.body.token as string };
    const loginAt = Math.floor((Date.now() + 120_000) / 1000);
    const body = await rawTokens(again, { scope: 'openid', prompt: 'login', max_age: '60' });
    const claims = decodeJwt(body.id_token);
    assert.ok(Math.abs((claims.auth_time as number) - loginAt) <= 2, `auth_time ${claims.auth_time} vs ${loginAt}`);
  });
});

describe('invalid requests', () => {
  it('answers malformed OpenID parameters with exact 4xx codes', async () => {
    const base = { scope: 'openid', client_id: app.id, redirect_uri: REDIRECT, response_type: 'code' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ prompt: 'sometimes' }, 'prompt', 'INVALID_FORMAT'],
      [{ prompt: 'none login' }, 'prompt', 'INVALID_FORMAT'],
      [{ max_age: 'soon' }, 'max_age', 'INVALID_FORMAT'],
      [{ max_age: '-1' }, 'max_age', 'INVALID_FORMAT'],
      [{ nonce: 'x'.repeat(513) }, 'nonce', 'INVALID_FORMAT'],
      [{ nonce: '' }, 'nonce', 'INVALID_FORMAT'],
      [{ scope: 'openid phone' }, 'scope', 'INVALID_SCOPE'],
    ];
    for (const [change, path, code] of cases) {
      const res = await consent(server, user, { ...base, ...change });
      assert.equal(res.status, 400, JSON.stringify(change));
      assert.equal(res.body.code, 'INVALID_FORM_BODY');
      assert.deepEqual(
        res.body.errors.map((e: any) => [e.path, e.code]),
        [[path, code]],
        JSON.stringify(change),
      );
    }

    const unknownClient = await authorize(server, { ...base, client_id: '424242', prompt: 'none' });
    assert.equal(unknownClient.status, 404);
    assert.equal((await unknownClient.json()).code, 'UNKNOWN_APPLICATION');
    const badRedirect = await authorize(server, { ...base, redirect_uri: 'https://evil.example/cb', prompt: 'none' });
    assert.equal(badRedirect.status, 400);
    assert.equal(badRedirect.headers.get('location'), null);
    const badScope = new URL(
      (await authorize(server, { ...base, scope: 'openid phone', prompt: 'none' })).headers.get('location') as string,
    );
    assert.equal(badScope.searchParams.get('error'), 'invalid_scope');

    // A code for an openid request with the wrong verifier: invalid_grant, no ID token.
    const pkce = pkcePair();
    const approved = await consent(server, user, {
      ...base,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    const wrong = await exchangeCode(server, app, codeFrom(approved), REDIRECT, { code_verifier: pkcePair().verifier });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, 'invalid_grant');
    assert.equal(wrong.body.id_token, undefined);

    // userinfo needs identify or openid.
    const guildsOnly = await rawTokens(user, { scope: 'guilds' });
    const info = await request(server, 'GET', '/v1/oauth2/userinfo', { auth: `Bearer ${guildsOnly.access_token}` });
    assert.equal(info.status, 403);
    assert.equal(info.body.code, 'MISSING_OAUTH_SCOPE');
    assert.equal(info.body.required_scope, 'identify');
    const noToken = await request(server, 'GET', '/v1/oauth2/userinfo', { auth: user.token });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.code, 'UNAUTHORIZED');

    const post = await request(server, 'POST', '/v1/oauth2/jwks', { body: {} });
    assert.equal(post.status, 404);
    assert.equal(post.body.code, 'NOT_FOUND');
    const deeper = await request(server, 'GET', '/.well-known/openid-configuration/x');
    assert.equal(deeper.status, 404);
  });
});

describe('signing keys', () => {
  it('are sealed at rest, rotate after 30 days, and old keys stay published while their tokens live', async () => {
    // The first key was made when the JWKS was first asked for (or the first ID token signed).
    const first = await rawTokens(user, { scope: 'openid' });
    const firstKid = decodeProtectedHeader(first.id_token).kid as string;
    const rows = await server.app.services.db.query<{ kid: string; public_jwk: any; private_jwk_sealed: string }>(
      'SELECT kid, public_jwk, private_jwk_sealed FROM oidc_signing_keys',
    );
    assert.deepEqual(
      rows.map((row) => row.kid),
      [firstKid],
    );
    const [row] = rows;
    assert.ok(row);
    assert.equal(row.public_jwk.d, undefined);
    assert.ok(!row.private_jwk_sealed.includes('"d"'), 'the private key is not stored in clear');
    assert.throws(() => JSON.parse(row.private_jwk_sealed));

    // Still the same key 29 days on.
    await harness(server, 'POST', '/clock', { offset_ms: 29 * 24 * 3600_000 });
    const later = await rawTokens(user, { scope: 'openid' });
    assert.equal(decodeProtectedHeader(later.id_token).kid, firstKid);

    // After 30 days a new key signs; both are published.
    const rotatedAt = 31 * 24 * 3600_000;
    await harness(server, 'POST', '/clock', { offset_ms: rotatedAt });
    const rotated = await rawTokens(user, { scope: 'openid' });
    const secondKid = decodeProtectedHeader(rotated.id_token).kid as string;
    assert.notEqual(secondKid, firstKid);
    const both = await request(server, 'GET', '/v1/oauth2/jwks');
    assert.deepEqual(both.body.keys.map((key: any) => key.kid).sort(), [firstKid, secondKid].sort());
    const keySet = createLocalJWKSet(both.body);
    const laterIat = decodeJwt(later.id_token).iat as number;
    await jwtVerify(later.id_token, keySet, { currentDate: new Date(laterIat * 1000) });
    await jwtVerify(rotated.id_token, keySet, { currentDate: new Date(Date.now() + rotatedAt) });

    // Two hours after the rotation the old key's tokens have expired: only the new key is published.
    await harness(server, 'POST', '/clock', { offset_ms: rotatedAt + 2 * 3600_000 + 60_000 });
    const after = await request(server, 'GET', '/v1/oauth2/jwks');
    assert.deepEqual(
      after.body.keys.map((key: any) => key.kid),
      [secondKid],
    );
  });
});

describe('public clients', () => {
  it('run code + PKCE with client_id alone (auth method none), and nothing else works without a secret', async () => {
    const created = await request(server, 'POST', '/v1/oauth2/applications', {
      auth: owner.token,
      body: { name: 'Native app', redirect_uris: ['http://127.0.0.1:9/native'], public_client: true },
    });
    assert.equal(created.status, 200);
    assert.equal(created.body.public_client, true);
    assert.equal(app.body.public_client, false);
    const native: TestApplication = {
      id: created.body.id,
      clientSecret: created.body.client_secret,
      botToken: created.body.bot.token,
      body: created.body,
    };
    const redirect = 'http://127.0.0.1:9/native';

    const config = await client.discovery(new URL(server.url), native.id, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    client.enableNonRepudiationChecks(config);
    assert.ok((config.serverMetadata().token_endpoint_auth_methods_supported as string[]).includes('none'));
    const { tokens } = await codeFlow(server, config, user, {
      redirectUri: redirect,
      scope: 'openid profile',
      nonce: true,
    });
    const claims = tokens.claims();
    assert.equal(claims?.sub, user.id);
    assert.equal(claims?.aud, native.id);
    assert.equal(claims?.preferred_username, user.username);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    assert.equal(refreshed.claims()?.sub, user.id);

    // Bound to this client: another client (even with its secret) cannot redeem the refresh token.
    const stolen = await clientPost(server, '/v1/oauth2/token', app, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.refresh_token as string,
    });
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.error, 'invalid_grant');

    // Introspection needs a secret; revocation does not.
    const introspect = await clientPost(server, '/v1/oauth2/introspect', undefined, {
      client_id: native.id,
      token: refreshed.access_token,
    });
    assert.equal(introspect.status, 401);
    assert.equal(introspect.body.error, 'invalid_client');
    await client.tokenRevocation(config, refreshed.refresh_token as string);
    const me = await request(server, 'GET', '/v1/oauth2/userinfo', { auth: `Bearer ${refreshed.access_token}` });
    assert.equal(me.status, 401);

    // PKCE is required of a public client.
    const noPkce = await consent(server, user, {
      client_id: native.id,
      scope: 'openid',
      redirect_uri: redirect,
      response_type: 'code',
    });
    assert.equal(noPkce.status, 400);
    assert.deepEqual(
      noPkce.body.errors.map((e: any) => [e.path, e.code]),
      [['code_challenge', 'BASE_TYPE_REQUIRED']],
    );
    const silentNoPkce = await authorize(
      server,
      { response_type: 'code', client_id: native.id, redirect_uri: redirect, scope: 'openid', prompt: 'none' },
      user.token,
    );
    assert.equal(new URL(silentNoPkce.headers.get('location') as string).searchParams.get('error'), 'invalid_request');

    // A confidential client cannot leave its secret out.
    const confidential = await clientPost(server, '/v1/oauth2/token', undefined, {
      grant_type: 'refresh_token',
      client_id: app.id,
      refresh_token: 'x',
    });
    assert.equal(confidential.status, 401);
    assert.equal(confidential.body.error, 'invalid_client');

    // Made confidential again, the client_id alone no longer authenticates.
    const patched = await request(server, 'PATCH', `/v1/oauth2/applications/${native.id}`, {
      auth: owner.token,
      body: { public_client: false },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.public_client, false);
    const refused = await clientPost(server, '/v1/oauth2/token', undefined, {
      grant_type: 'refresh_token',
      client_id: native.id,
      refresh_token: 'x',
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
  });
});

describe('CORS for browser relying parties', () => {
  it('opens discovery, JWKS, token, revocation and userinfo to any origin, but not introspection', async () => {
    const origin = { origin: 'https://spa.example' };
    for (const path of [
      '/.well-known/openid-configuration',
      '/v1/oauth2/jwks',
      '/v1/oauth2/token',
      '/v1/oauth2/token/revoke',
      '/v1/oauth2/userinfo',
    ]) {
      const preflight = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          ...origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.equal(preflight.status, 204, path);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*', path);
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization, Content-Type/, path);
    }
    const token = await clientPost(server, '/v1/oauth2/token', app, { grant_type: 'refresh_token' }, origin);
    assert.equal(token.status, 400);
    assert.equal(token.headers.get('access-control-allow-origin'), '*');
    const jwks = await request(server, 'GET', '/v1/oauth2/jwks', { headers: origin });
    assert.equal(jwks.headers.get('access-control-allow-origin'), '*');

    const introspect = await clientPost(server, '/v1/oauth2/introspect', app, { token: 'x' }, origin);
    assert.equal(introspect.status, 200);
    assert.equal(introspect.headers.get('access-control-allow-origin'), null);
    const consentApi = await fetch(`${server.url}/v1/oauth2/authorize/consent`, { method: 'OPTIONS', headers: origin });
    assert.equal(consentApi.headers.get('access-control-allow-origin'), null);
  });
});

describe('RP-initiated logout (end_session_endpoint)', () => {
  const OTHER_REDIRECT = 'https://rp.example/signed-out';
  let logoutApp: TestApplication;
  before(async () => {
    logoutApp = await createApplication(server, owner, {
      name: 'Logout party',
      redirect_uris: [REDIRECT, OTHER_REDIRECT],
    });
  });

  /** An ID token for `who` from a real code flow with openid-client. */
  async function idTokenFor(who: TestUser, target: TestApplication) {
    const config = await discovered(target);
    const { tokens } = await codeFlow(server, config, who, { redirectUri: REDIRECT, scope: 'openid', nonce: true });
    return { config, idToken: tokens.id_token as string };
  }

  it('openid-client builds the logout URL from discovery; the endpoint checks it and sends the browser to the sign-out page', async () => {
    const who = await registerUser(server);
    const { config, idToken } = await idTokenFor(who, logoutApp);
    const url = client.buildEndSessionUrl(config, {
      id_token_hint: idToken,
      post_logout_redirect_uri: OTHER_REDIRECT,
      state: 'st-1',
    });
    assert.equal(url.origin + url.pathname, `${server.url}/v1/oauth2/logout`);
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const page = new URL(res.headers.get('location') as string);
    assert.equal(page.origin + page.pathname, `${server.url}/oauth2/logout`);
    assert.deepEqual(Object.fromEntries(page.searchParams), {
      id_token_hint: idToken,
      client_id: logoutApp.id,
      post_logout_redirect_uri: OTHER_REDIRECT,
      state: 'st-1',
    });

    // The page's confirmation ends the caller's session and answers where to go, with state.
    const confirm = await request(server, 'POST', '/v1/oauth2/logout/confirm', {
      auth: who.token,
      body: Object.fromEntries(page.searchParams),
    });
    assert.equal(confirm.status, 200, confirm.text);
    assert.deepEqual(confirm.body, { signed_out: true, redirect_to: `${OTHER_REDIRECT}?state=st-1` });
    const after = await request(server, 'GET', '/v1/users/@me', { auth: who.token });
    assert.equal(after.status, 401);
  });

  it('accepts the form POST too, an expired hint, client_id alone, and no redirect at all', async () => {
    const who = await registerUser(server);
    const { idToken } = await idTokenFor(who, logoutApp);
    const posted = await fetch(`${server.url}/v1/oauth2/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: REDIRECT }).toString(),
    });
    assert.equal(posted.status, 302);
    // Two hours on, the hint has expired (its key is still published): logging out still works.
    await harness(server, 'POST', '/clock', { offset_ms: 2 * 3600_000 - 60_000 });
    const expired = await request(server, 'POST', '/v1/oauth2/logout/confirm', {
      body: { id_token_hint: idToken, post_logout_redirect_uri: REDIRECT },
    });
    assert.equal(expired.status, 200, expired.text);
    assert.deepEqual(expired.body, { signed_out: false, redirect_to: REDIRECT });
    await harness(server, 'POST', '/clock', { offset_ms: 0 });
    const byClient = await request(server, 'POST', '/v1/oauth2/logout/confirm', {
      body: { client_id: logoutApp.id, post_logout_redirect_uri: OTHER_REDIRECT, state: 'a b' },
    });
    assert.deepEqual(byClient.body, { signed_out: false, redirect_to: `${OTHER_REDIRECT}?state=a+b` });
    const bare = await fetch(`${server.url}/v1/oauth2/logout`, { redirect: 'manual' });
    assert.equal(bare.status, 302);
    assert.equal(bare.headers.get('location'), `${server.url}/oauth2/logout`);
  });

  it('refuses, without redirecting, an unregistered post_logout_redirect_uri, a forged or foreign hint, and a mismatched client_id', async () => {
    const who = await registerUser(server);
    const { idToken } = await idTokenFor(who, logoutApp);
    const refusals: [Record<string, string>, string][] = [
      [
        { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' },
        'post_logout_redirect_uri is not a registered redirect URI of the client',
      ],
      [
        { id_token_hint: idToken, post_logout_redirect_uri: `${REDIRECT}/x` },
        'post_logout_redirect_uri is not a registered redirect URI of the client',
      ],
      [{ post_logout_redirect_uri: REDIRECT }, 'post_logout_redirect_uri needs id_token_hint or client_id'],
      [{ id_token_hint: idToken, client_id: otherApp.id }, 'client_id does not match the id_token_hint'],
      [{ client_id: '123456789012345678', post_logout_redirect_uri: REDIRECT }, 'Unknown client'],
      [{ id_token_hint: `${idToken.slice(0, -4)}AAAA` }, 'id_token_hint is not an ID token issued here'],
      [{ id_token_hint: 'not-a-jwt' }, 'id_token_hint is not an ID token issued here'],
    ];
    // A token with the right shape signed by someone else's key.
    const { SignJWT, generateKeyPair } = await import('jose');
    const foreign = await generateKeyPair('ES256');
    const claims = decodeJwt(idToken);
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(idToken).kid as string })
      .sign(foreign.privateKey);
    refusals.push([
      { id_token_hint: forged, post_logout_redirect_uri: REDIRECT },
      'id_token_hint is not an ID token issued here',
    ]);
    for (const [params, description] of refusals) {
      const res = await fetch(`${server.url}/v1/oauth2/logout?${new URLSearchParams(params)}`, { redirect: 'manual' });
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.equal(res.headers.get('location'), null);
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.error, 'invalid_request');
      assert.equal(body.error_description, description);
      const confirm = await request(server, 'POST', '/v1/oauth2/logout/confirm', { auth: who.token, body: params });
      assert.equal(confirm.status, 400);
      assert.equal(confirm.body.error_description, description);
    }
    // Refused confirmations signed nobody out.
    assert.equal((await request(server, 'GET', '/v1/users/@me', { auth: who.token })).status, 200);
  });
});
