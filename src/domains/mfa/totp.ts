import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../platform/crypto/tokens.ts';

/** RFC 6238 as authenticator apps implement it (docs/mfa-and-sudo.md): HMAC-SHA1, 6 digits, 30 s steps, ±1 step. */
export const TOTP_STEP_MS = 30_000;
export const TOTP_DIGITS = 6;
const TOTP_WINDOW = 1;

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 base32 without padding requirements; spaces, dashes and `=` are ignored and case does not matter,
 * because people copy secrets by hand. Returns undefined for any other character.
 */
export function decodeBase32(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32_ALPHABET.indexOf(char);
    if (index < 0) return undefined;
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** Canonical storage form: upper case, no separators or padding. */
export function normaliseBase32(text: string): string {
  return text.replace(/[\s=-]/g, '').toUpperCase();
}

/** RFC 4226 HOTP value for one counter. */
export function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

export function totpStep(now: number): number {
  return Math.floor(now / TOTP_STEP_MS);
}

/**
 * The time step (within ±1 of now) whose code equals `code`, or undefined. Every candidate is compared, in
 * constant time, so the answer's timing does not reveal which step matched.
 */
export function matchTotp(key: Buffer, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const current = totpStep(now);
  let matched: number | undefined;
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step++) {
    if (constantTimeEqual(hotp(key, step), code) && matched === undefined) matched = step;
  }
  return matched;
}
