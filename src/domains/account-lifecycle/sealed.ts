import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { hmacSha256 } from '../../platform/crypto/tokens.ts';

/**
 * Seals a value under a key derived from a secret the server does not keep (a ticket or an emailed
 * token; only their SHA-256 digests are stored). The stored digest cannot reproduce the HMAC-derived
 * key, so a copy of the database alone opens nothing. AES-256-GCM, output `iv.tag.ciphertext` base64url.
 */
export function seal(secret: string, label: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', hmacSha256(secret, label), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
}

/** The sealed value, or undefined when the secret is wrong or the text was tampered with. */
export function open(secret: string, label: string, sealed: string): string | undefined {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !body || iv.length !== 12 || tag.length !== 16) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', hmacSha256(secret, label), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
