import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, rateLimited } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, type RequestContext, route, type StreamedBody } from '../../http/route.ts';
import { ConcurrencyGate } from '../../platform/concurrency-gate.ts';
import { fetchMedia, OutboundFailure } from '../../platform/net/outbound.ts';
import { isSafeKey, type ObjectInfo, ObjectTooLargeError, readBounded } from '../../platform/storage/object-store.ts';
import { UPLOAD_BUCKET } from './buckets.ts';
import { parseByteRange } from './byte-range.ts';
import { verifyCapability } from './capability.ts';
import {
  contentTag,
  entityTag,
  evaluatePreconditions,
  httpDate,
  ifRangeHolds,
  parseHttpDate,
  type Validators,
} from './conditional.ts';
import { StoredDerivedImages } from './derived-cache.ts';
import { type ExternalMedia, ExternalMediaCache, keepFor, StoredExternalMedia } from './external-cache.ts';
import { verifyExternalPath } from './external-signature.ts';
import {
  DerivedImageCache,
  formatFromName,
  type ImageFormat,
  snapSize,
  TransformQueue,
  TransformQueueFull,
  transformImage,
  transformRevision,
} from './image-transform.ts';
import { SharedCacheBudget } from './shared-cache.ts';
import { sniffImageType } from './user-images.ts';

const MAX_RELAY_BYTES = 25 * 1024 * 1024;
const EXTERNAL_MAX_BYTES = 20 * 1024 * 1024;
const EXTERNAL_TIMEOUT_MS = 10_000;
/** Fetched external media kept per process (docs/media.md#external-media-cache): 64 MiB, 8 MiB an entry. */
const EXTERNAL_CACHE_BYTES = 64 * 1024 * 1024;
const EXTERNAL_CACHE_ENTRY_BYTES = 8 * 1024 * 1024;
/** The largest resized image kept, in memory and in the shared object store (docs/media.md#resized-images). */
const DERIVED_ENTRY_BYTES = 2 * 1024 * 1024;
/** The largest stored image re-encoded (attachments are at most 25 MiB; avatars 10 MiB). */
const MAX_TRANSFORM_INPUT_BYTES = 25 * 1024 * 1024;
/** Every media response is named by an immutable URL: the hash, the id or the signed target is its version. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** Types a browser would run or render as a document in our origin: served as opaque downloads instead. */
const ACTIVE_CONTENT = /html|xml|svg|javascript|ecmascript|x-shockwave/i;

const imageQuery = z.object({
  size: z.string().max(8).optional(),
  width: z.string().max(8).optional(),
  height: z.string().max(8).optional(),
  format: z.string().max(8).optional(),
  quality: z.string().max(8).optional(),
  animated: z.string().max(8).optional(),
  download: z.string().max(8).optional(),
});
type ImageQuery = z.infer<typeof imageQuery>;

/** `hash.ext`, hash = 8 lowercase hex with an optional `a_` for animated images (docs/media.md). */
const HASHED_FILE = /^((?:a_)?[0-9a-f]{8})\.(png|jpg|jpeg|webp|gif)$/;

/** The headers every media answer carries, a 304 included (docs/media.md#conditional-requests). */
function cachingHeaders(reply: FastifyReply, validators: Validators | undefined): void {
  reply
    .header('cache-control', CACHE_CONTROL)
    .header('x-content-type-options', 'nosniff')
    // The media URL may be a capability: never leak it onward.
    .header('referrer-policy', 'no-referrer');
  if (validators) {
    reply.header('etag', validators.etag);
    if (validators.lastModified !== undefined) reply.header('last-modified', httpDate(validators.lastModified));
  }
}

/**
 * Answers with stored or transformed bytes, or a stream of a stored object (whose `length` must be given:
 * Content-Length is set from it, never by gathering the stream).
 */
function send(
  reply: FastifyReply,
  bytes: Buffer | Readable,
  contentType: string,
  extra: Record<string, string> = {},
  options: { status?: number; length?: number; validators?: Validators } = {},
): typeof REPLY_SENT {
  reply.code(options.status ?? 200).header('content-type', contentType);
  cachingHeaders(reply, options.validators);
  for (const [name, value] of Object.entries(extra)) reply.header(name, value);
  if (options.length !== undefined) reply.header('content-length', String(options.length));
  reply.send(bytes);
  return REPLY_SENT;
}

