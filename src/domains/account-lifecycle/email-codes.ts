import { randomInt } from 'node:crypto';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';

/** Six CSPRNG digits: what a person types from an email. */
export function newCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

/** Codes are stored only as a digest bound to their ticket, so equal codes on two tickets differ. */
export function codeDigest(ticketHash: string, code: string): string {
  return digest(`${ticketHash}:${code.trim()}`);
}

export function codeMatches(ticketHash: string, code: string, stored: string | undefined): boolean {
  return stored !== undefined && constantTimeEqual(codeDigest(ticketHash, code), stored);
}

export function secretMatches(secret: string, storedDigest: string | undefined): boolean {
  return storedDigest !== undefined && constantTimeEqual(digest(secret), storedDigest);
}
