import { BlockList, isIP } from 'node:net';
import { ApiError } from '../../http/errors.ts';
import { ConcurrencyGate } from '../../platform/concurrency-gate.ts';
import { randomBase64Url } from '../../platform/crypto/tokens.ts';
import { isNonPublicAddress } from '../../platform/net/non-public.ts';
import { OutboundClient, OutboundFailure } from '../../platform/net/outbound.ts';
import type { InteractionKeys } from './interaction-keys.ts';

/** Discord's window: the endpoint answers within 3 s, or the interaction fails. */
export const ENDPOINT_TIMEOUT_MS = 3_000;
/** An interaction response is a message at most (no attachments over HTTP): 256 KiB is far above one. */
export const ENDPOINT_MAX_RESPONSE_BYTES = 256 * 1024;
export const MAX_ENDPOINT_URL_LENGTH = 2048;
/** Requests in flight at once to all endpoints from this process. */
const TOTAL_IN_FLIGHT = 500;

/** Why a request to an interactions endpoint produced no usable answer. Never carries the URL or a token. */
export class EndpointFailure extends Error {
  constructor(readonly reason: 'refused_address' | 'timeout' | 'too_large' | 'network' | 'busy' | 'closed') {
    super(`interactions endpoint request failed: ${reason}`);
  }
}

export interface EndpointResponse {
  status: number;
  contentType: string | undefined;
  text: string;
}

export interface InteractionsEndpointOptions {
  /**
   * Test mode (HEARTH_TEST_MODE): plain http and loopback addresses are accepted, so tests can run their
   * endpoint on 127.0.0.1. Every other non-public range stays refused in every mode.
   */
  allowLoopback: boolean;
  /** Requests in flight at once to one application's endpoint (verification included). */
  perApplication: number;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function isLoopback(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  return family !== 0 && LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * An application's interactions endpoint (docs/bots.md): the URL rules, the signed requests and the
 * verification Discord runs when the URL is set. The address check uses the one non-public list shared with
 * the media proxy and identity providers, and runs inside the connection's own DNS lookup (no rebinding).
 * Redirects are never followed. Every request is bounded: 3 s in all, 256 KiB of answer, and a number of
 * requests in flight per application and per process.
 */
export class InteractionsEndpoint {
  private readonly gate: ConcurrencyGate;
  private readonly refuses: (address: string) => boolean;
  private readonly client: OutboundClient;
  private closed = false;

  constructor(
    private readonly keys: InteractionKeys,
    private readonly options: InteractionsEndpointOptions,
  ) {
    this.gate = new ConcurrencyGate(TOTAL_IN_FLIGHT, options.perApplication);
    this.refuses = (address) => isNonPublicAddress(address) && !(options.allowLoopback && isLoopback(address));
    this.client = new OutboundClient({ refuses: this.refuses });
  }

  /** The URL as stored, or 400 `INVALID_INTERACTIONS_ENDPOINT_URL` saying what is wrong with it. */
  check(raw: string): URL {
    const refuse = (why: string) => new ApiError('INVALID_INTERACTIONS_ENDPOINT_URL', { message: why });
    if (raw.length > MAX_ENDPOINT_URL_LENGTH) throw refuse(`Longer than ${MAX_ENDPOINT_URL_LENGTH} characters`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse('Not a URL');
    }
    if (url.protocol !== 'https:' && !(this.options.allowLoopback && url.protocol === 'http:'))
      throw refuse('Must be an https URL');
    if (url.username || url.password) throw refuse('Must not carry credentials');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && this.refuses(host))
      throw refuse('Names a private, loopback, link-local or reserved address');
    return url;
  }

  /**
   * Discord's check when the URL is set: a signed PING must be answered 200 `{"type":1}`, and a PING with a
   * deliberately wrong signature must be refused with 401. Otherwise 400 `INTERACTIONS_ENDPOINT_UNVERIFIED`
   * (or `INVALID_INTERACTIONS_ENDPOINT_URL` when the name resolves only to refused addresses).
   */
  async verify(applicationId: string, url: URL, pingId: string): Promise<void> {
    const body = JSON.stringify({
      id: pingId,
      application_id: applicationId,
      type: 1,
      token: `aW50ZXJhY3Rpb246${randomBase64Url(48)}`,
      version: 1,
    });
    const unverified = (why: string) => new ApiError('INTERACTIONS_ENDPOINT_UNVERIFIED', { message: why });
    const send = async (tamper: boolean) => {
      try {
        return await this.post(applicationId, url, body, { tamper });
      } catch (error) {
        if (error instanceof EndpointFailure && error.reason === 'refused_address')
          throw new ApiError('INVALID_INTERACTIONS_ENDPOINT_URL', {
            message: 'Resolves to a private, loopback, link-local or reserved address',
          });
        const reason = error instanceof EndpointFailure ? error.reason : 'network';
        throw unverified(`The endpoint did not answer a PING (${reason})`);
      }
    };
    const good = await send(false);
    if (good.status !== 200) throw unverified(`The endpoint answered ${good.status} to a signed PING, not 200`);
    let answer: unknown;
    try {
      answer = JSON.parse(good.text);
    } catch {
      answer = undefined;
    }
    if ((answer as { type?: unknown } | undefined)?.type !== 1)
      throw unverified('The endpoint did not answer a signed PING with {"type":1}');
    const bad = await send(true);
    if (bad.status !== 401)
      throw unverified(`The endpoint answered ${bad.status} to a PING with an invalid signature, not 401`);
  }

  /**
   * POSTs `body` signed for the application: `X-Signature-Ed25519` is the hex signature of
   * `X-Signature-Timestamp` (unix seconds) followed by the body. `tamper` signs something else (verification).
   */
  async post(applicationId: string, url: URL, body: string, options: { tamper?: boolean } = {}) {
    if (this.closed) throw new EndpointFailure('closed');
    const release = this.gate.tryEnter(applicationId);
    if (!release) throw new EndpointFailure('busy');
    try {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const { signature } = await this.keys.sign(applicationId, timestamp, options.tamper ? `${body} ` : body);
      return await this.send(url, body, {
        'content-type': 'application/json',
        'user-agent': 'Hearth-Interactions/1.0',
        'x-signature-ed25519': signature,
        'x-signature-timestamp': timestamp,
      });
    } finally {
      release();
    }
  }

  private async send(url: URL, body: string, headers: Record<string, string>): Promise<EndpointResponse> {
    // Checked again at every request: the rule may differ from when the URL was stored (e.g. after leaving test mode).
    if (url.protocol !== 'https:' && !this.options.allowLoopback) throw new EndpointFailure('refused_address');
    try {
      const response = await this.client.fetch(
        url,
        { method: 'POST', headers, body },
        { timeoutMs: ENDPOINT_TIMEOUT_MS, maxBytes: ENDPOINT_MAX_RESPONSE_BYTES },
      );
      return {
        status: response.status,
        contentType: response.headers.get('content-type') ?? undefined,
        text: await response.text(),
      };
    } catch (error) {
      if (!(error instanceof OutboundFailure)) throw new EndpointFailure('network');
      const reason = error.reason;
      throw new EndpointFailure(
        reason === 'private_address' ? 'refused_address' : reason === 'bad_url' ? 'network' : reason,
      );
    }
  }

  /** Shutdown: requests in flight are cut (their interactions fail) and the kept-alive sockets closed. */
  close(): void {
    this.closed = true;
    void this.client.close();
  }
}
