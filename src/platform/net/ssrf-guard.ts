import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isNonPublicAddress } from './non-public.ts';

/** The one list of non-public ranges (`non-public.ts`), shared with the identity-provider guard. */
export const isPrivateAddress = isNonPublicAddress;

export class OutboundRefused extends Error {
  constructor(
    readonly reason: 'private_address' | 'too_large' | 'timeout' | 'too_many_redirects' | 'bad_url' | 'http_error',
  ) {
    super(reason);
  }
}

export interface SafeFetchOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

/**
 * A DNS lookup for outbound connections that drops the answers `refuses` names and fails with `refusal()`
 * when none is left. The check runs inside the connection's own resolution, so a DNS answer cannot change
 * between the check and the connection (rebinding). Shared by media fetches and identity-provider calls.
 */
export function refusingLookup(refuses: (address: string) => boolean, refusal: () => Error): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const usable = (addresses as unknown as LookupAddress[]).filter((a) => !refuses(a.address));
      const first = usable[0];
      if (!first) return callback(refusal() as NodeJS.ErrnoException, '', 4);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, first.address, first.family);
    });
  };
}

const refuseNothing = () => false;

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return refusingLookup(allowPrivate ? refuseNothing : isPrivateAddress, () => new OutboundRefused('private_address'));
}

export interface FetchedMedia {
  status: number;
  contentType: string | undefined;
  bytes: Buffer;
}

/** GETs a public http(s) URL with bounded redirects (each re-validated), size and time. */
export async function safeFetch(rawUrl: string, options: SafeFetchOptions): Promise<FetchedMedia> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundRefused('bad_url');
  }
  for (let hop = 0; hop <= options.maxRedirects; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused('bad_url');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && !options.allowPrivate && isPrivateAddress(host))
      throw new OutboundRefused('private_address');
    const response = await requestOnce(url, options);
    if (response.redirect) {
      url = new URL(response.redirect, url);
      continue;
    }
    return response.media;
  }
  throw new OutboundRefused('too_many_redirects');
}

function requestOnce(url: URL, options: SafeFetchOptions): Promise<{ redirect?: string; media: FetchedMedia }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'GET',
        lookup: guardedLookup(options.allowPrivate),
        timeout: options.timeoutMs,
        headers: { 'user-agent': 'HearthMediaProxy/1.0' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({
            redirect: res.headers.location,
            media: { status, contentType: undefined, bytes: Buffer.alloc(0) },
          });
          return;
        }
        const declared = Number(res.headers['content-length'] ?? '0');
        if (declared > options.maxBytes) {
          res.destroy();
          reject(new OutboundRefused('too_large'));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            reject(new OutboundRefused('too_large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ media: { status, contentType: res.headers['content-type'], bytes: Buffer.concat(chunks) } }),
        );
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => req.destroy(new OutboundRefused('timeout')), options.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new OutboundRefused('timeout')));
    req.on('error', (error) => reject(error instanceof OutboundRefused ? error : new OutboundRefused('http_error')));
    req.end();
  });
}
