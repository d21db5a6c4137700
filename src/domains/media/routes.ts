import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError, rateLimited } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, type RequestContext, route } from '../../http/route.ts';
import { ConcurrencyGate } from '../../platform/concurrency-gate.ts';
import { OutboundRefused, safeFetch } from '../../platform/net/ssrf-guard.ts';
import { isSafeKey } from '../../platform/storage/object-store.ts';
import { UPLOAD_BUCKET } from './buckets.ts';
import { verifyCapability } from './capability.ts';
import { verifyExternalPath } from './external-signature.ts';
import { formatFromName, snapSize, transformImage } from './image-transform.ts';
import { sniffImageType } from './user-images.ts';

const MAX_RELAY_BYTES = 25 * 1024 * 1024;
const EXTERNAL_MAX_BYTES = 20 * 1024 * 1024;
const EXTERNAL_TIMEOUT_MS = 10_000;
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

/** `hash.ext`, hash = 8 lowercase hex with an optional `a_` for animated images (api.md §3.10). */
const HASHED_FILE = /^((?:a_)?[0-9a-f]{8})\.(png|jpg|jpeg|webp|gif)$/;

function send(
  reply: FastifyReply,
  bytes: Buffer,
  contentType: string,
  extra: Record<string, string> = {},
): typeof REPLY_SENT {
  reply
    .code(200)
    .header('content-type', contentType)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('x-content-type-options', 'nosniff')
    // The media URL may be a capability: never leak it onward.
    .header('referrer-policy', 'no-referrer');
  for (const [name, value] of Object.entries(extra)) reply.header(name, value);
  reply.send(bytes);
  return REPLY_SENT;
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

/**
 * The media proxy (api.md §3.10). Every route is credential-free: the Authorization header is never read,
 * so a credential neither helps nor hurts. Errors use the standard body.
 */
export function mediaRoutes(services: AppServices): AnyRoute[] {
  const { objects, secrets, config } = services;
  // Each fetch holds up to EXTERNAL_MAX_BYTES in memory: 16 at once per process, 4 per client address.
  const externalFetches = new ConcurrencyGate(16, 4);

  async function serveHashedImage(ctx: RequestContext<unknown, ImageQuery>, key: string, file: string) {
    const match = HASHED_FILE.exec(file);
    if (!match) throw new ApiError('NOT_FOUND');
    const object = await objects.get(`${key}/${match[1]}`);
    if (!object) throw new ApiError('NOT_FOUND');
    const format = formatFromName(ctx.query.format) ?? formatFromName(match[2]) ?? 'png';
    const size = snapSize(ctx.query.size);
    try {
      const out = await transformImage(object.bytes, {
        format,
        ...(size ? { width: size, height: size } : {}),
        animated: format === 'gif' || (format === 'webp' && ctx.query.animated === 'true'),
      });
      return send(ctx.reply, out.bytes, out.contentType);
    } catch {
      throw new ApiError('BAD_REQUEST', { message: 'Stored image could not be processed' });
    }
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
        const object = await objects.get(key);
        if (!object) throw new ApiError('NOT_FOUND');
        const disposition = ctx.query.download === 'true' || ctx.query.download === '1' ? 'attachment' : 'inline';
        const headers = {
          'content-disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(filename as string)}`,
        };
        const width = ctx.query.width ? Number(ctx.query.width) : undefined;
        const height = ctx.query.height ? Number(ctx.query.height) : undefined;
        const requested = formatFromName(ctx.query.format);
        const isImage = sniffImageType(object.bytes) !== undefined;
        if (isImage && (width || height || requested)) {
          const fmt = requested ?? formatFromName(object.contentType.split('/')[1]) ?? 'png';
          const w = width && Number.isFinite(width) ? Math.min(4096, Math.max(1, Math.round(width))) : undefined;
          const h = height && Number.isFinite(height) ? Math.min(4096, Math.max(1, Math.round(height))) : undefined;
          try {
            const quality = ctx.query.quality ? Number(ctx.query.quality) : undefined;
            const out = await transformImage(object.bytes, {
              format: fmt,
              ...(w ? { width: w } : {}),
              ...(h ? { height: h } : {}),
              ...(quality && Number.isFinite(quality) ? { quality } : {}),
            });
            return send(ctx.reply, out.bytes, out.contentType, headers);
          } catch {
            throw new ApiError('BAD_REQUEST', { message: 'Image could not be processed' });
          }
        }
        // Unknown bytes are served as opaque downloads so a stored file can never run as HTML in our origin.
        const safeType =
          isImage || !ACTIVE_CONTENT.test(object.contentType) ? object.contentType : 'application/octet-stream';
        return send(ctx.reply, object.bytes, safeType, headers);
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
    route({
      method: 'GET',
      path: '/media/external/:signature/*',
      root: true,
      policy: 'credential-free',
      async handler(ctx) {
        const target = ctx.params['*'] ?? '';
        const url = verifyExternalPath(secrets.mediaProxy, ctx.params.signature ?? '', target);
        if (!url) throw new ApiError('UNAUTHORIZED');
        const release = externalFetches.tryEnter(ctx.ipKey);
        if (!release) throw rateLimited(1000, false, { 'X-RateLimit-Scope': 'user' });
        let fetched: Awaited<ReturnType<typeof safeFetch>>;
        try {
          fetched = await safeFetch(url, {
            allowPrivate: config.mediaAllowPrivateTargets,
            maxBytes: EXTERNAL_MAX_BYTES,
            timeoutMs: EXTERNAL_TIMEOUT_MS,
            maxRedirects: 5,
          });
        } catch (error) {
          if (error instanceof OutboundRefused) {
            if (error.reason === 'private_address' || error.reason === 'bad_url')
              throw new ApiError('FORBIDDEN', { message: 'Target not allowed' });
            if (error.reason === 'too_large') throw new ApiError('PAYLOAD_TOO_LARGE');
          }
          throw new ApiError('NOT_FOUND', { message: 'Upstream media unavailable' });
        } finally {
          release();
        }
        if (fetched.status < 200 || fetched.status >= 300)
          throw new ApiError('NOT_FOUND', { message: 'Upstream media unavailable' });
        const sniffed = sniffImageType(fetched.bytes);
        if (!sniffed)
          return send(ctx.reply, fetched.bytes, 'application/octet-stream', { 'content-disposition': 'attachment' });
        return send(ctx.reply, fetched.bytes, sniffed);
      },
    }),
    route({
      method: 'PUT',
      path: '/media/v1/relay/:key',
      root: true,
      policy: 'credential-free',
      bodyKind: 'raw',
      bodyLimit: MAX_RELAY_BYTES + 1024,
      query: z.object({ t: z.string().max(4096).optional() }),
      async handler(ctx) {
        const check = verifyCapability(secrets.relay, ctx.query.t ?? '', ctx.now);
        if (!check.ok) throw new ApiError('UNAUTHORIZED');
        const cap = check.payload;
        if (cap.b !== UPLOAD_BUCKET || cap.k !== ctx.params.key)
          throw new ApiError('FORBIDDEN', { message: 'Capability does not cover this object' });
        const bytes = Buffer.isBuffer(ctx.rawBody) ? ctx.rawBody : Buffer.alloc(0);
        if (bytes.length > cap.mb || bytes.length > MAX_RELAY_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE');
        if (bytes.length < cap.mb)
          throw new ApiError('BAD_REQUEST', { message: 'Body is shorter than the declared size' });
        const key = `${UPLOAD_BUCKET}/${cap.k}`;
        if (!isSafeKey(key)) throw new ApiError('FORBIDDEN', { message: 'Capability does not cover this object' });
        await objects.put(key, bytes, cap.ct ?? 'application/octet-stream');
        ctx.reply.code(200).send();
        return REPLY_SENT;
      },
    }),
  ];
}
