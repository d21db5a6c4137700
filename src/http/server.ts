import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { AppServices } from '../app-services.ts';
import { answerClientError, createRequestPipeline } from './pipeline/pipeline.ts';
import { JSON_BODY_LIMIT } from './pipeline/upload-admission.ts';
import type { AnyRoute } from './route.ts';

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

/**
 * The Fastify instance and the route table on it. The request pipeline's steps live in `pipeline/`
 * (docs/architecture.md#the-request-path-srchttppipeline); this file only installs them as hooks.
 */
export function createHttpServer(services: HttpServerDeps, routes: readonly AnyRoute[]): FastifyInstance {
  const { config } = services;
  const pipeline = createRequestPipeline(services);
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
    // No `trustProxy`: the client address is ours (`client-ip.ts`), see docs/architecture.md#the-request-path-srchttppipeline.
    genReqId: () => randomUUID(),
    rewriteUrl: (request) => canonicalApiUrl(request.url ?? '/'),
    clientErrorHandler: answerClientError,
    frameworkErrors: pipeline.routerError,
    // Hearth validates with zod in the pipeline and gives Fastify no schema: without these, Fastify would load
    // ajv and fast-json-stringify at every start for nothing (docs/performance.md#start-up).
    schemaController: {
      compilersFactory: {
        buildValidator: () => () => {
          throw new Error("Hearth routes carry no Fastify schema (validation is the pipeline's, with zod)");
        },
        buildSerializer: () => () => {
          throw new Error('Hearth routes carry no Fastify schema (responses are serialised by the pipeline)');
        },
      },
    },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.decorateRequest('hearth', undefined as unknown as FastifyRequest['hearth']);

  app.addHook('onRequest', pipeline.onRequest);
  app.addHook('onSend', pipeline.onSend);
  app.addHook('onResponse', pipeline.onResponse);
  app.setNotFoundHandler(pipeline.notFound);
  app.setErrorHandler(pipeline.onError);

  function addRoute(instance: FastifyInstance, spec: AnyRoute, url: string): void {
    instance.route({
      method: spec.method,
      url,
      bodyLimit: spec.bodyLimit ?? JSON_BODY_LIMIT,
      config: { hearthRoute: spec },
      // Authentication, rate limits, policy, CAPTCHA and the route's own preflight run from the headers,
      // before Fastify reads a byte of the body: an unauthenticated upload is refused unread.
      preParsing: (request, reply, payload, done) => pipeline.preParsing(spec, request, reply, payload, done),
      handler: (request, reply) => pipeline.handler(spec, request, reply),
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

  return app;
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
