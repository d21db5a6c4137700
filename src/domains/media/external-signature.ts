import { constantTimeEqual, hmacSha256 } from '../../platform/crypto/tokens.ts';

/** `target` = `v2/` + b64u(URL); signature = b64u(HMAC-SHA256(secret, target)) (docs/media.md). */
export function externalMediaPath(secret: string, url: string): string {
  const target = `v2/${Buffer.from(url, 'utf8').toString('base64url')}`;
  return `/external/${hmacSha256(secret, target).toString('base64url')}/${target}`;
}

/** Returns the URL a signed path authorises, or undefined for any bad signature, of any length. */
export function verifyExternalPath(secret: string, signature: string, target: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(signature)) return undefined;
  const given = Buffer.from(signature, 'base64url');
  // Non-canonical base64 (different padding bits) decodes to the same bytes: refuse it so a signature has one spelling.
  if (given.toString('base64url') !== signature) return undefined;
  const expected = hmacSha256(secret, target);
  if (given.length !== expected.length || !constantTimeEqual(given, expected)) return undefined;
  const match = /^v2\/([A-Za-z0-9_-]+)$/.exec(target);
  if (!match) return undefined;
  const url = Buffer.from(match[1] as string, 'base64url').toString('utf8');
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}
