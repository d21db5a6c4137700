import { type FieldError, formError } from '../../http/errors.ts';
import type { AttachmentView } from '../attachments/attachment-view.ts';
import type { Embed } from './message-body.ts';

const SCHEME = 'attachment://';

/**
 * Embeds that show one of the message's own files (`attachment://name`, as discord.js sends them) get that
 * attachment's URLs: `image` and `thumbnail` also its size, `author`/`footer` icons `proxy_icon_url`. The file
 * must be an image of this message (the name as stored); an unknown name is `FILE_NOT_FOUND`, another kind of
 * file `INVALID_FORMAT`, both under the embed's path. Embeds without the scheme come back unchanged.
 */
export function resolveEmbedAttachments(embeds: readonly Embed[], attachments: readonly AttachmentView[]): Embed[] {
  const errors: FieldError[] = [];
  const lookup = (url: string, path: string): AttachmentView | undefined => {
    const name = url.slice(SCHEME.length);
    const attachment = attachments.find((a) => a.filename === name);
    if (!attachment) errors.push({ path, code: 'FILE_NOT_FOUND', message: `No attachment named ${name}` });
    else if (!attachment.content_type.startsWith('image/'))
      errors.push({ path, code: 'INVALID_FORMAT', message: `The attachment ${name} is not an image` });
    else return attachment;
    return undefined;
  };
  const out = embeds.map((embed, index) => {
    if (!JSON.stringify(embed).includes(SCHEME)) return embed;
    const next: Embed = { ...embed };
    for (const key of ['image', 'thumbnail'] as const) {
      const media = embed[key];
      if (!media?.url.startsWith(SCHEME)) continue;
      const found = lookup(media.url, `embeds.${index}.${key}.url`);
      if (found)
        next[key] = {
          ...media,
          url: found.url,
          proxy_url: found.proxy_url,
          ...(found.width !== undefined ? { width: found.width, height: found.height } : {}),
        };
    }
    for (const key of ['author', 'footer'] as const) {
      const part = embed[key];
      if (!part?.icon_url?.startsWith(SCHEME)) continue;
      const found = lookup(part.icon_url, `embeds.${index}.${key}.icon_url`);
      if (found) Object.assign(next, { [key]: { ...part, icon_url: found.url, proxy_icon_url: found.proxy_url } });
    }
    return next;
  });
  if (errors.length > 0) throw formError(errors);
  return out;
}
