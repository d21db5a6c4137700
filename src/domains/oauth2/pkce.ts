import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../../platform/crypto/tokens.ts';

/** An S256 challenge is base64url(SHA-256(verifier)): always 43 characters. */
export const CODE_CHALLENGE_FORM = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const CODE_VERIFIER_FORM = /^[A-Za-z0-9._~-]{43,128}$/;

/** Checks a verifier against the stored S256 challenge, in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER_FORM.test(verifier)) return false;
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  return constantTimeEqual(computed, challenge);
}