/**
 * Evaluates the request's preconditions against `validators`: answers 304 (no body, the same caching headers)
 * or refuses with 412 and returns true; false when the request goes on.
 */
function answeredConditionally(ctx: RequestContext<unknown, unknown>, validators: Validators): boolean {
  const outcome = evaluatePreconditions(ctx.request.headers, validators);
  if (outcome === 'proceed') return false;
  if (outcome === 'failed') throw new ApiError('PRECONDITION_FAILED', { headers: { etag: validators.etag } });
  ctx.reply.code(304);
  cachingHeaders(ctx.reply, validators);
  ctx.reply.send();
  return true;
}

/** A stored object served as stored: its validators come from its metadata (key, size, version). */
function storedValidators(key: string, info: ObjectInfo): Validators {
  return { etag: entityTag(['object', key, info.size, info.version]), lastModified: info.modified };
}

interface DeriveOptions {
  format: ImageFormat;
  width?: number;
  height?: number;
  quality?: number;
  animated?: boolean;
}

/** A derived image (a size or format of a stored one): the original's identity, the encoder and the options. */
async function derivedValidators(key: string, info: ObjectInfo, options: DeriveOptions): Promise<Validators> {
  return {
    etag: entityTag([
      'derived',
      await transformRevision(),
      key,
      info.size,
      info.version,
      options.format,
      options.width ?? '',
      options.height ?? '',
      options.quality ?? '',
      options.animated ? 'animated' : '',
    ]),
    lastModified: info.modified,
  };
}

function checkSegments(...segments: (string | undefined)[]): void {
  for (const segment of segments) {
    if (
      !segment ||
      segment === '.' ||
      segment === '..' ||
      segment.includes('/') ||
      segment.includes('\\') ||
      segment.includes('\0')
    ) {
      throw new ApiError('BAD_REQUEST', { message: 'Invalid path segment' });
    }
  }
}

/** What `mediaRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type MediaRoutesDeps = Pick<AppServices, 'config' | 'db' | 'log' | 'objects' | 'secrets'>;

/**
 * The media proxy (docs/media.md). Every route is credential-free: the Authorization header is never read,
 * so a credential neither helps nor hurts. Errors use the standard body.
 */
