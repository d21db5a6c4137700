import type { CustomFetch } from 'openid-client';
import { OutboundFailure, type OutboundInit, outboundClient } from '../../platform/net/outbound.ts';

/** Why a call to the identity provider did not produce a usable answer. Never carries URLs or secrets. */
export type IdpFailureReason = Exclude<OutboundFailure['reason'], 'closed'> | 'not_json';

export class IdpUnreachable extends Error {
  constructor(readonly reason: IdpFailureReason) {
    super(`identity provider request failed: ${reason}`);
  }
}

const IDP_LIMITS = { timeoutMs: 10_000, maxBytes: 512 * 1024 };

/** Without the private-issuer opt-in, only https is spoken (a refusal of the same kind as a private address). */
function idpGet(allowPrivate: boolean, url: string, init: OutboundInit) {
  if (!allowPrivate && !url.startsWith('https:')) return Promise.reject(new OutboundFailure('private_address'));
  return outboundClient(allowPrivate).fetch(url, init, IDP_LIMITS);
}

/**
 * The fetch that openid-client uses for every call to the provider (discovery, JWKS, token, userinfo): the
 * outbound client with the private-address rule, https only unless the operator allowed a private issuer.
 * The refusal happens inside DNS resolution of the actual connection, so a name that resolved to a public
 * address when the settings were saved cannot be re-pointed at the private network afterwards (rebinding).
 */
export function idpFetch(allowPrivate: boolean): CustomFetch {
  return (url, options) =>
    idpGet(allowPrivate, url, {
      method: options.method,
      headers: options.headers,
      ...(options.body === undefined || options.body === null ? {} : { body: options.body as string }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
}

/** A GET of a JSON document (the connection test's JWKS), with the same rules. */
export async function idpJson(url: string, allowPrivate: boolean): Promise<{ status: number; json: unknown }> {
  const response = await idpGet(allowPrivate, url, { headers: { accept: 'application/json' } });
  try {
    const text = await response.text();
    return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined };
  } catch {
    throw new IdpUnreachable('not_json');
  }
}

/** The outbound failure somewhere in an error's cause chain (openid-client wraps what its fetch throws). */
export function failureReason(error: unknown): IdpFailureReason | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof IdpUnreachable) return current.reason;
    if (current instanceof OutboundFailure) return current.reason === 'closed' ? 'network' : current.reason;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
