import { constantTimeEqual, hmacSha256 } from '../../platform/crypto/tokens.ts';

/** An upload capability's claims (docs/media.md): bucket, key, method, content type, max bytes, expiry. */
export interface UploadCapability {
  b: string;
  k: string;
  m: 'put';
  ct?: string;
  mb: number;
  /** Expiry, Unix seconds, exclusive. */
  e: number;
}

const MAC_BYTES = 32;

export function signCapability(secret: string, payload: UploadCapability): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${hmacSha256(secret, body).toString('base64url')}`;
}

export type CapabilityCheck =
  | { ok: true; payload: UploadCapability }
  | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

/**
 * Verifies `t`: the MAC length is checked before the constant-time compare, so a short or long signature
 * is a plain refusal and never an exception.
 */
export function verifyCapability(secret: string, token: string, nowMs: number): CapabilityCheck {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return { ok: false, reason: 'malformed' };
  const body = token.slice(0, dot);
  const macText = token.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]+$/.test(macText)) return { ok: false, reason: 'malformed' };
  const mac = Buffer.from(macText, 'base64url');
  if (mac.length !== MAC_BYTES || mac.toString('base64url') !== macText) return { ok: false, reason: 'signature' };
  if (!constantTimeEqual(mac, hmacSha256(secret, body))) return { ok: false, reason: 'signature' };
  let payload: UploadCapability;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (
    typeof payload !== 'object' ||
    payload === null ||
    typeof payload.b !== 'string' ||
    typeof payload.k !== 'string' ||
    payload.m !== 'put' ||
    !Number.isInteger(payload.mb) ||
    !Number.isInteger(payload.e)
  )
    return { ok: false, reason: 'malformed' };
  if (payload.e * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, payload };
}
