import { createHash, randomBytes } from 'node:crypto';
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
  const code = new URL(res.body.redirect_to).searchParams.get('code');
  if (!code) throw new Error('no code in redirect');
  return code;
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

/** Runs consent and the code exchange; returns the token response. */
export async function issueTokens(
  server: Pick<TestServer, 'url'>,
  user: TestUser,
  app: TestApplication,
  scope: string,
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const code = await approve(server, user, app, { scope });
  const res = await clientPost(server, '/v1/oauth2/token', app, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: app.body.redirect_uris[0],
  });
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${res.text}`);
  return res.body;
}
