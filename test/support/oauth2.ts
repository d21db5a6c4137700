import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { TestApplication } from './applications.ts';
import { type ApiResponse, request, type TestUser } from './client.ts';
import type { TestServer } from './server.ts';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The consent API as the first-party consent page calls it. */
export function consent(
  server: Pick<TestServer, 'url'>,
  user: TestUser,
  body: Record<string, unknown>,
): Promise<ApiResponse> {
  return request(server, 'POST', '/v1/oauth2/authorize/consent', { auth: user.token, body });
}

/** Installs an application's bot in a guild through the consent API, `user` consenting to `permissions`. */
export function installBot(
  server: Pick<TestServer, 'url'>,
  user: TestUser,
  applicationId: string,
  guildId: string,
  permissions: bigint,
): Promise<ApiResponse> {
  return consent(server, user, {
    client_id: applicationId,
    scope: 'bot',
    guild_id: guildId,
    permissions: String(permissions),
  });
}

/** Approves a request and returns the code from the redirect. */
export async function approve(
  server: Pick<TestServer, 'url'>,
  user: TestUser,
  app: TestApplication,
  options: { scope?: string; redirectUri?: string; challenge?: string; state?: string } = {},
): Promise<string> {
  const res = await consent(server, user, {
    client_id: app.id,
    scope: options.scope ?? 'identify',
    redirect_uri: options.redirectUri ?? app.body.redirect_uris[0],
    response_type: 'code',
    ...(options.state !== undefined ? { state: options.state } : {}),
    ...(options.challenge !== undefined ? { code_challenge: options.challenge, code_challenge_method: 'S256' } : {}),
  });
  if (res.status !== 200) throw new Error(`consent failed: ${res.status} ${res.text}`);
  const code = codeFrom(res);
  if (!code) throw new Error('no code in redirect');
  return code;
}

/** The code in a consent answer's `redirect_to`. */
export function codeFrom(res: ApiResponse): string {
  return new URL(res.body.redirect_to).searchParams.get('code') as string;
}

/** `GET /oauth2/authorize` as a browser sends it (redirects not followed), with a session token if given. */
export function authorize(server: Pick<TestServer, 'url'>, query: Record<string, string>, auth?: string) {
  return fetch(`${server.url}/v1/oauth2/authorize?${new URLSearchParams(query)}`, {
    redirect: 'manual',
    ...(auth ? { headers: { authorization: auth } } : {}),
  });
}

/**
 * What the first-party consent page does: follow the authorize redirect to the web app, post its query to
 * the consent API; returns the client's callback URL. `queryUnchanged` also checks that the web app
 * receives the request as the client sent it.
 */
export async function consentThroughAuthorizeUrl(
  server: Pick<TestServer, 'url'>,
  authorizeUrl: URL,
  who: TestUser,
  options: { queryUnchanged?: boolean } = {},
): Promise<URL> {
  const hop = await fetch(authorizeUrl, { redirect: 'manual' });
  assert.equal(hop.status, 302);
  const page = new URL(hop.headers.get('location') as string);
  assert.equal(page.origin + page.pathname, `${server.url}/oauth2/authorize`);
  if (options.queryUnchanged)
    assert.equal(page.search, authorizeUrl.search, 'the web app receives the request unchanged');
  const res = await consent(server, who, Object.fromEntries(page.searchParams));
  assert.equal(res.status, 200, res.text);
  return new URL(res.body.redirect_to);
}

/**
 * The authorization code flow as a stock client runs it (openid-client): a PKCE pair, `state` and `nonce`
 * when asked for, consent through the first-party page, then the code exchange with the client's checks.
 */
export async function codeFlow(
  server: Pick<TestServer, 'url'>,
  config: client.Configuration,
  who: TestUser,
  options: {
    redirectUri: string;
    scope: string;
    state?: boolean;
    nonce?: boolean;
    maxAge?: number;
    queryUnchanged?: boolean;
  },
) {
  const verifier = client.randomPKCECodeVerifier();
  const state = options.state ? client.randomState() : undefined;
  const nonce = options.nonce ? client.randomNonce() : undefined;
  const authorizeUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: options.scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...(state ? { state } : {}),
    ...(nonce ? { nonce } : {}),
  });
  const callback = await consentThroughAuthorizeUrl(server, authorizeUrl, who, options);
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    ...(state ? { expectedState: state } : {}),
    ...(nonce ? { expectedNonce: nonce } : {}),
    ...(options.maxAge !== undefined ? { maxAge: options.maxAge } : {}),
  });
  return { callback, tokens, state, nonce };
}

/** A form POST to a client endpoint (token, revoke, introspect) with body client credentials. */
export function clientPost(
  server: Pick<TestServer, 'url'>,
  path: string,
  app: Pick<TestApplication, 'id' | 'clientSecret'> | undefined,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const form = new URLSearchParams(params);
  if (app) {
    form.set('client_id', app.id);
    form.set('client_secret', app.clientSecret);
  }
  return request(server, 'POST', path, {
    raw: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

/** The code exchange at the token endpoint (client credentials in the body); `extra` adds or overrides. */
export function exchangeCode(
  server: Pick<TestServer, 'url'>,
  app: Pick<TestApplication, 'id' | 'clientSecret'>,
  code: string,
  redirectUri: string,
  extra: Record<string, string> = {},
): Promise<ApiResponse> {
  return clientPost(server, '/v1/oauth2/token', app, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    ...extra,
  });
}

/** Runs consent and the code exchange; returns the token response. */
export async function issueTokens(
  server: Pick<TestServer, 'url'>,
  user: TestUser,
  app: TestApplication,
  scope: string,
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const code = await approve(server, user, app, { scope });
  const res = await exchangeCode(server, app, code, app.body.redirect_uris[0]);
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${res.text}`);
  return res.body;
}
