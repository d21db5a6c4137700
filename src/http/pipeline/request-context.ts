import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import type { Principal } from '../../identity/principal.ts';
import { ipKey as toIpKey } from '../../platform/net/cidr.ts';
import type { ParsedCredential } from '../auth/authorization.ts';
import { clientIp } from '../client-ip.ts';
import type { AnyRoute } from '../route.ts';

/** What the header-only steps established; the body is read only after them. */
export interface Admission {
  credential: ParsedCredential;
  principal: Principal | undefined;
  now: number;
  preflight: unknown;
}

/** The per-request state every later step reads (`request.hearth`). */
export interface RequestState {
  requestId: string;
  ip: string;
  ipKey: string;
  startedAt: bigint;
  strict: boolean;
  /** Set once the route admitted the request from its headers, before the body was read. */
  admission?: Admission;
}

declare module 'fastify' {
  interface FastifyRequest {
    hearth: RequestState;
  }
  interface FastifyContextConfig {
    hearthRoute?: AnyRoute;
  }
}

export type RequestContextConfig = Pick<Config, 'trustedProxies' | 'testMode'>;

/** The headers and socket fields the request context is built from. */
export interface IncomingRequestFacts {
  fastifyId: string;
  remoteAddress: string | undefined;
  headers: FastifyRequest['headers'];
}

/**
 * Step 1 (docs/architecture.md#the-request-path-srchttppipeline): the request id (the caller's `X-Request-ID`
 * when it is well-formed), the client address and its rate-limit key, the start time and strictness.
 */
export function requestContext(config: RequestContextConfig, facts: IncomingRequestFacts): RequestState {
  const incomingId = facts.headers['x-request-id'];
  const requestId = typeof incomingId === 'string' && /^[\w.-]{1,128}$/.test(incomingId) ? incomingId : facts.fastifyId;
  const ip = clientIp(facts.remoteAddress, facts.headers['x-forwarded-for'], config.trustedProxies);
  return {
    requestId,
    ip,
    ipKey: toIpKey(ip),
    startedAt: process.hrtime.bigint(),
    strict: !config.testMode || facts.headers['x-test-strict'] === 'true',
  };
}

const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, X-Service-Sudo-Mode-JWT, X-Audit-Log-Reason, X-Captcha-Token, X-Captcha-Type, X-Request-ID';
const CORS_EXPOSE_HEADERS =
  'X-Service-Sudo-Mode-JWT, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Reset-After, X-RateLimit-Bucket, X-RateLimit-Scope, X-RateLimit-Global';

/**
 * The OAuth2 / OpenID endpoints a relying party running in a browser on another origin calls (a public
 * client): they take credentials only from the body or the Authorization header, never from cookies.
 * Introspection is for confidential clients, so it is not among them.
 */
const PUBLIC_CORS_OAUTH2_PATHS: ReadonlySet<string> = new Set([
  '/v1/oauth2/token',
  '/v1/oauth2/token/revoke',
  '/v1/oauth2/jwks',
  '/v1/oauth2/userinfo',
]);

/** Paths (and only paths) whose routes answer any origin with `*`. */
export function isPublicCorsPath(url: string): boolean {
  return (
    url.startsWith('/.well-known/') ||
    url.startsWith('/v1/webhooks/') ||
    url.startsWith('/media/') ||
    url.startsWith('/v1/relay/') ||
    PUBLIC_CORS_OAUTH2_PATHS.has(url.split('?')[0] ?? '')
  );
}

/** CORS headers for a listed origin (or `*` on public paths), with the preflight's extras on OPTIONS. */
export function applyCors(corsOrigins: readonly string[], request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (isPublicCorsPath(request.url)) {
    reply.header('Access-Control-Allow-Origin', '*');
  } else if (origin && corsOrigins.includes(origin)) {
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Vary', 'Origin');
  } else {
    return;
  }
  reply.header('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
  if (request.method === 'OPTIONS') {
    reply.header('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    reply.header('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
    reply.header('Access-Control-Max-Age', '600');
  }
}
