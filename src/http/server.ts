import { randomUUID } from 'node:crypto';
import { type Duplex, Readable } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppServices } from '../app-services.ts';
import { SUDO_HEADER } from '../domains/sudo/sudo-mode.ts';
import type { Principal } from '../identity/principal.ts';
import { ConcurrencyGate } from '../platform/concurrency-gate.ts';
import { constantTimeEqual, digest, sha256Hex } from '../platform/crypto/tokens.ts';
import { ipKey as toIpKey } from '../platform/net/cidr.ts';
import type { IpBan } from '../platform/state/ip-bans.ts';
import { type ParsedCredential, parseAuthorization } from './auth/authorization.ts';
import { discardRestOfBody, limitBodyTime } from './body-discard.ts';
import { clientIp } from './client-ip.ts';
import { ApiError, bannedError, fieldError, INTERNAL_ERROR_BODY, rateLimited, wireText } from './errors.ts';
import { policyDenial, suspiciousDenial } from './policy.ts';
import { rawErrorResponse } from './raw-response.ts';
import { type AnyRoute, JsonText, queryWithRepeats, REPLY_SENT, type RequestContext, StreamedBody } from './route.ts';
import { validate } from './validation.ts';

const JSON_BODY_LIMIT = 1024 * 1024;
const UPLOADS_TOTAL = 32;
const UPLOADS_PER_CALLER = 3;

/** What the header-only steps established; the body is read only after them. */
interface Admission {
  credential: ParsedCredential;
  principal: Principal | undefined;
  now: number;
  preflight: unknown;
}
const CORS_ALLOW_HEADERS =
  'Authorization, Content-Type, X-Service-Sudo-Mode-JWT, X-Audit-Log-Reason, X-Captcha-Token, X-Captcha-Type, X-Request-ID';
const CORS_EXPOSE_HEADERS =
  'X-Service-Sudo-Mode-JWT, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Reset-After, X-RateLimit-Bucket, X-RateLimit-Scope, X-RateLimit-Global';
const GLOBAL_LIMIT = 50;
const HIGH_GLOBAL_LIMIT = 1200;

declare module 'fastify' {
  interface FastifyRequest {
    hearth: {
      requestId: string;
      ip: string;
      ipKey: string;
      startedAt: bigint;
      strict: boolean;
      /** Set once the route admitted the request from its headers, before the body was read. */
      admission?: Admission;
    };
  }
  interface FastifyContextConfig {
    hearthRoute?: AnyRoute;
  }
}

/** Paths (and only paths) whose routes answer any origin with `*`. */
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

function isPublicCorsPath(url: string): boolean {
  return (
    url.startsWith('/.well-known/') ||
    url.startsWith('/v1/webhooks/') ||
    url.startsWith('/media/') ||
    url.startsWith('/v1/relay/') ||
    PUBLIC_CORS_OAUTH2_PATHS.has(url.split('?')[0] ?? '')
  );
}

