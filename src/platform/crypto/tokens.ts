import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of 62 below 256: bytes at or above it are rejected so every character is equally likely. */
const BASE62_REJECT_FROM = 248;

/** Random base62 text from the CSPRNG, by rejection sampling (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(Math.ceil((length - out.length) * 1.1) + 4);
    for (const byte of bytes) {
      if (byte >= BASE62_REJECT_FROM) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomBase64Url(byteLength: number): string {
  return randomBytes(byteLength).toString('base64url');
}

/** SHA-256 of a token as unpadded base64url: the only form in which a token is stored. */
export function digest(token: string): string {
  // The one-shot form skips the Hash object: it runs on every authenticated request.
  return hash('sha256', token, 'base64url');
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

export function hmacSha256(secret: string | Buffer, data: string): Buffer {
  return createHmac('sha256', secret).update(data, 'utf8').digest();
}

/** Constant-time comparison that never throws: a length mismatch is a plain `false`. */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  if (left.length !== right.length) {
    // Compare against itself so the time spent does not depend on where the inputs differ.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

export const SESSION_TOKEN_PREFIX = 'flx_';
export const SESSION_TOKEN_PATTERN = /^flx_[A-Za-z0-9]{36}$/;

/** The public name of a session: unpadded base64url SHA-256 of its token (docs/conventions.md#credentials). */
export const sessionIdHash = digest;
