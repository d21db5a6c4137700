import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { requireChannel } from '../chat/access.ts';
import { PERMISSIONS } from '../chat/permissions.ts';
import { MAX_FILE_BYTES } from './multipart.ts';

const planBody = z.object({
  attachments: z
    .array(
      z.object({
        id: z.union([z.string().max(32), z.number().int()]).transform(String),
        filename: z.string().min(1).max(1024),
        file_size: z.number().int().min(1).max(MAX_FILE_BYTES),
        content_type: z.string().max(255).optional(),
      }),
    )
    .min(1)
    .max(10),
});

/** What `attachmentRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type AttachmentRoutesDeps = Pick<AppServices, 'attachments' | 'chatCore'>;

/** Pre-uploads (docs/media.md): plan relay uploads for a channel the caller may post files in. */
export function attachmentRoutes(services: AttachmentRoutesDeps): AnyRoute[] {
  const { chatCore, attachments } = services;
  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/attachments',
      policy: 'user',
      rateLimit: { bucket: 'channels:attachments', limit: 20, windowSeconds: 10 },
      body: planBody,
      async handler(ctx) {
        const access = await chatCore.access.channelOf(ctx, PERMISSIONS.SEND_MESSAGES);
        requireChannel(access, PERMISSIONS.ATTACH_FILES);
        return attachments.plan(ctx.user.id, access.channel.id, ctx.body.attachments);
      },
    }),
  ];
}
