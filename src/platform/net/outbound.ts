import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { isNonPublicAddress } from './non-public.ts';
import { refusingLookup } from './ssrf-guard.ts';

/**
 * The one outbound HTTP client (undici) for requests made on a user's or an administrator's behalf: identity
 * providers, interaction endpoints, the media proxy. Every connection resolves its host through the refusing
 * lookup, so the address check and the connection use the same DNS answer (no rebinding window), and literal
 * addresses are checked before any connection. Bodies are read up to a bound, within a deadline.
 */
export class OutboundFailure extends Error {
  constructor(readonly reason: 'private_address' | 'bad_url' | 'network' | 'timeout' | 'too_large') {
    super(`outbound request failed: ${reason}`);
  }
}

export interface OutboundPolicy {
  /** Let the request reach loopback, private and other non-public addresses (an operator's explicit opt-in). */
  allowPrivate: boolean;
  /** Refuse plain http (identity providers without the opt-in). */
  httpsOnly?: boolean;
  timeoutMs: number;
  maxBytes: number;
}

const agents = new Map<boolean, Agent>();

/** A dispatcher whose connections refuse non-public addresses at resolution time (unless allowed). */
function dispatcher(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    const refuses = allowPrivate ? () => false : isNonPublicAddress;
    agent = new Agent({
      connect: { lookup: refusingLookup(refuses, () => new OutboundFailure('private_address')) },
      keepAliveTimeout: 4000,
    });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/** Checks what can be checked before connecting: the scheme and a literal address. */
export function checkTarget(rawUrl: string | URL, policy: Pick<OutboundPolicy, 'allowPrivate' | 'httpsOnly'>): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundFailure('bad_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundFailure('bad_url');
  if (policy.httpsOnly && url.protocol !== 'https:') throw new OutboundFailure('private_address');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal address never reaches the lookup, so it is checked here.
  if (!policy.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host))
    throw new OutboundFailure('private_address');
  return url;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * One request, redirects never followed (a redirect would be a second, unchecked destination: callers that
 * follow one call again with the new URL). Answers a standard `Response` whose body is already read (at most
 * `maxBytes`), so it also serves as the custom fetch of openid-client.
 */
export async function outboundFetch(
  rawUrl: string | URL,
  init: { method?: string; headers?: HeadersInit; body?: string | URLSearchParams | Uint8Array; signal?: AbortSignal },
  policy: OutboundPolicy,
): Promise<Response> {
  const url = checkTarget(rawUrl, policy);
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  try {
    const response = await undiciFetch(url, {
      method: init.method ?? 'GET',
      headers: init.headers as Record<string, string> | undefined,
      body: init.body,
      redirect: 'manual',
      signal,
      dispatcher: dispatcher(policy.allowPrivate),
    });
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > policy.maxBytes) {
      await response.body?.cancel();
      throw new OutboundFailure('too_large');
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body) {
      for await (const chunk of response.body) {
        size += chunk.byteLength;
        if (size > policy.maxBytes) {
          await response.body.cancel().catch(() => {});
          throw new OutboundFailure('too_large');
        }
        chunks.push(chunk);
      }
    }
    const headers = new Headers();
    for (const [name, value] of response.headers) headers.append(name, value);
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : Buffer.concat(chunks), {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  } catch (error) {
    throw asOutboundFailure(error, deadline);
  }
}

function asOutboundFailure(error: unknown, deadline: AbortSignal): Error {
  if (error instanceof OutboundFailure) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutboundFailure) return cause;
  if (deadline.aborted) return new OutboundFailure('timeout');
  // The caller's own abort travels as it is.
  if ((error as { name?: string }).name === 'AbortError') return error as Error;
  return new OutboundFailure('network');
}
