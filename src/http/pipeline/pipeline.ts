import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../../app-services.ts';
import type { Config } from '../../config/config.ts';
import { SUDO_HEADER } from '../../domains/sudo/sudo-mode.ts';
import { ConcurrencyGate } from '../../platform/concurrency-gate.ts';
import { discardRestOfBody, limitBodyTime } from '../body-discard.ts';
import { ApiError } from '../errors.ts';
import { rawErrorResponse } from '../raw-response.ts';
import type { AnyRoute, RequestContext } from '../route.ts';
import { authenticate } from './authenticate.ts';
import { authorise, ssoFirstDenial, testHarnessDenial } from './authorise.ts';
import { banGate, isBanExempt } from './ban-gate.ts';
import { captcha, needsCaptcha } from './captcha.ts';
import { decodeBody, decodeStreamedBody } from './decode-body.ts';
import { rateLimit } from './rate-limit.ts';
import { type Admission, applyCors, requestContext } from './request-context.ts';
import { catalogueErrorFor, respond, sendError, sendInternalError } from './respond.ts';
import { sudo } from './sudo.ts';
import { admitUpload, UPLOADS_PER_CALLER, UPLOADS_TOTAL } from './upload-admission.ts';
import { validate } from './validate.ts';

/** What the request pipeline uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type PipelineDeps = Pick<
  AppServices,
  | 'banCheck'
  | 'captcha'
  | 'clock'
  | 'credentials'
  | 'log'
  | 'metrics'
  | 'rateLimiter'
  | 'recordAuthFailure'
  | 'settings'
  | 'sudo'
> & {
  config: Pick<
    Config,
    'corsOrigins' | 'httpRequestTimeoutMs' | 'rateLimitOverrides' | 'testMode' | 'testToken' | 'trustedProxies'
  >;
};

type Done = (error?: Error) => void;

/**
 * The steps of docs/architecture.md#the-request-path-srchttppipeline composed into the Fastify hooks that
 * `server.ts` installs: `onRequest` (request context, CORS, ban gate), `preParsing` (authenticate, rate limit,
 * authorise, CAPTCHA, upload admission, preflight: all before a byte of the body is read) and the handler
 * (decode body, validate, sudo, the route's handler, respond). Each step is a named function of its own
 * module, so CPU profiles and stack traces show it by name.
 */
