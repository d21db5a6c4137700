import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Principal } from '../identity/principal.ts';
import type { UserRecord } from '../identity/user-record.ts';
import type { ParsedCredential } from './auth/authorization.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route (docs/conventions.md#policies). `credential-free` routes never read `Authorization` (webhook-token,
 * media, relay); `self` routes read it their own way (the two case-insensitive bot routes); `test` routes
 * belong to the test harness.
 */
export type Policy = 'none' | 'user' | 'user-only' | 'bot' | 'oauth2' | 'admin' | 'credential-free' | 'self' | 'test';

export type OAuthScope = 'identify' | 'email' | 'guilds' | 'connections' | 'bot' | 'openid' | 'profile';

export interface RateLimitSpec {
  /** Bucket name with path placeholders, e.g. `webhook:execute::webhook_id`. */
  bucket: string;
  limit: number;
  windowSeconds: number;
  /** Path parameters whose values key the bucket (the webhook id for execute). */
  keyParams?: string[];
  /** Skip the global per-identity bucket (webhook execution). */
  exemptFromGlobal?: boolean;
}

export interface RequestContext<B = unknown, Q = unknown> {
  body: B;
  /** The request body before validation (sudo fields ride along with the route's own fields). */
  rawBody: unknown;
  query: Q;
  params: Record<string, string>;
  principal: Principal | undefined;
  credential: ParsedCredential;
  /** What the route's `preflight` returned (undefined without one). */
  preflight: unknown;
  ip: string;
  ipKey: string;
  requestId: string;
  now: number;
  request: FastifyRequest;
  reply: FastifyReply;
  /** The resolved user; only valid on routes whose policy guarantees one. */
  user: UserRecord;
}

export interface RouteSpec<B = unknown, Q = unknown> {
  method: HttpMethod;
  /** Path below `/v1` in find-my-way syntax (`/users/:userId`), unless `root` is set. */
  path: string;
  policy: Policy;
  /** `user`: bearer tokens holding this scope are admitted; `oauth2`: the scope is required. */
  scope?: OAuthScope;
  /** Other scopes that admit a bearer token in place of `scope` (userinfo: `identify` or `openid`). */
  orScope?: OAuthScope;
  /** `admin`: the operation's ACL. */
  acl?: string;
  /** `·L`: refused with 403 SSO_REQUIRED while single sign-on is enforced. */
  localAuth?: boolean;
  /** `+S`: admits accounts with outstanding suspicious-activity requirements. */
  admitsSuspicious?: boolean;
  /**
   * CAPTCHA-protected (register, login, forgot): `X-Captcha-Token` is checked when a provider is configured,
   * unless a credential resolved on the request (docs/conventions.md#the-authorization-header) or test mode is not strict.
   */
  captcha?: boolean;
  /** `y`: sudo mode required; `y0`: required but no proof is minted or echoed; a function decides per body. */
  sudo?: 'y' | 'y0' | ((body: B) => boolean);
  rateLimit?: RateLimitSpec;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /**
   * Query names that may be repeated (`author_id=1&author_id=2`): `query` receives each as a list of every
   * value given. Other names keep the last value, as on every route.
   */
  repeatedQuery?: readonly string[];
  /**
   * How the body is read: JSON (default), form-encoded, multipart or raw bytes, all buffered up to `bodyLimit`
   * before the handler runs; or `stream`: `rawBody` is a `StreamedBody` the handler reads as it arrives (uploads).
   */
  bodyKind?: 'json' | 'form' | 'multipart' | 'raw' | 'stream';
  bodyLimit?: number;
  /** Served at the origin root instead of below `/v1` (discovery, media proxy). */
  root?: boolean;
  /** Also served without the `/v1` prefix (test harness, health). */
  alsoAtRoot?: boolean;
  /**
   * Runs after authentication and policy and before the body is read (`body`, `rawBody` and `query` are not
   * set yet): checks that need only the path and the principal (a webhook token, channel permissions), so a
   * refused request is answered without reading its body. The result is `ctx.preflight` in the handler.
   */
  preflight?(ctx: RequestContext<unknown, unknown>): Promise<unknown> | unknown;
  handler(ctx: RequestContext<B, Q>): Promise<unknown> | unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: a route table holds routes of every body and query type
export type AnyRoute = RouteSpec<any, any>;

export function route<B = unknown, Q = unknown>(spec: RouteSpec<B, Q>): AnyRoute {
  return spec as AnyRoute;
}

/** A handler result that the pipeline must not serialise: the handler already wrote the reply. */
export const REPLY_SENT = Symbol('reply sent');

/** A handler result that is already JSON text (a cached rendering): sent as is, not serialised again. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The query string of `url` as `RouteSpec.query` reads it: `repeated` names as lists, the rest last-wins. */
export function queryWithRepeats(url: string, repeated: readonly string[]): Record<string, string | string[]> {
  const at = url.indexOf('?');
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(at === -1 ? '' : url.slice(at + 1))) {
    if (!repeated.includes(name)) out[name] = value;
    else out[name] = [...((out[name] as string[] | undefined) ?? []), value];
  }
  return out;
}

/**
 * The body of a `bodyKind: 'stream'` route: the request stream itself, not yet read, with the route's byte
 * bound. The route reads it as it goes (a multipart upload goes straight to the object store), so the
 * process never holds the body whole (docs/media.md#uploads-in-flight).
 */
export class StreamedBody {
  private readonly settlers: (() => Promise<void> | void)[] = [];
  private finished = false;

  constructor(
    readonly stream: Readable,
    readonly contentType: string,
    /** The route's `bodyLimit`: reading past it is a 413. */
    readonly limit: number,
  ) {}

  /** A request with no body (no Content-Length or zero, no chunked encoding). */
  static empty(contentType: string, limit: number): StreamedBody {
    return new StreamedBody(Readable.from([]), contentType, limit);
  }

  /**
   * Runs `task` once the exchange is over (answered, failed or abandoned by the client): where a route
   * removes what it staged and did not keep.
   */
  afterResponse(task: () => Promise<void> | void): void {
    if (this.finished)
      void Promise.resolve()
        .then(task)
        .catch(() => undefined);
    else this.settlers.push(task);
  }

  /** Called by the server when the response closes. */
  settle(): void {
    if (this.finished) return;
    this.finished = true;
    for (const task of this.settlers.splice(0))
      void Promise.resolve()
        .then(task)
        .catch(() => undefined);
  }
}
