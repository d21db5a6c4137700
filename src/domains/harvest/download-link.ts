import { constantTimeEqual, hmacSha256 } from '../../platform/crypto/tokens.ts';

/**
 * The download link of an archive: `/v1/harvests/{id}/download?expires=…&token=…&signature=…`.
 * The signature (HMAC-SHA256 under a key derived from the relay secret, so it can never pass for a relay
 * capability) binds the id, the expiry and the token: a link cannot be edited into a longer-lived one. The
 * token is the one-time part: only its digest is stored, and it is compared in constant time.
 */
export interface LinkParts {
  harvestId: string;
  /** Unix seconds, exclusive. */
  expires: number;
  token: string;
}

function linkKey(secret: string): Buffer {
  return hmacSha256(secret, 'hearth harvest download link v1');
}

export function signLink(secret: string, parts: LinkParts): string {
  return hmacSha256(linkKey(secret), `${parts.harvestId}.${parts.expires}.${parts.token}`).toString('base64url');
}

export function linkPath(secret: string, parts: LinkParts): string {
  const query = new URLSearchParams({
    expires: String(parts.expires),
    token: parts.token,
    signature: signLink(secret, parts),
  });
  return `/v1/harvests/${parts.harvestId}/download?${query}`;
}

/** True when `signature` is the link's, checked in constant time (its length first, without throwing). */
export function verifyLink(secret: string, parts: LinkParts, signature: string): boolean {
  const given = Buffer.from(signature, 'base64url');
  if (given.toString('base64url') !== signature) return false;
  return constantTimeEqual(given, hmacSha256(linkKey(secret), `${parts.harvestId}.${parts.expires}.${parts.token}`));
}