export function mediaRoutes(services: MediaRoutesDeps): AnyRoute[] {
  const { objects, secrets, config, log, db } = services;
  // Each fetch holds up to EXTERNAL_MAX_BYTES in memory: 16 at once per process, 4 per client address.
  const externalFetches = new ConcurrencyGate(16, 4);
  const externalCache = new ExternalMediaCache(EXTERNAL_CACHE_BYTES, EXTERNAL_CACHE_ENTRY_BYTES);
  // External media and resized images share one byte budget in the object store (docs/media.md).
  const sharedBudget = new SharedCacheBudget(objects, db, config.mediaExternalCacheBytes);
  const sharedExternal = new StoredExternalMedia(objects, sharedBudget, EXTERNAL_CACHE_ENTRY_BYTES);
  const externalInFlight = new Map<string, Promise<ExternalMedia>>();

  /** Fetches a verified target, derives what the answer needs, and keeps it as long as the upstream allows. */
  async function fetchExternal(url: string, now: number): Promise<ExternalMedia> {
    // Another node (or this one before a restart) may have fetched it: the object store is shared.
    const stored = await sharedExternal.get(url, now).catch((error: unknown) => {
      log.warn('external media cache read failed', { error: String(error) });
      return undefined;
    });
    if (stored) {
      externalCache.set(url, stored.media, stored.expiresAt - now, now);
      return stored.media;
    }
    let fetched: Awaited<ReturnType<typeof fetchMedia>>;
    try {
      fetched = await fetchMedia(url, {
        allowPrivate: config.mediaAllowPrivateTargets,
        maxBytes: EXTERNAL_MAX_BYTES,
        timeoutMs: EXTERNAL_TIMEOUT_MS,
        maxRedirects: 5,
      });
    } catch (error) {
      if (error instanceof OutboundFailure) {
        if (error.reason === 'private_address' || error.reason === 'bad_url')
          throw new ApiError('FORBIDDEN', { message: 'Target not allowed' });
        if (error.reason === 'too_large') throw new ApiError('PAYLOAD_TOO_LARGE');
      }
      throw new ApiError('NOT_FOUND', { message: 'Upstream media unavailable' });
    }
    // Failures are never kept: the next request asks the upstream again.
    if (fetched.status < 200 || fetched.status >= 300)
      throw new ApiError('NOT_FOUND', { message: 'Upstream media unavailable' });
    const sniffedType = sniffImageType(fetched.bytes);
    // The bytes are in hand: the tag is their digest; the date is the upstream's, when it gave a valid one.
    const media: ExternalMedia = {
      bytes: fetched.bytes,
      sniffedType,
      etag: contentTag(fetched.bytes, sniffedType ?? 'application/octet-stream'),
      lastModified: parseHttpDate(fetched.lastModified),
    };
    const keepMs = keepFor(fetched.cacheControl);
    externalCache.set(url, media, keepMs, now);
    // Stored before answering, so a request on another node right after finds it; a failed write only costs a fetch.
    if (keepMs > 0)
      await sharedExternal.set(url, media, now + keepMs, now).catch((error: unknown) => {
        log.warn('external media cache write failed', { error: String(error) });
      });
    return media;
  }

  function serveHashedImage(ctx: RequestContext<unknown, ImageQuery>, key: string, file: string) {
    const match = HASHED_FILE.exec(file);
    if (!match) throw new ApiError('NOT_FOUND');
    return serveStoredImage(ctx, `${key}/${match[1]}`, match[2] as string);
  }

  // Re-encoding holds the original whole (sharp gathers its input): at most 4 at once, 64 waiting, and the
  // results kept by entity tag (docs/media.md#resized-images).
  const transforms = new TransformQueue(4, 64);
  const derived = new DerivedImageCache(32 * 1024 * 1024, DERIVED_ENTRY_BYTES);
  const sharedDerived = new StoredDerivedImages(objects, sharedBudget, DERIVED_ENTRY_BYTES);
  const inFlight = new Map<string, Promise<{ bytes: Buffer; contentType: string }>>();

  /**
   * The stored image at `key` re-encoded with `options`: from this process's cache, a running transform, the
   * shared object store (another node or an earlier process made it), or a new transform, then stored there.
   */
  function derive(key: string, info: ObjectInfo, tag: string, options: DeriveOptions, failure: string, now: number) {
    const cached = derived.get(tag);
    if (cached) return Promise.resolve(cached);
    const running = inFlight.get(tag);
    if (running) return running;
    if (info.size > MAX_TRANSFORM_INPUT_BYTES)
      return Promise.reject(new ApiError('BAD_REQUEST', { message: 'Stored image is too large to process' }));
    const work = sharedDerived
      .get(tag)
      .catch((error: unknown) => {
        log.warn('derived image cache read failed', { error: String(error) });
        return undefined;
      })
      .then(async (shared) => {
        if (shared) {
          derived.set(tag, shared);
          return shared;
        }
        const out = await transformed(key, options, failure);
        derived.set(tag, out);
        // A failed write only costs another node a re-encoding.
        await sharedDerived.set(tag, out, now).catch((error: unknown) => {
          log.warn('derived image cache write failed', { error: String(error) });
        });
        return out;
      })
      .finally(() => inFlight.delete(tag));
    inFlight.set(tag, work);
    return work;
  }

  /** A new re-encoding of the stored image at `key`, within the transform slots. */
  function transformed(key: string, options: DeriveOptions, failure: string) {
    return transforms
      .run(async () => {
        const stream = await objects.readStream(key);
        if (!stream) throw new ApiError('NOT_FOUND');
        const original = await readBounded(stream, MAX_TRANSFORM_INPUT_BYTES).catch((error: unknown) => {
          if (error instanceof ObjectTooLargeError)
            throw new ApiError('BAD_REQUEST', { message: 'Stored image is too large to process' });
          throw error;
        });
        try {
          return await transformImage(original, options);
        } catch {
          throw new ApiError('BAD_REQUEST', { message: failure });
        }
      })
      .catch((error: unknown) => {
        if (error instanceof TransformQueueFull) throw rateLimited(1000, false, { 'X-RateLimit-Scope': 'shared' });
        throw error;
      });
  }

  /** An image of the object store, re-encoded to the extension's (or `format`'s) type, optionally resized. */
  /** `legacyKey`: where the image was kept before it had its own prefix, looked at only when the key holds none. */
  async function serveStoredImage(
    ctx: RequestContext<unknown, ImageQuery>,
    key: string,
    extension: string,
    legacyKey?: string,
  ) {
    let objectKey = key;
    let info = await objects.stat(objectKey);
    if (!info && legacyKey) {
      objectKey = legacyKey;
      info = await objects.stat(objectKey);
    }
    if (!info) throw new ApiError('NOT_FOUND');
    const format = formatFromName(ctx.query.format) ?? formatFromName(extension) ?? 'png';
    const size = snapSize(ctx.query.size);
    const options: DeriveOptions = {
      format,
      ...(size ? { width: size, height: size } : {}),
      animated: format === 'gif' || (format === 'webp' && ctx.query.animated === 'true'),
    };
    const validators = await derivedValidators(objectKey, info, options);
    if (answeredConditionally(ctx, validators)) return REPLY_SENT;
    const out = await derive(objectKey, info, validators.etag, options, 'Stored image could not be processed', ctx.now);
    return send(ctx.reply, out.bytes, out.contentType, {}, { validators });
  }

  /**
   * A stored object served as stored, streamed: conditional requests, then one byte range unless `If-Range`
   * says the client's copy is stale (docs/media.md#ranges).
   */
  async function serveStoredObject(
    ctx: RequestContext<unknown, unknown>,
    key: string,
    info: ObjectInfo,
    contentType: string,
    headers: Record<string, string> = {},
  ) {
    const validators = storedValidators(key, info);
    if (answeredConditionally(ctx, validators)) return REPLY_SENT;
    const rangeHeader = ifRangeHolds(ctx.request.headers, validators) ? ctx.request.headers.range : undefined;
    const range = parseByteRange(rangeHeader, info.size);
    if (range === 'unsatisfiable')
      throw new ApiError('RANGE_NOT_SATISFIABLE', { headers: { 'content-range': `bytes */${info.size}` } });
    const body = await objects.readStream(key, range);
    if (!body) throw new ApiError('NOT_FOUND');
    const ranged: Record<string, string> = { 'accept-ranges': 'bytes', ...headers };
    if (range) ranged['content-range'] = `bytes ${range.start}-${range.end}/${info.size}`;
    const length = range ? range.end - range.start + 1 : info.size;
    return send(ctx.reply, body, contentType, ranged, { status: range ? 206 : 200, length, validators });
  }

  const imageRoute = (
    path: string,
    keyOf: (p: Record<string, string>) => { key: string; file: string; segments: string[] },
  ) =>
    route({
      method: 'GET',
      path,
      root: true,
      policy: 'credential-free',
      query: imageQuery,
      handler(ctx) {
        const { key, file, segments } = keyOf(ctx.params);
        checkSegments(...segments, file);
        return serveHashedImage(ctx, key, file);
      },
    });

  return [
    route({
      method: 'GET',
      path: '/media/attachments/:channelId/:attachmentId/:filename',
      root: true,
      policy: 'credential-free',
      query: imageQuery,
      async handler(ctx) {
        const { channelId, attachmentId, filename } = ctx.params;
        checkSegments(channelId, attachmentId, filename);
        const key = `attachments/${channelId}/${attachmentId}/${filename}`;
        if (!isSafeKey(key)) throw new ApiError('BAD_REQUEST', { message: 'Invalid path segment' });
        const info = await objects.stat(key);
        if (!info) throw new ApiError('NOT_FOUND');
        const disposition = ctx.query.download === 'true' || ctx.query.download === '1' ? 'attachment' : 'inline';
        const headers = {
          'content-disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(filename as string)}`,
        };
        const width = ctx.query.width ? Number(ctx.query.width) : undefined;
        const height = ctx.query.height ? Number(ctx.query.height) : undefined;
        const requested = formatFromName(ctx.query.format);
        // Sniffed from the first bytes only: the object itself is streamed (docs/media.md#streamed-downloads).
        const isImage = sniffImageType((await objects.head(key, 16)) ?? Buffer.alloc(0)) !== undefined;
        if (isImage && (width || height || requested)) {
          const format = requested ?? formatFromName(info.contentType.split('/')[1]) ?? 'png';
          const w = width && Number.isFinite(width) ? Math.min(4096, Math.max(1, Math.round(width))) : undefined;
          const h = height && Number.isFinite(height) ? Math.min(4096, Math.max(1, Math.round(height))) : undefined;
          const quality = ctx.query.quality ? Number(ctx.query.quality) : undefined;
          const options: DeriveOptions = {
            format,
            ...(w ? { width: w } : {}),
            ...(h ? { height: h } : {}),
            ...(quality && Number.isFinite(quality)
              ? { quality: Math.min(100, Math.max(1, Math.round(quality))) }
              : {}),
          };
          const validators = await derivedValidators(key, info, options);
          if (answeredConditionally(ctx, validators)) return REPLY_SENT;
          const out = await derive(key, info, validators.etag, options, 'Image could not be processed', ctx.now);
          return send(ctx.reply, out.bytes, out.contentType, headers, { validators });
        }
        // Unknown bytes are served as opaque downloads so a stored file can never run as HTML in our origin.
        const safeType =
          isImage || !ACTIVE_CONTENT.test(info.contentType) ? info.contentType : 'application/octet-stream';
        return serveStoredObject(ctx, key, info, safeType, headers);
      },
    }),
    imageRoute('/media/avatars/:userId/:file', (p) => ({
      key: `avatars/${p.userId}`,
      file: p.file as string,
      segments: [p.userId as string],
    })),
    imageRoute('/media/banners/:ownerId/:file', (p) => ({
      key: `banners/${p.ownerId}`,
      file: p.file as string,
      segments: [p.ownerId as string],
    })),
    imageRoute('/media/icons/:guildId/:file', (p) => ({
      key: `icons/${p.guildId}`,
      file: p.file as string,
      segments: [p.guildId as string],
    })),
    route({
      method: 'GET',
      path: '/media/channel-icons/:channelId/:file',
      root: true,
      policy: 'credential-free',
      query: imageQuery,
      async handler(ctx) {
        // A group DM's icon (Discord's CDN path; docs/chat.md#dm-rules).
        const { channelId, file } = ctx.params;
        checkSegments(channelId, file);
        const match = HASHED_FILE.exec(file ?? '');
        if (!match) throw new ApiError('NOT_FOUND');
        // Icons set before group DMs had their own prefix were stored beside guild icons (docs/media.md).
        return serveStoredImage(
          ctx,
          `channel-icons/${channelId}/${match[1]}`,
          match[2] as string,
          `icons/${channelId}/${match[1]}`,
        );
      },
    }),
    imageRoute('/media/splashes/:guildId/:file', (p) => ({
      key: `splashes/${p.guildId}`,
      file: p.file as string,
      segments: [p.guildId as string],
    })),
    imageRoute('/media/guilds/:guildId/users/:userId/avatars/:file', (p) => ({
      key: `guild-avatars/${p.guildId}/${p.userId}`,
      file: p.file as string,
      segments: [p.guildId as string, p.userId as string],
    })),
    imageRoute('/media/guilds/:guildId/users/:userId/banners/:file', (p) => ({
      key: `guild-banners/${p.guildId}/${p.userId}`,
      file: p.file as string,
      segments: [p.guildId as string, p.userId as string],
    })),
    route({
      method: 'GET',
      path: '/media/emojis/:file',
      root: true,
      policy: 'credential-free',
      query: imageQuery,
      handler(ctx) {
        // Discord's emoji CDN path: `<emoji id>.<ext>`, no hash (the id changes when the image does).
        const match = /^(\d{1,20})\.(png|jpg|jpeg|webp|gif)$/.exec(ctx.params.file ?? '');
        if (!match) throw new ApiError('NOT_FOUND');
        return serveStoredImage(ctx, `emojis/${match[1]}`, match[2] as string);
      },
    }),
    route({
      method: 'GET',
      path: '/media/stickers/:file',
      root: true,
      policy: 'credential-free',
      query: imageQuery,
      async handler(ctx) {
        // Discord's sticker CDN path: `<sticker id>.<ext>`.
        const match = /^(\d{1,20})\.(png|gif|webp)$/.exec(ctx.params.file ?? '');
        if (!match) throw new ApiError('NOT_FOUND');
        const key = `stickers/${match[1]}`;
        // sharp cannot write APNG: an APNG asked for as itself is served as stored (sniffed at upload, nosniff).
        if (match[2] === 'png' && !ctx.query.size && !ctx.query.format) {
          const info = await objects.stat(key);
          if (info?.contentType === 'image/apng') return serveStoredObject(ctx, key, info, 'image/png');
        }
        return serveStoredImage(ctx, key, match[2] as string);
      },
    }),
    route({
      method: 'GET',
      path: '/media/external/:signature/*',
      root: true,
      policy: 'credential-free',
      async handler(ctx) {
        const target = ctx.params['*'] ?? '';
        const url = verifyExternalPath(secrets.mediaProxy, ctx.params.signature ?? '', target);
        if (!url) throw new ApiError('UNAUTHORIZED');
        // Kept fetches are answered without a slot or an upstream request (docs/media.md#external-media-cache);
        // requests for a target being fetched wait for that one fetch.
        let media = externalCache.get(url, ctx.now);
        if (!media) {
          let pending = externalInFlight.get(url);
          if (!pending) {
            const processFull = externalFetches.inUse >= externalFetches.total;
            const release = externalFetches.tryEnter(ctx.ipKey);
            // As for uploads (docs/media.md#uploads-in-flight): `shared` when the process is full, else `user`.
            if (!release) throw rateLimited(1000, false, { 'X-RateLimit-Scope': processFull ? 'shared' : 'user' });
            pending = fetchExternal(url, ctx.now).finally(() => {
              release();
              externalInFlight.delete(url);
            });
            externalInFlight.set(url, pending);
          }
          media = await pending;
        }
        const validators: Validators = {
          etag: media.etag,
          ...(media.lastModified !== undefined ? { lastModified: media.lastModified } : {}),
        };
        if (answeredConditionally(ctx, validators)) return REPLY_SENT;
        const extra: Record<string, string> = media.sniffedType ? {} : { 'content-disposition': 'attachment' };
        return send(ctx.reply, media.bytes, media.sniffedType ?? 'application/octet-stream', extra, { validators });
      },
    }),
    route({
      method: 'PUT',
      path: '/media/v1/relay/:key',
      root: true,
      policy: 'credential-free',
      bodyKind: 'stream',
      bodyLimit: MAX_RELAY_BYTES,
      query: z.object({ t: z.string().max(4096).optional() }),
      async handler(ctx) {
        const check = verifyCapability(secrets.relay, ctx.query.t ?? '', ctx.now);
        if (!check.ok) throw new ApiError('UNAUTHORIZED');
        const cap = check.payload;
        if (cap.b !== UPLOAD_BUCKET || cap.k !== ctx.params.key)
          throw new ApiError('FORBIDDEN', { message: 'Capability does not cover this object' });
        const key = `${UPLOAD_BUCKET}/${cap.k}`;
        if (!isSafeKey(key)) throw new ApiError('FORBIDDEN', { message: 'Capability does not cover this object' });
        // Streamed to the store as it arrives (docs/media.md#uploads-in-flight): a body past the declared size is
        // a 413, and a refused or abandoned upload leaves no object.
        const body = ctx.rawBody as StreamedBody;
        let cut = false;
        body.stream.once('error', () => {
          cut = true;
        });
        let size: number;
        try {
          size = await objects.putStream(
            key,
            body.stream,
            cap.ct ?? 'application/octet-stream',
            Math.min(cap.mb, MAX_RELAY_BYTES),
          );
        } catch (error) {
          if (error instanceof ObjectTooLargeError) throw new ApiError('PAYLOAD_TOO_LARGE');
          if (cut || !body.stream.readableEnded)
            throw new ApiError('BAD_REQUEST', { message: 'The upload was cut off' });
          throw error;
        }
        if (size < cap.mb) {
          await objects.delete(key);
          throw new ApiError('BAD_REQUEST', { message: 'Body is shorter than the declared size' });
        }
        ctx.reply.code(200).send();
        return REPLY_SENT;
      },
    }),
  ];
}
