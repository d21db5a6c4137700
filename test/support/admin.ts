import { randomBytes } from 'node:crypto';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { type ApiResponse, harness, registerUser, request, type TestUser } from './client.ts';
import type { TestServer } from './server.ts';

/**
 * Test setup for the Admin API. Bot tokens and OAuth2 bearer tokens are written straight into the server's
 * own database (through `app.services.db`), the way the applications and OAuth2 modules store them; the
 * server then authenticates them through its normal credential path. This is setup, not a mock.
 */

export async function setAcls(server: TestServer, userId: string, acls: string[] | null): Promise<void> {
  const res = await harness(server, 'POST', `/users/${userId}/acls`, { acls });
  if (res.status !== 200) throw new Error(`set acls failed: ${res.status} ${res.text}`);
}

export async function adminUser(server: TestServer, acls: string[]): Promise<TestUser> {
  const user = await registerUser(server);
  await setAcls(server, user.id, acls);
  return user;
}

export function adminApplicationId(server: TestServer): string {
  const id = server.app.services.settings.get().admin_oauth2_application_id;
  if (!id) throw new Error('the Admin OAuth2 application was not created at start');
  return id;
}

/** A third-party application owned by `ownerId`, with a bot account and its token. */
export async function insertApplicationWithBot(
  server: TestServer,
  ownerId: string,
): Promise<{ applicationId: string; botUserId: string; botToken: string }> {
  const { db, ids } = server.app.services;
  const applicationId = ids.next();
  const botUserId = applicationId;
  const botToken = server.app.services.tokenCheck.newBotToken(applicationId);
  await db.query('INSERT INTO users (id, username, is_bot) VALUES ($1, $2, true)', [botUserId, `bot${applicationId}`]);
  await db.query(
    `INSERT INTO applications (id, owner_id, name, client_secret_hash, bot_user_id, bot_token_hash)
     VALUES ($1, $2, 'Third party', $3, $4, $5)`,
    [applicationId, ownerId, digest(randomBytes(32).toString('base64url')), botUserId, digest(botToken)],
  );
  return { applicationId, botUserId, botToken };
}

/** An OAuth2 access token of `applicationId` for `userId` (grant + access token rows). */
export async function insertBearerToken(
  server: TestServer,
  userId: string,
  applicationId: string,
  scopes: string[] = ['identify'],
): Promise<string> {
  const { db, ids, clock } = server.app.services;
  const token = randomBytes(32).toString('base64url');
  const [grant] = await db.query<{ id: string }>(
    `INSERT INTO oauth2_grants (id, user_id, application_id, scopes) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id, application_id) DO UPDATE SET scopes = EXCLUDED.scopes RETURNING id`,
    [ids.next(), userId, applicationId, scopes],
  );
  await db.query(
    `INSERT INTO oauth2_tokens (token_hash, grant_id, kind, scopes, expires_at) VALUES ($1, $2, 'access', $3, $4)`,
    [digest(token), grant?.id, scopes, new Date(clock.now() + 7 * 86_400_000)],
  );
  return token;
}

/** Mints an Admin API key through the API (sudo by password), as an operator would. */
export async function createKey(
  server: TestServer,
  owner: TestUser,
  acls: string[],
  extra: Record<string, unknown> = {},
): Promise<{ key_id: string; key: string }> {
  const res = await request(server, 'POST', '/v1/admin/api-keys', {
    auth: owner.token,
    body: { name: `key-${randomBytes(3).toString('hex')}`, acls, password: owner.password, ...extra },
  });
  if (res.status !== 200) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body;
}

export function adminCall(
  server: TestServer,
  method: string,
  path: string,
  auth: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<ApiResponse> {
  return request(server, method, `/v1/admin${path}`, {
    ...(auth !== undefined ? { auth } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(headers ? { headers } : {}),
  });
}