/** What `createHttpServer` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type HttpServerDeps = Pick<
  AppServices,
  | 'banCheck'
  | 'captcha'
  | 'clock'
  | 'config'
  | 'credentials'
  | 'log'
  | 'metrics'
  | 'rateLimiter'
  | 'recordAuthFailure'
  | 'settings'
  | 'sudo'
>;

export function createHttpServer(services: HttpServerDeps, routes: readonly AnyRoute[]): FastifyInstance {
  const { config, clock, log } = services;
  const app = Fastify({
    logger: false,
    bodyLimit: JSON_BODY_LIMIT,
    return503OnClosing: true,
    // A client trickling headers or a body cannot hold a socket forever (docs/configuration.md).
    connectionTimeout: config.httpIdleTimeoutMs,
    requestTimeout: config.httpRequestTimeoutMs,
    http: {
      headersTimeout: config.httpHeadersTimeoutMs,
      // How often Node checks the header and request deadlines (its default, 30 s, would let them overrun).
      connectionsCheckingInterval: Math.min(1000, config.httpHeadersTimeoutMs),
    },
    routerOptions: {
      caseSensitive: true,
      ignoreTrailingSlash: false,
      maxParamLength: 4096,
      // Query strings are parsed by URLSearchParams: no nested-object tricks.
      querystringParser: (text: string) => Object.fromEntries(new URLSearchParams(text)),
    },
    genReqId: () => randomUUID(),
    rewriteUrl: (request) => canonicalApiUrl(request.url ?? '/'),
    clientErrorHandler: answerClientError,
    // Router refusals go through the catalogue too, and never echo the path (it may carry a token).
    frameworkErrors: (error, _request, reply) => {
      sendError(
        reply,
        new ApiError((error as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'BAD_REQUEST'),
      );
    },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const uploads = new ConcurrencyGate(UPLOADS_TOTAL, UPLOADS_PER_CALLER);
  app.decorateRequest('hearth', undefined as unknown as FastifyRequest['hearth']);

  // Callback style, not async: most requests finish this hook synchronously (in-process ban store).
  app.addHook('onRequest', (request, reply, done) => {
    const incomingId = request.headers['x-request-id'];
    const requestId = typeof incomingId === 'string' && /^[\w.-]{1,128}$/.test(incomingId) ? incomingId : request.id;
    const ip = clientIp(request.socket.remoteAddress, request.headers['x-forwarded-for'], config.trustedProxies);
    request.hearth = {
      requestId,
      ip,
      ipKey: toIpKey(ip),
      startedAt: process.hrtime.bigint(),
      strict: !config.testMode || request.headers['x-test-strict'] === 'true',
    };
    reply.header('X-Request-ID', requestId);
    if (!request.raw.complete) limitBodyTime(request.raw, config.httpRequestTimeoutMs, () => reply.raw.headersSent);
    applyCors(request, reply);
    if (request.method === 'OPTIONS') {
      reply.code(204).send();
      return;
    }
    const path = request.url.split('?')[0] ?? '';
    if (path === '/_health' || path === '/v1/_health' || isTestHarnessPath(path)) return done();
    const ban = services.banCheck(ip, request.hearth.ipKey, clock.now());
    if (ban instanceof Promise) ban.then((found) => admitOrRefuse(found, reply, done), done);
    else admitOrRefuse(ban, reply, done);
  });

  function admitOrRefuse(ban: IpBan | undefined, reply: FastifyReply, done: () => void): void {
    if (ban) sendError(reply, bannedError(ban, reply.request.hearth.ip, clock.now()));
    else done();
  }

  // A reply sent before its body was read (a refusal from the headers, a 413) keeps the connection: the rest of
  // the body is read and dropped up to a bound, so the client reads the answer instead of a broken pipe.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) reply.removeHeader('connection');
    done(null, payload);
  });

  app.addHook('onResponse', async (request, reply) => {
    if (!request.raw.complete) discardRestOfBody(request.raw);
    const hearth = request.hearth;
    if (!hearth) return;
    const latencyMs = Number(process.hrtime.bigint() - hearth.startedAt) / 1e6;
    // The route pattern, never the URL: webhook tokens and capabilities live in URLs.
    const route = request.routeOptions.url ?? 'unmatched';
    services.metrics.observeRequest(request.method, route, reply.statusCode, latencyMs / 1000);
    log.info('request', {
      request_id: hearth.requestId,
      method: request.method,
      route,
      status: reply.statusCode,
      latency_ms: Math.round(latencyMs * 100) / 100,
    });
  });

  function applyCors(request: FastifyRequest, reply: FastifyReply): void {
    const origin = request.headers.origin;
    if (isPublicCorsPath(request.url)) {
      reply.header('Access-Control-Allow-Origin', '*');
    } else if (origin && config.corsOrigins.includes(origin)) {
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

  app.setNotFoundHandler((_request, reply) => {
    sendError(reply, new ApiError('NOT_FOUND'));
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    const fastifyCode = (error as { code?: string }).code;
    if (fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, new ApiError('PAYLOAD_TOO_LARGE'));
    if (fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return sendError(reply, new ApiError('UNSUPPORTED_MEDIA_TYPE'));
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return sendError(reply, new ApiError('BAD_REQUEST'));
    log.error('unhandled error', {
      request_id: request.hearth?.requestId,
      route: request.routeOptions.url,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    reply.code(500).header('content-type', 'application/json; charset=utf-8').send(INTERNAL_ERROR_BODY);
  });

  function addRoute(instance: FastifyInstance, spec: AnyRoute, url: string): void {
    instance.route({
      method: spec.method,
      url,
      bodyLimit: spec.bodyLimit ?? JSON_BODY_LIMIT,
      config: { hearthRoute: spec },
      // Authentication, rate limits, policy, CAPTCHA and the route's own preflight run from the headers,
      // before Fastify reads a byte of the body: an unauthenticated upload is refused unread.
      preParsing: (request, reply, payload, done) => {
        admit(spec, request, reply).then(
          (denial) => {
            // Refusals come back as values: a throw would make V8 capture a stack on the hottest 401 path.
            if (denial && !reply.sent) sendError(reply, denial);
            done(null, payload);
          },
          (error) => {
            if (error instanceof ApiError && !reply.sent) {
              sendError(reply, error);
              return done(null, payload);
            }
            done(error as Error);
          },
        );
      },
      handler: async (request, reply) => {
        try {
          return await runRoute(spec, request, reply);
        } catch (error) {
          // Answering here skips Fastify's error machinery, which made every 401/403 markedly dearer.
          if (error instanceof ApiError && !reply.sent) return sendError(reply, error);
          throw error;
        }
      },
    });
  }

  const urlsOf = (spec: AnyRoute) =>
    spec.root ? [spec.path] : spec.alsoAtRoot ? [`/v1${spec.path}`, spec.path] : [`/v1${spec.path}`];
  for (const spec of routes) {
    if (spec.bodyKind === 'stream') continue;
    for (const url of urlsOf(spec)) addRoute(app, spec, url);
  }
  // Streaming routes get the request stream unread as their body (no buffering parser in their context): they
  // read it themselves, within their bodyLimit (docs/media.md#uploads-in-flight).
  app.register(async (streaming) => {
    streaming.removeAllContentTypeParsers();
    streaming.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    for (const spec of routes) {
      if (spec.bodyKind !== 'stream') continue;
      for (const url of urlsOf(spec)) addRoute(streaming, spec, url);
    }
  });

  /** The header-only steps; a policy refusal is returned (not thrown), anything else may throw. */
  async function admit(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): Promise<ApiError | undefined> {
    const hearth = request.hearth;
    const now = clock.now();

    if (spec.policy === 'test') checkTestHarness(request);

    // ·L on an unauthenticated route: first thing after the IP ban (docs/conventions.md#policies).
    const ssoFirst = spec.localAuth && (spec.policy === 'none' || spec.policy === 'self');
    if (ssoFirst && services.settings.ssoEnforced()) throw new ApiError('SSO_REQUIRED');

    let credential: ParsedCredential = { kind: 'none' };
    let principal: Principal | undefined;
    if (spec.policy !== 'credential-free' && spec.policy !== 'test' && spec.policy !== 'self') {
      credential = parseAuthorization(request.headers.authorization, { adminArea: spec.policy === 'admin' });
      const resolved = services.credentials.resolve(credential);
      principal = resolved instanceof Promise ? await resolved : resolved;
      // Checked here too so the common non-counting case pays no promise.
      if (credential.kind !== 'none' && !principal && hearth.strict)
        await services.recordAuthFailure(hearth.ip, hearth.strict);
    }

    if (spec.policy !== 'test' && hearth.strict) await applyRateLimits(spec, request, reply, principal, now);

    const denial =
      policyDenial(spec, principal) ??
      (spec.localAuth && !ssoFirst && services.settings.ssoEnforced() ? new ApiError('SSO_REQUIRED') : undefined) ??
      suspiciousDenial(spec, principal);
    if (denial) return denial;
    // A credential that resolved is proof enough of a person (docs/conventions.md#policies); test mode waives it unless strict.
    if (spec.captcha && !principal && hearth.strict) {
      await services.captcha.verify({
        token: singleHeader(request.headers['x-captcha-token']),
        type: singleHeader(request.headers['x-captcha-type']),
        remoteIp: hearth.ip,
      });
    }
    holdUploadSlot(spec, request, reply, principal);
    const admission: Admission = { credential, principal, now, preflight: undefined };
    hearth.admission = admission;
    if (spec.preflight) admission.preflight = await spec.preflight(contextFor(request, reply, admission, {}));
    return undefined;
  }

  /**
   * A body above the JSON limit (an upload, streamed to the object store as it arrives): at most UPLOADS_TOTAL
   * of them at once in this process and UPLOADS_PER_CALLER per user (or address), else 429 RATE_LIMITED before
   * a byte is read (docs/media.md#uploads-in-flight).
   */
  function holdUploadSlot(
    spec: AnyRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    principal: Principal | undefined,
  ): void {
    if ((spec.bodyLimit ?? JSON_BODY_LIMIT) <= JSON_BODY_LIMIT || request.raw.complete) return;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared <= JSON_BODY_LIMIT) return;
    const processFull = uploads.inUse >= uploads.total;
    const release = uploads.tryEnter(principal ? `user:${principal.user.id}` : `ip:${request.hearth.ipKey}`);
    // `shared`: the process is at its bound for everyone; `user`: this caller has its share in flight.
    if (!release) throw rateLimited(1000, false, { 'X-RateLimit-Scope': processFull ? 'shared' : 'user' });
    reply.raw.once('close', release);
  }

  function contextFor(
    request: FastifyRequest,
    reply: FastifyReply,
    admission: Admission,
    input: { body?: unknown; rawBody?: unknown; query?: unknown },
  ): RequestContext {
    const { principal } = admission;
    const hearth = request.hearth;
    return {
      body: input.body,
      rawBody: input.rawBody,
      query: input.query ?? request.query,
      params: (request.params ?? {}) as Record<string, string>,
      principal,
      credential: admission.credential,
      preflight: admission.preflight,
      ip: hearth.ip,
      ipKey: hearth.ipKey,
      requestId: hearth.requestId,
      now: admission.now,
      request,
      reply,
      get user() {
        if (!principal) throw new ApiError('UNAUTHORIZED');
        return principal.user;
      },
    };
  }

  async function runRoute(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const hearth = request.hearth;
    const admission = hearth.admission;
    if (!admission) throw new ApiError('INTERNAL_SERVER_ERROR');
    const { principal } = admission;

    const rawBody = spec.bodyKind === 'stream' ? streamedBody(spec, request, reply) : readBody(spec, request.body);
    const body = spec.body ? validate(spec.body, rawBody) : rawBody;
    const query = spec.query
      ? validate(
          spec.query,
          spec.repeatedQuery ? queryWithRepeats(request.url, spec.repeatedQuery) : (request.query ?? {}),
        )
      : request.query;

    const sudoMode = typeof spec.sudo === 'function' ? (spec.sudo(body) ? 'y' : undefined) : spec.sudo;
    if (sudoMode && principal) {
      const proofHeader = request.headers[SUDO_HEADER];
      const outcome = await services.sudo.require(principal, {
        rawBody,
        headerProof: typeof proofHeader === 'string' ? proofHeader : undefined,
        noProof: sudoMode === 'y0',
        strict: hearth.strict,
        onFailure: () => services.recordAuthFailure(hearth.ip, hearth.strict),
      });
      if (outcome.responseProof) reply.header('X-Service-Sudo-Mode-JWT', outcome.responseProof);
    }

    const ctx = contextFor(request, reply, admission, { body, rawBody, query });
    const pending = spec.handler(ctx);
    const result = pending instanceof Promise ? await pending : pending;
    if (result === REPLY_SENT || reply.sent) return reply;
    if (result === undefined) {
      reply.code(204).send();
      return reply;
    }
    const json = result instanceof JsonText ? result.text : JSON.stringify(result);
    reply.code(200).header('content-type', 'application/json; charset=utf-8').send(json);
    return reply;
  }

  /** The unread request stream of a `stream` route; what the route staged is cleaned up when the exchange ends. */
  function streamedBody(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): StreamedBody {
    const contentType = String(request.headers['content-type'] ?? '');
    const limit = spec.bodyLimit ?? JSON_BODY_LIMIT;
    const body =
      request.body instanceof Readable
        ? new StreamedBody(request.body, contentType, limit)
        : StreamedBody.empty(contentType, limit);
    if (reply.raw.closed) body.settle();
    else reply.raw.once('close', () => body.settle());
    return body;
  }

  function checkTestHarness(request: FastifyRequest): void {
    if (!config.testMode) throw new ApiError('NOT_FOUND');
    const token = request.headers['x-test-token'];
    if (typeof token !== 'string' || !config.testToken || !constantTimeEqual(digest(token), digest(config.testToken)))
      throw new ApiError('TEST_HARNESS_FORBIDDEN');
  }

  async function applyRateLimits(
    spec: AnyRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    principal: Principal | undefined,
    now: number,
  ): Promise<void> {
    const flags = principal?.user.flags ?? 0n;
    if ((flags & (1n << 47n)) !== 0n) return; // RATE_LIMIT_BYPASS
    const identity = principal
      ? `${principal.kind}:${principal.user.id}${principal.kind === 'bearer' ? `:${principal.applicationId}` : ''}`
      : `ip:${request.hearth.ipKey}`;
    if (!spec.rateLimit?.exemptFromGlobal && spec.policy !== 'credential-free') {
      const limit = (flags & (1n << 33n)) !== 0n ? HIGH_GLOBAL_LIMIT : GLOBAL_LIMIT;
      const decision = await services.rateLimiter.consume(`global:${identity}`, limit, 1000, now);
      if (!decision.allowed) {
        throw rateLimited(decision.retryAfterMs, true, {
          'X-RateLimit-Global': 'true',
          'X-RateLimit-Scope': 'global',
        });
      }
    }
    const rl = spec.rateLimit;
    if (!rl) return;
    const override = config.rateLimitOverrides[rl.bucket];
    const limit = override?.limit ?? rl.limit;
    const windowMs = (override?.windowSeconds ?? rl.windowSeconds) * 1000;
    const params = (request.params ?? {}) as Record<string, string>;
    const keyPart = (rl.keyParams ?? []).map((p) => params[p] ?? '').join(':');
    const bucketKey = `${rl.bucket}:${keyPart}:${rl.keyParams?.length ? '' : identity}`;
    const decision = await services.rateLimiter.consume(bucketKey, limit, windowMs, now);
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(decision.remaining),
      'X-RateLimit-Reset': String(Math.ceil((now + decision.resetAfterMs) / 1000)),
      'X-RateLimit-Reset-After': (decision.resetAfterMs / 1000).toFixed(3),
      'X-RateLimit-Bucket': sha256Hex(rl.bucket).slice(0, 16),
    };
    if (!decision.allowed) {
      throw rateLimited(decision.retryAfterMs, false, {
        ...headers,
        'X-RateLimit-Remaining': '0',
        // `shared`: one bucket for every caller of a resource (webhook execute); otherwise per requester.
        'X-RateLimit-Scope': rl.keyParams?.length ? 'shared' : 'user',
      });
    }
    if (principal?.kind === 'bot' || (spec.policy === 'credential-free' && rl.keyParams?.length)) {
      for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    }
  }

  return app;
}

