import { randomBytes } from 'node:crypto';
import { TEST_TOKEN, type TestServer } from './server.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** Sent verbatim as the Authorization header (so tests can send any form). */
  auth?: string;
  body?: unknown;
  /** Raw body text; wins over `body`. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Shortcut for the test-harness token header. */
  harness?: boolean;
}

/** A thin HTTP client over fetch for black-box tests. Paths are absolute (`/v1/...`). */
export async function request<T = any>(
  server: Pick<TestServer, 'url'>,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.auth !== undefined) headers.authorization = options.auth;
  if (options.harness) headers['x-test-token'] = TEST_TOKEN;
  let payload: string | Buffer | undefined;
  if (options.raw !== undefined) payload = options.raw;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: typeof payload === 'string' || payload === undefined ? payload : new Uint8Array(payload),
  });
  const text = await response.text();
  let body: unknown = text;
  if (text.length > 0 && (response.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: body as T, text };
}

export interface TestUser {
  id: string;
  token: string;
  email: string;
  password: string;
  username: string;
}

let counter = 0;

export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}.${randomBytes(4).toString('hex')}@example.test`;
}

/** Registers a fresh account through the public API. */
export async function registerUser(
  server: Pick<TestServer, 'url'>,
  overrides: Partial<{ email: string; password: string; username: string }> = {},
): Promise<TestUser> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const username = overrides.username ?? `u${randomBytes(5).toString('hex')}`;
  const res = await request(server, 'POST', '/v1/auth/register', { body: { email, password, username } });
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { id: res.body.user_id, token: res.body.token, email, password, username };
}

/** Calls a test-harness route. */
export function harness<T = any>(
  server: Pick<TestServer, 'url'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse<T>> {
  return request<T>(server, method, `/v1/test${path}`, { harness: true, ...(body !== undefined ? { body } : {}) });
}
