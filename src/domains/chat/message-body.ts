import { z } from 'zod';
import { snowflakeField } from '../../http/fields.ts';
import type { RequestContext } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { readMessageRequest } from '../attachments/message-request.ts';
import type { UploadedFile } from '../attachments/multipart.ts';
import { messageComponentsSchema } from '../interactions/components.ts';
import { allowedMentionsSchema } from './mentions.ts';

export const MAX_CONTENT_LENGTH = 2000;
export const MAX_EMBEDS = 10;
/** Message flags a client may set (SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS); others are ignored. */
export const CLIENT_MESSAGE_FLAGS = (1 << 2) | (1 << 12);

const snowflakeInput = snowflakeField;

const embedMedia = z.object({ url: z.string().max(2048) }).loose();
export const embedSchema = z
  .object({
    title: z.string().max(256).optional(),
    type: z.string().max(32).optional(),
    description: z.string().max(4096).optional(),
    url: z.string().max(2048).optional(),
    timestamp: z.string().max(64).optional(),
    color: z.number().int().min(0).max(0xffffff).nullish(),
    footer: z.object({ text: z.string().max(2048), icon_url: z.string().max(2048).optional() }).optional(),
    image: embedMedia.optional(),
    thumbnail: embedMedia.optional(),
    author: z
      .object({
        name: z.string().max(256),
        url: z.string().max(2048).optional(),
        icon_url: z.string().max(2048).optional(),
      })
      .optional(),
    fields: z
      .array(z.object({ name: z.string().max(256), value: z.string().max(1024), inline: z.boolean().optional() }))
      .max(25)
      .optional(),
  })
  .transform((embed) => ({ type: 'rich', ...embed }));

export type Embed = z.infer<typeof embedSchema>;

const messageReferenceSchema = z.object({
  message_id: snowflakeInput,
  channel_id: snowflakeInput.optional(),
  guild_id: snowflakeInput.optional(),
  fail_if_not_exists: z.boolean().optional(),
});

/** Attachment entries as clients send them; the attachments module turns them into stored attachments. */
const attachmentRefSchema = z
  .object({
    id: z.union([z.string(), z.number()]).transform(String),
    filename: z.string().max(1024).optional(),
    description: z.string().max(1024).nullish(),
    upload_filename: z.string().max(1024).optional(),
  })
  .loose();

export const createMessageSchema = z.object({
  content: z.string().max(MAX_CONTENT_LENGTH).nullish(),
  embeds: z.array(embedSchema).max(MAX_EMBEDS).nullish(),
  attachments: z.array(attachmentRefSchema).max(10).nullish(),
  message_reference: messageReferenceSchema.nullish(),
  allowed_mentions: allowedMentionsSchema.nullish(),
  flags: z.number().int().min(0).nullish(),
  nonce: z.union([z.string().max(25), z.number().int()]).nullish(),
  sticker_ids: z.array(snowflakeInput).max(3).nullish(),
  tts: z.boolean().nullish(),
  components: messageComponentsSchema.nullish(),
});

export type CreateMessageBody = z.infer<typeof createMessageSchema>;

export const editMessageSchema = z.object({
  content: z.string().max(MAX_CONTENT_LENGTH).nullish(),
  embeds: z.array(embedSchema).max(MAX_EMBEDS).nullish(),
  attachments: z.array(attachmentRefSchema).max(10).nullish(),
  allowed_mentions: allowedMentionsSchema.nullish(),
  flags: z.number().int().min(0).nullish(),
  components: messageComponentsSchema.nullish(),
});

export type EditMessageBody = z.infer<typeof editMessageSchema>;

/**
 * The one place a message body is read: JSON, or multipart with `payload_json` and `files[n]`
 * (api.md §3.10). Routes using it declare `bodyKind: 'raw'`.
 */
export async function readCreateMessageBody(
  ctx: Pick<RequestContext, 'rawBody' | 'request'>,
): Promise<{ body: CreateMessageBody; files: ReadonlyMap<string, UploadedFile> }> {
  const request = await readMessageRequest(ctx);
  return { body: validate(createMessageSchema, request.payload), files: request.files };
}

export async function readEditMessageBody(
  ctx: Pick<RequestContext, 'rawBody' | 'request'>,
): Promise<{ body: EditMessageBody; files: ReadonlyMap<string, UploadedFile> }> {
  const request = await readMessageRequest(ctx);
  return { body: validate(editMessageSchema, request.payload), files: request.files };
}
