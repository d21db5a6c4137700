import { z } from 'zod';
import { snowflakeField } from '../../http/fields.ts';
import type { RequestContext } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { readMessageRequest } from '../attachments/message-request.ts';
import type { StagedFile } from '../attachments/streamed-multipart.ts';
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

/** discord-api-types `MessageReferenceType`: 0 a reply, 1 a forward (the new message carries a snapshot). */
export const MESSAGE_REFERENCE_TYPES = { DEFAULT: 0, FORWARD: 1 } as const;

const messageReferenceSchema = z.object({
  type: z.union([z.literal(MESSAGE_REFERENCE_TYPES.DEFAULT), z.literal(MESSAGE_REFERENCE_TYPES.FORWARD)]).optional(),
  message_id: snowflakeInput,
  channel_id: snowflakeInput.optional(),
  guild_id: snowflakeInput.optional(),
  fail_if_not_exists: z.boolean().optional(),
});

/** Attachment flags are a 32-bit integer (discord-api-types `AttachmentFlags`); `"0"` is refused, not echoed. */
const MAX_ATTACHMENT_FLAGS = 2 ** 31 - 1;

/**
 * Attachment entries as clients send them; the attachments module turns them into stored attachments and
 * pairs them with the files (`checkAttachmentPairing`). `id` is an upload index or an attachment's snowflake:
 * a non-negative integer, as a JSON number or digit string.
 */
export const attachmentRefSchema = z
  .object({
    id: z
      .union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)])
      .transform((id) => (typeof id === 'number' ? String(id) : id.replace(/^0+(?=\d)/, ''))),
    // Empty names are refused by the pairing check, with one code whether the entry or the part is empty.
    // A filename is sanitised, never refused for its characters (docs/media.md): a NUL becomes `_` here, as it
    // would later, so that the refusal of NUL in other text (docs/conventions.md#errors) does not reach it.
    filename: z
      .string()
      .max(1024)
      .transform((name) => name.replaceAll('\u0000', '_'))
      .optional(),
    title: z.string().max(1024).nullish(),
    description: z.string().max(1024).nullish(),
    upload_filename: z.string().max(1024).optional(),
    flags: z
      .number()
      .int()
      .min(0)
      .max(MAX_ATTACHMENT_FLAGS)
      .nullish()
      .transform((f) => f ?? undefined),
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
 * (docs/media.md). Routes using it declare `bodyKind: 'stream'`.
 */
export async function readCreateMessageBody(
  ctx: Pick<RequestContext, 'rawBody' | 'request'>,
  objects: ObjectStore,
): Promise<{ body: CreateMessageBody; files: ReadonlyMap<string, StagedFile> }> {
  const request = await readMessageRequest(ctx, objects);
  return { body: validate(createMessageSchema, request.payload), files: request.files };
}

export async function readEditMessageBody(
  ctx: Pick<RequestContext, 'rawBody' | 'request'>,
  objects: ObjectStore,
): Promise<{ body: EditMessageBody; files: ReadonlyMap<string, StagedFile> }> {
  const request = await readMessageRequest(ctx, objects);
  return { body: validate(editMessageSchema, request.payload), files: request.files };
}
