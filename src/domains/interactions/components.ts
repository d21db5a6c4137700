import { z } from 'zod';

/**
 * Message components as Discord defines them (docs/bots.md): action rows holding buttons or one select
 * menu on messages, text inputs inside modals. Limits are Discord's: 5 rows, 5 buttons a row, 25 options,
 * custom ids of 1–100 characters.
 */
export const COMPONENT_TYPES = {
  ACTION_ROW: 1,
  BUTTON: 2,
  STRING_SELECT: 3,
  TEXT_INPUT: 4,
  USER_SELECT: 5,
  ROLE_SELECT: 6,
  MENTIONABLE_SELECT: 7,
  CHANNEL_SELECT: 8,
} as const;

const customId = z.string().min(1).max(100);
const emoji = z
  .object({ id: z.string().max(20).nullish(), name: z.string().max(100).nullish(), animated: z.boolean().optional() })
  .strip();

const button = z
  .object({
    type: z.literal(COMPONENT_TYPES.BUTTON),
    style: z.number().int().min(1).max(6),
    label: z.string().max(80).optional(),
    emoji: emoji.optional(),
    custom_id: customId.optional(),
    url: z.string().url().max(512).optional(),
    sku_id: z.string().max(20).optional(),
    disabled: z.boolean().optional(),
    id: z.number().int().optional(),
  })
  .strip()
  .superRefine((b, ctx) => {
    // Link buttons (style 5) carry a url and no custom id; premium (6) a sku; the others a custom id.
    if (b.style === 5 && (b.url === undefined || b.custom_id !== undefined))
      ctx.addIssue({ code: 'custom', message: 'A link button needs a url and no custom_id' });
    if (b.style === 6 && b.sku_id === undefined)
      ctx.addIssue({ code: 'custom', message: 'A premium button needs a sku_id' });
    if (b.style < 5 && (b.custom_id === undefined || b.url !== undefined))
      ctx.addIssue({ code: 'custom', message: 'This button needs a custom_id and no url' });
    if (b.style !== 6 && b.label === undefined && b.emoji === undefined)
      ctx.addIssue({ code: 'custom', message: 'A button needs a label or an emoji' });
  });

const selectOption = z
  .object({
    label: z.string().min(1).max(100),
    value: z.string().min(1).max(100),
    description: z.string().max(100).optional(),
    emoji: emoji.optional(),
    default: z.boolean().optional(),
  })
  .strip();

const defaultValue = z.object({ id: z.string().max(20), type: z.enum(['user', 'role', 'channel']) }).strip();

const selectCommon = {
  custom_id: customId,
  placeholder: z.string().max(150).optional(),
  min_values: z.number().int().min(0).max(25).optional(),
  max_values: z.number().int().min(1).max(25).optional(),
  disabled: z.boolean().optional(),
  id: z.number().int().optional(),
};

const stringSelect = z
  .object({
    type: z.literal(COMPONENT_TYPES.STRING_SELECT),
    options: z.array(selectOption).min(1).max(25),
    ...selectCommon,
  })
  .strip();

const entitySelect = z
  .object({
    type: z.union([
      z.literal(COMPONENT_TYPES.USER_SELECT),
      z.literal(COMPONENT_TYPES.ROLE_SELECT),
      z.literal(COMPONENT_TYPES.MENTIONABLE_SELECT),
      z.literal(COMPONENT_TYPES.CHANNEL_SELECT),
    ]),
    channel_types: z.array(z.number().int().min(0).max(20)).max(20).optional(),
    default_values: z.array(defaultValue).max(25).optional(),
    ...selectCommon,
  })
  .strip();

const messageRow = z
  .object({
    type: z.literal(COMPONENT_TYPES.ACTION_ROW),
    components: z
      .array(z.union([button, stringSelect, entitySelect]))
      .min(1)
      .max(5),
    id: z.number().int().optional(),
  })
  .strip()
  .superRefine((row, ctx) => {
    const selects = row.components.filter((c) => c.type !== COMPONENT_TYPES.BUTTON).length;
    if (selects > 0 && row.components.length > 1)
      ctx.addIssue({ code: 'custom', message: 'A select menu fills its action row alone' });
  });

/** `components` of a message: up to 5 action rows; custom ids unique across the message. */
export const messageComponentsSchema = z
  .array(messageRow)
  .max(5)
  .superRefine((rows, ctx) => {
    const ids = customIdsOf(rows);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: 'custom_id values must be unique' });
  });

const textInput = z
  .object({
    type: z.literal(COMPONENT_TYPES.TEXT_INPUT),
    custom_id: customId,
    style: z.union([z.literal(1), z.literal(2)]),
    label: z.string().min(1).max(45),
    min_length: z.number().int().min(0).max(4000).optional(),
    max_length: z.number().int().min(1).max(4000).optional(),
    required: z.boolean().optional(),
    value: z.string().max(4000).optional(),
    placeholder: z.string().max(100).optional(),
    id: z.number().int().optional(),
  })
  .strip();

/** `data` of a modal response (callback type 9). */
export const modalSchema = z
  .object({
    custom_id: customId,
    title: z.string().min(1).max(45),
    components: z
      .array(
        z
          .object({
            type: z.literal(COMPONENT_TYPES.ACTION_ROW),
            components: z.array(textInput).length(1),
            id: z.number().int().optional(),
          })
          .strip(),
      )
      .min(1)
      .max(5),
  })
  .strip();

export type MessageComponents = z.infer<typeof messageComponentsSchema>;
export type Modal = z.infer<typeof modalSchema>;

/** Every custom id on a message's components. */
export function customIdsOf(rows: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const row of rows) {
    const children = (row as { components?: unknown[] }).components ?? [];
    for (const child of children) {
      const id = (child as { custom_id?: unknown }).custom_id;
      if (typeof id === 'string') ids.push(id);
    }
  }
  return ids;
}

/** The component with `customId` on a message, with its type, or undefined. */
export function findComponent(rows: readonly unknown[], customId: string): { type: number } | undefined {
  for (const row of rows)
    for (const child of (row as { components?: unknown[] }).components ?? [])
      if ((child as { custom_id?: unknown }).custom_id === customId) return child as { type: number };
  return undefined;
}
