import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { type ApiResponse, harness, request } from './client.ts';
import type { TestServer } from './server.ts';

export interface CapturedEmail {
  to: string;
  subject: string;
  type: string;
  timestamp: string;
  metadata: Record<string, any>;
  text: string;
  html: string;
}

/** Every captured email to one address, oldest first. */
export async function emailsTo(server: TestServer, to: string, type?: string): Promise<CapturedEmail[]> {
  const res = await harness(server, 'GET', `/emails?recipient=${encodeURIComponent(to)}`);
  assert.equal(res.status, 200);
  const emails = res.body.emails as CapturedEmail[];
  return type ? emails.filter((e) => e.type === type) : emails;
}

/** The newest captured email of one type to one address (fails the test when there is none). */
export async function lastEmail(server: TestServer, to: string, type: string): Promise<CapturedEmail> {
  const emails = await emailsTo(server, to, type);
  const email = emails.at(-1);
  assert.ok(email, `expected a ${type} email to ${to}`);
  return email;
}

export async function setClock(server: TestServer, offsetMs: number): Promise<void> {
  const res = await harness(server, 'POST', '/clock', { offset_ms: offsetMs });
  assert.equal(res.status, 200);
}

export function login(
  server: TestServer,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  return request(server, 'POST', '/v1/auth/login', { body: { email, password }, headers });
}

/** Asserts a 400 INVALID_FORM_BODY whose element at `path` has `code`. */
export function assertFieldError(res: ApiResponse, path: string, code: string): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.code, 'INVALID_FORM_BODY');
  const element = (res.body.errors as { path: string; code: string }[]).find((e) => e.path === path);
  assert.ok(element, `expected an error on ${path}: ${res.text}`);
  assert.equal(element.code, code);
}

/**
 * A bot account with a working bot token, written straight into the database: the applications module
 * is not what these tests exercise, only that auth routes refuse bots.
 */
export async function createBot(server: TestServer): Promise<{ userId: string; token: string }> {
  const { db, ids } = server.app.services;
  const appId = ids.next();
  const token = server.app.services.tokenCheck.newBotToken(appId);
  await db.query(`INSERT INTO users (id, username, is_bot) VALUES ($1, $2, true)`, [appId, `bot${appId.slice(-6)}`]);
  await db.query(
    `INSERT INTO applications (id, owner_id, name, client_secret_hash, bot_user_id, bot_token_hash)
     VALUES ($1, NULL, 'bot', $2, $1, $3)`,
    [appId, digest(randomBytes(16).toString('hex')), digest(token)],
  );
  return { userId: appId, token: `Bot ${token}` };
}

/** The token inside an emailed link, read from the plain-text body (what a person would click). */
export function linkToken(email: CapturedEmail, path: string, webappUrl: string): string {
  const match = new RegExp(`${escapeRegExp(webappUrl + path)}#token=([A-Za-z0-9]+)`).exec(email.text);
  assert.ok(match, `no ${path} link in: ${email.text}`);
  return match[1] as string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