/**
 * Requests Node's HTTP parser rejects (oversized headers, garbled request lines) never reach a route;
 * they still get the standard `{code, message}` body.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError = new ApiError(
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'REQUEST_HEADER_FIELDS_TOO_LARGE'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'REQUEST_TIMEOUT'
        : 'BAD_REQUEST',
  );
  if (socket.writable) socket.write(rawErrorResponse(apiError));
  socket.destroy();
}

/**
 * Stock Discord libraries address the API as `/v10/…` or `/v9/…` (discord.js's default REST version) and encode
 * `@me` as `%40me` (`Routes.user('@me')`). Both mean the `/v1` route, so only the path is rewritten; the query
 * string is left as it came.
 */
export function canonicalApiUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  let canonical = path.replace(/^\/v(?:9|10)(?=\/|$)/, '/v1');
  if (canonical.includes('%40')) canonical = canonical.replace(/\/%40me(?=\/|$)/g, '/@me');
  if (canonical === path) return url;
  return queryAt === -1 ? canonical : canonical + url.slice(queryAt);
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function isTestHarnessPath(path: string): boolean {
  return path.startsWith('/test/') || path.startsWith('/v1/test/');
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const name in error.headers) reply.header(name, error.headers[name]);
  return reply.code(error.status).header('content-type', 'application/json; charset=utf-8').send(wireText(error));
}

/** Turns the raw request bytes into what the route reads: JSON by default (content type not required). */
function readBody(spec: AnyRoute, body: unknown): unknown {
  const kind = spec.bodyKind ?? 'json';
  if (kind === 'raw' || kind === 'multipart') return body;
  if (!Buffer.isBuffer(body) || body.length === 0) return {};
  const text = body.toString('utf8');
  if (kind === 'form') return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw fieldError('body', 'INVALID_FORMAT', 'Malformed JSON body');
  }
}