export function createRequestPipeline(deps: PipelineDeps) {
  const { config, clock, log } = deps;
  const uploads = new ConcurrencyGate(UPLOADS_TOTAL, UPLOADS_PER_CALLER);
  const ssoEnforced = () => deps.settings.ssoEnforced();

  // Callback style, not async: most requests finish this hook synchronously (in-process ban store).
  function onRequest(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    const state = requestContext(config, {
      fastifyId: request.id,
      remoteAddress: request.socket.remoteAddress,
      headers: request.headers,
    });
    request.hearth = state;
    reply.header('X-Request-ID', state.requestId);
    if (!request.raw.complete) limitBodyTime(request.raw, config.httpRequestTimeoutMs, () => reply.raw.headersSent);
    applyCors(config.corsOrigins, request, reply);
    if (request.method === 'OPTIONS') {
      reply.code(204).send();
      return;
    }
    if (isBanExempt(request.url.split('?')[0] ?? '')) {
      done();
      return;
    }
    const refusal = banGate(deps, state);
    if (refusal instanceof Promise) refusal.then((found) => refuseOrContinue(reply, found, done), done);
    else refuseOrContinue(reply, refusal, done);
  }

  function refuseOrContinue(reply: FastifyReply, refusal: ApiError | undefined, done: Done): void {
    if (refusal) sendError(reply, refusal);
    else done();
  }

  /** The header-only steps; a policy refusal is returned (not thrown), anything else may throw. */
  async function admit(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): Promise<ApiError | undefined> {
    const state = request.hearth;
    const now = clock.now();
    const headers = request.headers;

    if (spec.policy === 'test') {
      const harnessDenial = testHarnessDenial(config, headers['x-test-token']);
      if (harnessDenial) return harnessDenial;
    }
    const earlySso = ssoFirstDenial(spec, ssoEnforced);
    if (earlySso) return earlySso;

    const authenticating = authenticate(deps, spec, headers.authorization, state);
    const { credential, principal } = authenticating instanceof Promise ? await authenticating : authenticating;

    if (spec.policy !== 'test' && state.strict) {
      const selfParsedBot = spec.policy === 'self' && /^bot /i.test(headers.authorization ?? '');
      const shown = await rateLimit(deps, spec, paramsOf(request), principal, state.ipKey, now, selfParsedBot);
      if (shown) for (const name in shown) reply.header(name, shown[name]);
    }

    const denial = authorise(spec, principal, ssoEnforced);
    if (denial) return denial;
    if (needsCaptcha(spec, principal, state)) await captcha(deps, headers, state);
    const release = admitUpload(
      uploads,
      spec,
      request.raw,
      principal ? `user:${principal.user.id}` : `ip:${state.ipKey}`,
    );
    if (release) reply.raw.once('close', release);
    const admission: Admission = { credential, principal, now, preflight: undefined };
    state.admission = admission;
    if (spec.preflight) admission.preflight = await spec.preflight(contextFor(request, reply, admission, {}));
    return undefined;
  }

  /** Fastify's `preParsing` hook of one route: the body stays unread until `admit` lets the request through. */
  function preParsing<P>(
    spec: AnyRoute,
    request: FastifyRequest,
    reply: FastifyReply,
    payload: P,
    done: (error: Error | null, payload?: P) => void,
  ): void {
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
  }

  /** After admission: decode body, validate, sudo, the route's handler, respond. */
  async function runRoute(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const state = request.hearth;
    const admission = state.admission;
    if (!admission) throw new ApiError('INTERNAL_SERVER_ERROR');
    const rawBody =
      spec.bodyKind === 'stream'
        ? decodeStreamedBody(spec, request.body, String(request.headers['content-type'] ?? ''), (settle) => {
            if (reply.raw.closed) settle();
            else reply.raw.once('close', settle);
          })
        : decodeBody(spec, request.body);
    const { body, query } = validate(spec, rawBody, request.url, request.query);
    const proof = await sudo(
      deps,
      spec,
      { body, rawBody, proofHeader: request.headers[SUDO_HEADER] },
      admission.principal,
      state,
    );
    if (proof) reply.header('X-Service-Sudo-Mode-JWT', proof);
    const pending = spec.handler(contextFor(request, reply, admission, { body, rawBody, query }));
    return respond(reply, pending instanceof Promise ? await pending : pending);
  }

  async function handler(spec: AnyRoute, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    try {
      return await runRoute(spec, request, reply);
    } catch (error) {
      // Answering here skips Fastify's error machinery, which made every 401/403 markedly dearer.
      if (error instanceof ApiError && !reply.sent) return sendError(reply, error);
      throw error;
    }
  }

  // A reply sent before its body was read (a refusal from the headers, a 413) keeps the connection: the rest of
  // the body is read and dropped up to a bound, so the client reads the answer instead of a broken pipe.
  function onSend<P>(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: P,
    done: (error: null, payload: P) => void,
  ): void {
    if (!request.raw.complete) reply.removeHeader('connection');
    done(null, payload);
  }

  /** The access log line and the request metric; the route pattern, never the URL (tokens live in URLs). */
  async function onResponse(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.raw.complete) discardRestOfBody(request.raw);
    const state = request.hearth;
    if (!state) return;
    const latencyMs = Number(process.hrtime.bigint() - state.startedAt) / 1e6;
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.observeRequest(request.method, route, reply.statusCode, latencyMs / 1000);
    log.info('request', {
      request_id: state.requestId,
      method: request.method,
      route,
      status: reply.statusCode,
      latency_ms: Math.round(latencyMs * 100) / 100,
    });
  }

  function onError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const mapped = catalogueErrorFor(error);
    if (mapped) return sendError(reply, mapped);
    log.error('unhandled error', {
      request_id: request.hearth?.requestId,
      route: request.routeOptions.url,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    return sendInternalError(reply);
  }

  function notFound(_request: FastifyRequest, reply: FastifyReply): void {
    sendError(reply, new ApiError('NOT_FOUND'));
  }

  // Router refusals go through the catalogue too, and never echo the path (it may carry a token).
  function routerError(error: unknown, _request: FastifyRequest, reply: FastifyReply): void {
    sendError(
      reply,
      new ApiError((error as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'BAD_REQUEST'),
    );
  }

  return { onRequest, preParsing, handler, onSend, onResponse, onError, notFound, routerError };
}

function paramsOf(request: FastifyRequest): Record<string, string> {
  return (request.params ?? {}) as Record<string, string>;
}

function contextFor(
  request: FastifyRequest,
  reply: FastifyReply,
  admission: Admission,
  input: { body?: unknown; rawBody?: unknown; query?: unknown },
): RequestContext {
  const { principal } = admission;
  const state = request.hearth;
  return {
    body: input.body,
    rawBody: input.rawBody,
    query: input.query ?? request.query,
    params: paramsOf(request),
    principal,
    credential: admission.credential,
    preflight: admission.preflight,
    ip: state.ip,
    ipKey: state.ipKey,
    requestId: state.requestId,
    now: admission.now,
    request,
    reply,
    get user() {
      if (!principal) throw new ApiError('UNAUTHORIZED');
      return principal.user;
    },
  };
}

/**
 * Requests Node's HTTP parser rejects (oversized headers, garbled request lines) never reach a route;
 * they still get the standard `{code, message}` body.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
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
