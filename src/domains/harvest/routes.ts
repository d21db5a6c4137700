import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, REPLY_SENT, route } from '../../http/route.ts';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { pathId } from '../chat/access.ts';
import { verifyLink } from './download-link.ts';
import { HARVEST_CONTENT_TYPE, HARVEST_FILE_SUFFIX } from './harvest-archive.ts';
import type { HarvestService } from './harvest-service.ts';

export interface HarvestRouteDeps {
  harvests: HarvestService;
  objects: ObjectStore;
  linkSecret: string;
  now: () => number;
}

const downloadQuery = z.object({
  expires: z.string().max(16).optional(),
  token: z.string().max(128).optional(),
  signature: z.string().max(128).optional(),
});

/** `GET`/`POST /users/@me/harvest` and the emailed download link (docs/accounts.md#your-data-data-export). */
export function harvestRoutes(deps: HarvestRouteDeps): AnyRoute[] {
  const { harvests, objects } = deps;
  return [
    route({
      method: 'GET',
      path: '/users/@me/harvest',
      policy: 'user-only',
      rateLimit: { bucket: 'users:harvest:read', limit: 30, windowSeconds: 10 },
      async handler(ctx) {
        const row = await harvests.store.latest(ctx.user.id);
        return row ? harvests.view(row) : null;
      },
    }),
    route({
      method: 'POST',
      path: '/users/@me/harvest',
      policy: 'user-only',
      rateLimit: { bucket: 'users:harvest', limit: 5, windowSeconds: 60 },
      async handler(ctx) {
        // The archive is announced by email: an address nobody proved to own must not receive it.
        if (!ctx.user.email || !ctx.user.emailVerified) throw new ApiError('HARVEST_REQUIRES_VERIFIED_EMAIL');
        const outcome = await harvests.store.request(ctx.user.id, harvests.nextId(), ctx.now, harvests.cooldownMs);
        if ('blocking' in outcome) {
          const availableAt = outcome.blocking.created_at.getTime() + harvests.cooldownMs;
          const retryAfter = Math.max(1, Math.ceil((availableAt - ctx.now) / 1000));
          throw new ApiError('HARVEST_COOLDOWN', {
            extra: { retry_after: retryAfter, next_request_at: new Date(availableAt).toISOString() },
            headers: { 'Retry-After': String(retryAfter) },
          });
        }
        harvests.wake();
        return harvests.view(outcome.created);
      },
    }),
    route({
      method: 'GET',
      path: '/harvests/:harvestId/download',
      // The link is the credential: it is opened from an email, where no Authorization header exists.
      policy: 'credential-free',
      rateLimit: { bucket: 'harvests:download', limit: 10, windowSeconds: 60 },
      query: downloadQuery,
      async handler(ctx) {
        const harvestId = pathId(ctx.params.harvestId, 'UNKNOWN_HARVEST');
        const { expires: expiresText, token, signature } = ctx.query;
        if (!expiresText || !/^\d{1,12}$/.test(expiresText) || !token || !signature)
          throw new ApiError('UNKNOWN_HARVEST');
        const expires = Number(expiresText);
        if (!verifyLink(deps.linkSecret, { harvestId, expires, token }, signature))
          throw new ApiError('UNKNOWN_HARVEST');
        const now = deps.now();
        if (expires * 1000 <= now) throw new ApiError('HARVEST_LINK_EXPIRED');
        const row = await harvests.store.find(harvestId);
        if (!row?.token_hash || !constantTimeEqual(digest(token), row.token_hash))
          throw new ApiError('UNKNOWN_HARVEST');
        if (row.downloaded_at !== null) throw new ApiError('HARVEST_LINK_USED');
        if (!row.link_expires_at || row.link_expires_at.getTime() <= now || !row.object_key)
          throw new ApiError('HARVEST_LINK_EXPIRED');
        // Opened before the link is spent: bytes that went missing must not cost the person their one use. The
        // archive is then streamed, never held whole (docs/media.md#streamed-downloads).
        const info = await objects.stat(row.object_key);
        const body = info ? await objects.readStream(row.object_key) : undefined;
        if (!info || !body) throw new ApiError('HARVEST_LINK_EXPIRED');
        // One conditional UPDATE: of two concurrent uses, only one gets the archive.
        const claimed = await harvests.store.consume(harvestId, row.token_hash, now).catch((error: unknown) => {
          body.destroy();
          throw error;
        });
        if (!claimed) {
          body.destroy();
          throw new ApiError('HARVEST_LINK_USED');
        }
        ctx.reply
          .code(200)
          .header('content-type', HARVEST_CONTENT_TYPE)
          .header('content-disposition', `attachment; filename="hearth-data-${harvestId}${HARVEST_FILE_SUFFIX}"`)
          .header('content-length', String(info.size))
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          // The URL is a capability: never leak it onward.
          .header('referrer-policy', 'no-referrer');
        // Sent once (the link is spent whether or not the transfer completes): the stored copy goes when the
        // response is over (the worker's sweep would take it later).
        ctx.reply.raw.once('close', () => {
          void objects
            .delete(claimed.objectKey)
            .catch(() => {})
            .then(() => harvests.store.forget(harvestId, claimed.objectKey))
            .catch(() => {});
        });
        ctx.reply.send(body);
        return REPLY_SENT;
      },
    }),
  ];
}
