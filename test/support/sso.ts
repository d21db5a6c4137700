import assert from 'node:assert/strict';
import { type ApiResponse, harness, registerUser, request, type TestUser } from './client.ts';
import type { TestIdp } from './oidc-idp.ts';
import type { TestServer } from './server.ts';

/** Every SSO setting at its default, so one update resets whatever a previous test changed. */
export const SSO_DEFAULTS = {
  enabled: false,
  enforced: false,
  display_name: null,
  issuer: null,
  authorization_url: null,
  token_url: null,
  userinfo_url: null,
  jwks_url: null,
  client_id: null,
  client_secret: null,
  scope: null,
  allowed_domains: [],
  auto_provision: false,
  link_by_email: false,
  allow_private_issuer: false,
};

/** A registered account holding every admin ACL. */
export async function adminSession(server: TestServer): Promise<TestUser> {
  const admin = await registerUser(server);
  const acl = await harness(server, 'POST', `/users/${admin.id}/acls`, { acls: ['*'] });
  assert.equal(acl.status, 200, acl.text);
  return admin;
}

export function updateSso(server: TestServer, admin: TestUser, sso: Record<string, unknown>): Promise<ApiResponse> {
  return request(server, 'POST', '/v1/admin/instance-config/update', { auth: admin.token, body: { sso } });
}

/** Applies settings through the Admin API and fails the test when they are refused. */
export async function configureSso(server: TestServer, admin: TestUser, sso: Record<string, unknown>): Promise<void> {
  const res = await updateSso(server, admin, { ...SSO_DEFAULTS, ...sso });
  assert.equal(res.status, 200, res.text);
}

export function startSso(server: TestServer, body: Record<string, unknown> = {}): Promise<ApiResponse> {
  return request(server, 'POST', '/v1/auth/sso/start', { body });
}

export function completeSso(server: TestServer, body: Record<string, unknown>): Promise<ApiResponse> {
  return request(server, 'POST', '/v1/auth/sso/complete', { body });
}

/** start → sign in at the provider as `subject` → complete. */
export async function ssoLogin(
  server: TestServer,
  idp: TestIdp,
  subject: string,
  startBody: Record<string, unknown> = {},
): Promise<ApiResponse> {
  const started = await startSso(server, startBody);
  assert.equal(started.status, 200, started.text);
  const back = await idp.authorize(started.body.authorization_url, subject);
  assert.equal(back.get('state'), started.body.state);
  assert.ok(back.get('code'), `provider returned no code: ${back.toString()}`);
  return completeSso(server, { code: back.get('code'), state: back.get('state') });
}

export function assertFormError(res: ApiResponse, path: string, code: string): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  assert.ok(
    res.body.errors.some((e: { path: string; code: string }) => e.path === path && e.code === code),
    `expected ${path}: ${code} in ${JSON.stringify(res.body.errors)}`,
  );
}

export function assertError(res: ApiResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code);
}
