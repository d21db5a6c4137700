import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusingLookup } from '../../platform/net/ssrf-guard.ts';
import { isNonPublicAddress } from './private-address.ts';

/** Why a call to the identity provider did not produce a usable answer. Never carries URLs or secrets. */
export class IdpUnreachable extends Error {
  constructor(readonly reason: 'private_address' | 'bad_url' | 'network' | 'timeout' | 'too_large' | 'not_json') {
    super(`identity provider request failed: ${reason}`);
  }
}

export interface IdpRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Form-encoded body for the token endpoint. */
  form?: URLSearchParams;
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface IdpResponse {
  status: number;
  json: unknown;
}

/**
 * The refusal happens inside DNS resolution of the actual connection, so a name that resolved to a public
 * address when the settings were saved cannot be re-pointed at the private network afterwards (rebinding).
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return refusingLookup(allowPrivate ? () => false : isNonPublicAddress, () => new IdpUnreachable('private_address'));
}

/**
 * One request to the identity provider (discovery, JWKS, token, userinfo). No redirects are followed:
 * OpenID endpoints answer directly, and following a redirect would be a second, unchecked destination.
 */
export function idpRequest(rawUrl: string, options: IdpRequest): Promise<IdpResponse> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.reject(new IdpUnreachable('bad_url'));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.reject(new IdpUnreachable('bad_url'));
  if (!options.allowPrivate) {
    if (url.protocol !== 'https:') return Promise.reject(new IdpUnreachable('private_address'));
    // Literal addresses never reach the lookup function, so they are checked here.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isNonPublicAddress(host)) return Promise.reject(new IdpUnreachable('private_address'));
  }
  const body = options.form?.toString();
  const headers: Record<string, string> = { accept: 'application/json', ...(options.headers ?? {}) };
  if (body !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const maxBytes = options.maxBytes ?? 512 * 1024;
  const transport = url.protocol === 'https:' ? https : http;

  return new Promise<IdpResponse>((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: options.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        lookup: guardedLookup(options.allowPrivate),
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new IdpUnreachable('too_large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            return reject(new IdpUnreachable('not_json'));
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', (error) => reject(error instanceof IdpUnreachable ? error : new IdpUnreachable('network')));
      },
    );
    req.on('timeout', () => req.destroy(new IdpUnreachable('timeout')));
    req.on('error', (error) => {
      const cause = (error as { cause?: unknown }).cause;
      if (error instanceof IdpUnreachable) reject(error);
      else if (cause instanceof IdpUnreachable) reject(cause);
      else reject(new IdpUnreachable('network'));
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}
