import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent, fetch as undiciFetch } from 'undici';
import { isNonPublicAddress } from './non-public.ts';

/**
 * The one outbound HTTP client (undici) for requests the server makes to addresses it does not own: identity
 * providers, interaction endpoints, the media proxy, the CAPTCHA provider. A client has an address rule; every
 * connection resolves its host through a lookup that drops the answers the rule refuses, so the check and the
 * connection use the same DNS answer (no rebinding window), and literal addresses are checked before any
 * connection. Redirects are never followed here; bodies are read up to a bound, within a deadline.
 */
export class OutboundFailure extends Error {
  constructor(readonly reason: 'private_address' | 'bad_url' | 'network' | 'timeout' | 'too_large' | 'closed') {
    super(`outbound request failed: ${reason}`);
  }
}

export interface AddressRule {
  /** True for an address the client must not connect to. */
  refuses: (address: string) => boolean;
}

export interface Limits {
  timeoutMs: number;
  maxBytes: number;
}

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | Uint8Array;
  signal?: AbortSignal;
}

/**
 * A DNS lookup that drops the answers `refuses` names and fails with `refusal()` when none is left. It runs
 * inside the connection's own resolution, so a DNS answer cannot change between the check and the connection.
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

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export class OutboundClient {
  private opened: Promise<{ agent: Agent; fetch: typeof undiciFetch }> | undefined;
  private closed = false;

  constructor(private readonly rule: AddressRule) {}

  /** undici is loaded at the first outbound request, not at start (docs/performance.md#start-up). */
  private open(): Promise<{ agent: Agent; fetch: typeof undiciFetch }> {
    this.opened ??= import('undici').then(({ Agent, fetch }) => ({
      agent: new Agent({
        connect: { lookup: refusingLookup(this.rule.refuses, () => new OutboundFailure('private_address')) },
        keepAliveTimeout: 4000,
      }),
      fetch,
    }));
    return this.opened;
  }

  /** Checks what can be checked before connecting: the scheme and a literal address. */
  target(rawUrl: string | URL): URL {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new OutboundFailure('bad_url');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundFailure('bad_url');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal address never reaches the lookup, so it is checked here.
    if (isIP(host) !== 0 && this.rule.refuses(host)) throw new OutboundFailure('private_address');
    return url;
  }

  /**
   * One request, redirects not followed (a redirect is a second destination: a caller that follows it asks
   * again with the new URL). Answers a standard `Response` whose body is already read (at most `maxBytes`),
   * so it also serves as openid-client's custom fetch.
   */
  async fetch(rawUrl: string | URL, init: OutboundInit, limits: Limits): Promise<Response> {
    if (this.closed) throw new OutboundFailure('closed');
    const url = this.target(rawUrl);
    // The request's time starts once the client is loaded: loading undici at the first request (slow on a busy
    // machine) is not the destination being slow.
    const { agent, fetch: undiciFetch } = await this.open();
    if (this.closed) throw new OutboundFailure('closed');
    const deadline = AbortSignal.timeout(limits.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    try {
      const response = await undiciFetch(url, {
        method: init.method ?? 'GET',
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body === undefined ? {} : { body: init.body }),
        redirect: 'manual',
        signal,
        dispatcher: agent,
      });
      const bytes = await readBounded(response, limits.maxBytes);
      const headers = new Headers();
      for (const [name, value] of response.headers) headers.append(name, value);
      return new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    } catch (error) {
      throw this.failure(error, deadline);
    }
  }

  /** Shutdown: requests in flight fail with `closed` and the kept-alive sockets are closed. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.opened) await (await this.opened).agent.destroy().catch(() => {});
  }

  private failure(error: unknown, deadline: AbortSignal): Error {
    if (error instanceof OutboundFailure) return error;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof OutboundFailure) return cause;
    if (this.closed) return new OutboundFailure('closed');
    if (deadline.aborted) return new OutboundFailure('timeout');
    // The caller's own abort travels as it is.
    if ((error as { name?: string }).name === 'AbortError') return error as Error;
    return new OutboundFailure('network');
  }
}

async function readBounded(
  response: Awaited<ReturnType<typeof undiciFetch>>,
  maxBytes: number,
): Promise<ReturnType<typeof Buffer.concat>> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new OutboundFailure('too_large');
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        await response.body.cancel().catch(() => {});
        throw new OutboundFailure('too_large');
      }
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks);
}

const publicOnly = new OutboundClient({ refuses: isNonPublicAddress });
const anyAddress = new OutboundClient({ refuses: () => false });

/** The shared client for targets that must be public (unless the operator allowed private ones for this use). */
export function outboundClient(allowPrivate: boolean): OutboundClient {
  return allowPrivate ? anyAddress : publicOnly;
}

export interface FetchedMedia {
  status: number;
  contentType: string | undefined;
  /** The upstream's `Last-Modified`, as sent. */
  lastModified: string | undefined;
  /** The upstream's `Cache-Control`, as sent (how long a cache may keep the answer). */
  cacheControl: string | undefined;
  bytes: Buffer;
}

/** GETs an http(s) URL for the media proxy, following at most `maxRedirects` redirects, each checked again. */
export async function fetchMedia(
  rawUrl: string,
  options: Limits & { allowPrivate: boolean; maxRedirects: number },
): Promise<FetchedMedia> {
  const client = outboundClient(options.allowPrivate);
  let url = client.target(rawUrl);
  for (let hop = 0; hop <= options.maxRedirects; hop++) {
    const response = await client.fetch(url, { headers: { 'user-agent': 'HearthMediaProxy/1.0' } }, options);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = client.target(new URL(location, url));
      continue;
    }
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
      cacheControl: response.headers.get('cache-control') ?? undefined,
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  }
  throw new OutboundFailure('network');
}
