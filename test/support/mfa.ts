import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { type ApiResponse, harness, request, uniqueEmail } from './client.ts';
import type { TestServer } from './server.ts';

/** WebAuthn relying party the MFA test servers are configured with. */
export const RP_ID = 'hearth.test';
export const RP_ORIGIN = 'https://hearth.test';
export const WEBAUTHN_ENV = { HEARTH_WEBAUTHN_RP_ID: RP_ID, HEARTH_WEBAUTHN_ORIGINS: RP_ORIGIN };

export const STRICT = { 'x-test-strict': 'true' };
export const SUDO_HEADER = 'x-service-sudo-mode-jwt';

/** The server clock offset the tests last set (the server adds it to every expiry and every TOTP step). */
let clockOffsetMs = 0;

export async function setClock(server: Pick<TestServer, 'url'>, offsetMs: number): Promise<void> {
  const res = await harness(server, 'POST', '/clock', { offset_ms: offsetMs });
  if (res.status !== 200) throw new Error(`clock: ${res.status} ${res.text}`);
  clockOffsetMs = offsetMs;
}

export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

/** The code an authenticator app shows at server time + `shiftMs`, computed by an independent implementation. */
export function totpCode(secret: string, shiftMs = 0): string {
  const totp = new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  });
  return totp.generate({ timestamp: Date.now() + clockOffsetMs + shiftMs });
}

export interface TotpAccount {
  secret: string;
  backupCodes: string[];
}

/** Enables TOTP; `sudo` carries the sudo fields needed when the account already has a passkey. */
export async function enableTotp(
  server: Pick<TestServer, 'url'>,
  token: string,
  sudo: Record<string, unknown> = {},
): Promise<TotpAccount> {
  const secret = newTotpSecret();
  const res = await request(server, 'POST', '/v1/users/@me/mfa/totp/enable', {
    auth: token,
    body: { secret, code: totpCode(secret), ...sudo },
  });
  if (res.status !== 200) throw new Error(`enable totp: ${res.status} ${res.text}`);
  return { secret, backupCodes: res.body.backup_codes.map((c: { code: string }) => c.code) };
}

/** An account registered without a password (email only). */
export async function registerPasswordless(server: Pick<TestServer, 'url'>): Promise<{ id: string; token: string }> {
  const res = await request(server, 'POST', '/v1/auth/register', {
    body: { email: uniqueEmail('nopw'), username: `np${randomBytes(5).toString('hex')}` },
  });
  if (res.status !== 200) throw new Error(`register: ${res.status} ${res.text}`);
  return { id: res.body.user_id, token: res.body.token };
}

/**
 * A fresh sudo proof for an MFA account, obtained the way a client gets one: re-verifying TOTP on a
 * harmless sudo operation (logging out no sessions) and reading the response header.
 */
export async function sudoProofViaTotp(
  server: Pick<TestServer, 'url'>,
  token: string,
  secret: string,
): Promise<string> {
  const res = await request(server, 'POST', '/v1/auth/sessions/logout', {
    auth: token,
    body: { session_id_hashes: [], mfa_method: 'totp', mfa_code: totpCode(secret) },
  });
  const proof = res.headers.get(SUDO_HEADER);
  if (res.status !== 204 || !proof) throw new Error(`sudo proof: ${res.status} ${res.text}`);
  return proof;
}

/** Decodes a JWT's claims without verifying (the server verifies; tests only read). */
export function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

/** Changes one character in the middle of the signature, so the decoded bytes surely differ. */
export function tamper(token: string): string {
  const [h, p, s = ''] = token.split('.');
  const i = Math.floor(s.length / 2);
  const swapped = s[i] === 'A' ? 'B' : 'A';
  return `${h}.${p}.${s.slice(0, i)}${swapped}${s.slice(i + 1)}`;
}

export function errorCodes(res: ApiResponse): string[] {
  return (res.body?.errors ?? []).map((e: { path: string; code: string }) => `${e.path}:${e.code}`);
}
