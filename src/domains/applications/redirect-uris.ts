import { z } from 'zod';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_REDIRECT_URIS = 10;

/**
 * A registrable redirect URI: absolute https, or http only on loopback (native apps, RFC 8252), without a
 * fragment (RFC 6749 §3.1.2) or user info. Matching at authorisation time is exact string equality.
 */
export function isAllowedRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash !== '' || value.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return url.hostname !== '';
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

export const redirectUrisField = z
  .array(
    z
      .string()
      .max(2048)
      .refine(isAllowedRedirectUri, {
        error: 'Redirect URIs must be https, or http on a loopback address',
        params: { code: 'INVALID_REDIRECT_URI' },
      }),
  )
  .max(MAX_REDIRECT_URIS);
