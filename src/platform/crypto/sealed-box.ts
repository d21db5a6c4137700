import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { hmacSha256 } from './tokens.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/**
 * A 256-bit key for one purpose, derived from a long-lived server secret with HKDF-SHA256. The `info` label
 * separates purposes, so one secret never keys two kinds of data.
 */
export function deriveKey(secret: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), info, KEY_BYTES));
}

/**
 * AES-256-GCM; output `iv.tag.ciphertext` in base64url. `context` is bound as associated data: a sealed
 * value moved to another row (another `context`) no longer opens.
 */
export function sealWithKey(key: Buffer, plaintext: string, context = ''): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (context) cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
}

/** The sealed text, or undefined when the key or context is wrong or the value was tampered with. */
export function openWithKey(key: Buffer, sealed: string, context = ''): string | undefined {
  const parts = sealed.split('.');
  if (parts.length !== 3) return undefined;
  const [iv, tag, body] = parts.map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !body || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    if (context) decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * Seals a value under a key derived from a secret the server does not keep (a ticket or an emailed token;
 * only their SHA-256 digests are stored), so a copy of the database alone opens nothing. The key is
 * HMAC-SHA256(secret, label): values sealed before this module existed must still open.
 */
export function sealUnder(secret: string, label: string, plaintext: string): string {
  return sealWithKey(hmacSha256(secret, label), plaintext);
}

export function openUnder(secret: string, label: string, sealed: string): string | undefined {
  return openWithKey(hmacSha256(secret, label), sealed);
}
