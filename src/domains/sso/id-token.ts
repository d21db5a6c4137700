import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import { IdpUnreachable, idpRequest } from './idp-http.ts';

export class InvalidIdToken extends Error {}

export interface VerifyIdTokenInput {
  idToken: string;
  issuer: string;
  clientId: string;
  jwksUrl: string;
  allowPrivate: boolean;
  /** SHA-256 of the nonce sent with the authorization request. */
  nonceHash: string;
  now: number;
}

const JWKS_TTL_MS = 10 * 60_000;
const JWKS_REFRESH_MIN_MS = 30_000;
const CLOCK_TOLERANCE_S = 60;
/** Asymmetric only: the provider's published keys are the trust anchor (no `none`, no shared-secret HS*). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * Verifies an ID token against the provider's JWKS: signature, `iss`, `aud` (+ `azp` when several
 * audiences), `exp`/`iat` (with the service clock), `sub` and the nonce bound to the state.
 */
export class IdTokenVerifier {
  private readonly keys = new Map<string, { jwks: JSONWebKeySet; fetchedAt: number }>();

  async verify(input: VerifyIdTokenInput): Promise<JWTPayload & { sub: string }> {
    let payload: JWTPayload;
    try {
      payload = await this.verifyWithKeys(input, false);
    } catch (error) {
      // A provider that rotated its keys signs with a kid we have not seen: refetch once, not per request.
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw toInvalid(error);
      payload = await this.verifyWithKeys(input, true).catch((again) => {
        throw toInvalid(again);
      });
    }
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255)
      throw new InvalidIdToken('sub');
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== input.clientId)
      throw new InvalidIdToken('azp');
    const nonce = payload.nonce;
    if (typeof nonce !== 'string' || !constantTimeEqual(digest(nonce), input.nonceHash))
      throw new InvalidIdToken('nonce');
    return payload as JWTPayload & { sub: string };
  }

  private async verifyWithKeys(input: VerifyIdTokenInput, refresh: boolean): Promise<JWTPayload> {
    const jwks = await this.jwks(input.jwksUrl, input.allowPrivate, input.now, refresh);
    const { payload } = await jwtVerify(input.idToken, createLocalJWKSet(jwks), {
      issuer: input.issuer,
      audience: input.clientId,
      algorithms: ALGORITHMS,
      currentDate: new Date(input.now),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    return payload;
  }

  private async jwks(url: string, allowPrivate: boolean, now: number, refresh: boolean): Promise<JSONWebKeySet> {
    const key = `${allowPrivate ? 'p' : 'n'}|${url}`;
    const hit = this.keys.get(key);
    const fresh = hit && now - hit.fetchedAt < (refresh ? JWKS_REFRESH_MIN_MS : JWKS_TTL_MS);
    if (hit && fresh) return hit.jwks;
    const res = await idpRequest(url, { allowPrivate });
    const doc = res.json as JSONWebKeySet | undefined;
    if (res.status !== 200 || !doc || !Array.isArray(doc.keys)) {
      if (hit) return hit.jwks;
      throw new IdpUnreachable('not_json');
    }
    this.keys.set(key, { jwks: doc, fetchedAt: now });
    return doc;
  }
}

function toInvalid(error: unknown): Error {
  if (error instanceof InvalidIdToken) return error;
  if (error instanceof joseErrors.JOSEError) return new InvalidIdToken(error.code);
  return error instanceof Error ? error : new InvalidIdToken('unknown');
}
