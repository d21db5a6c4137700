import { z } from 'zod';

/**
 * Application commands as Discord defines them (docs/bots.md): chat-input (slash) commands with typed
 * options, and user and message context-menu commands.
 */
export const COMMAND_TYPES = { CHAT_INPUT: 1, USER: 2, MESSAGE: 3, PRIMARY_ENTRY_POINT: 4 } as const;
export const OPTION_TYPES = {
  SUB_COMMAND: 1,
  SUB_COMMAND_GROUP: 2,
  STRING: 3,
  INTEGER: 4,
  BOOLEAN: 5,
  USER: 6,
  CHANNEL: 7,
  ROLE: 8,
  MENTIONABLE: 9,
  NUMBER: 10,
  ATTACHMENT: 11,
} as const;
/** Per application (or application in a guild) and command type, as Discord counts. */
export const MAX_COMMANDS_PER_TYPE = 100;

/** Discord's chat-input name rule: 1–32 lowercase letters, digits, `-`, `_` and `'` of any script. */
const CHAT_INPUT_NAME = /^[-_'\p{Ll}\p{Lm}\p{Lo}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const localizations = z.record(z.string().max(10), z.string().max(100)).nullish();

const choice = z
  .object({
    name: z.string().min(1).max(100),
    name_localizations: localizations,
    value: z.union([z.string().max(100), z.number()]),
  })
  .strip();

interface OptionInput {
  type: number;
  name: string;
  description: string;
  required?: boolean | undefined;
  options?: OptionInput[] | undefined;
  choices?: z.infer<typeof choice>[] | undefined;
  autocomplete?: boolean | undefined;
  [key: string]: unknown;
}

const option: z.ZodType<OptionInput> = z.lazy(() =>
  z
    .object({
      type: z.number().int().min(1).max(11),
      name: z.string().regex(CHAT_INPUT_NAME, 'Lowercase letters, digits, - and _ (1–32)'),
      name_localizations: localizations,
      description: z.string().min(1).max(100),
      description_localizations: localizations,
      required: z.boolean().optional(),
      choices: z.array(choice).max(25).optional(),
      options: z.array(option).max(25).optional(),
      channel_types: z.array(z.number().int().min(0).max(20)).max(20).optional(),
      min_value: z.number().optional(),
      max_value: z.number().optional(),
      min_length: z.number().int().min(0).max(6000).optional(),
      max_length: z.number().int().min(1).max(6000).optional(),
      autocomplete: z.boolean().optional(),
    })
    .strip()
    .superRefine((o, ctx) => {
      if (o.autocomplete && o.choices?.length) ctx.addIssue({ code: 'custom', message: 'autocomplete with choices' });
      const nested = o.type === OPTION_TYPES.SUB_COMMAND || o.type === OPTION_TYPES.SUB_COMMAND_GROUP;
      if (!nested && o.options?.length) ctx.addIssue({ code: 'custom', message: 'only subcommands have options' });
      checkOptionList(o.options ?? [], ctx);
    }),
);

function checkOptionList(options: readonly OptionInput[], ctx: z.RefinementCtx): void {
  const names = options.map((o) => o.name);
  if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'option names must be unique' });
  let optionalSeen = false;
  for (const o of options) {
    if (o.type <= OPTION_TYPES.SUB_COMMAND_GROUP) continue;
    if (o.required && optionalSeen)
      ctx.addIssue({ code: 'custom', message: 'required options must come before optional ones' });
    if (!o.required) optionalSeen = true;
  }
}

/** The body of `POST` (and each element of `PUT`) `/applications/{id}/commands`. */
export const commandSchema = z
  .object({
    id: z.string().max(20).optional(),
    type: z.number().int().min(1).max(4).default(COMMAND_TYPES.CHAT_INPUT),
    name: z.string().min(1).max(32),
    name_localizations: localizations,
    description: z.string().max(100).default(''),
    description_localizations: localizations,
    options: z.array(option).max(25).optional(),
    default_member_permissions: z
      .union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0)])
      .nullish()
      .transform((v) => (v === null || v === undefined ? null : String(v))),
    dm_permission: z.boolean().nullish(),
    contexts: z.array(z.number().int().min(0).max(2)).max(3).nullish(),
    integration_types: z.array(z.number().int().min(0).max(1)).max(2).nullish(),
    nsfw: z.boolean().optional(),
    handler: z.number().int().optional(),
  })
  .strip()
  .superRefine((c, ctx) => {
    if (c.type === COMMAND_TYPES.CHAT_INPUT) {
      if (!CHAT_INPUT_NAME.test(c.name))
        ctx.addIssue({ code: 'custom', path: ['name'], message: 'Lowercase letters, digits, - and _ (1–32)' });
      if (c.description.length === 0)
        ctx.addIssue({ code: 'too_small', path: ['description'], minimum: 1, origin: 'string', message: 'Required' });
      checkOptionList(c.options ?? [], ctx);
    } else if (c.description !== '' || c.options?.length) {
      ctx.addIssue({ code: 'custom', path: ['description'], message: 'Context-menu commands have no description' });
    }
  });

export type CommandInput = z.infer<typeof commandSchema>;

/** `PATCH`: every member optional, checked again as a whole once merged with the stored command. */
export const commandPatchSchema = z.record(z.string(), z.unknown());

/** What is kept of a command besides its identity (id, application, guild, version): the checked body, stored as JSON. */
export type CommandBody = Omit<CommandInput, 'id'>;

/** What is kept of a command besides its identity (id, application, guild, version). */
export function commandBody(input: CommandInput): CommandBody {
  const { id: _id, ...body } = input;
  return body;
}

export interface CommandRow {
  id: string;
  application_id: string;
  guild_id: string | null;
  type: number;
  name: string;
  body: CommandBody;
  version: string;
}

/** Localized names or descriptions: an open map from a locale to the text in it. */
type Localizations = NonNullable<CommandBody['name_localizations']>;

/** The API object (discord-api-types' APIApplicationCommand) as `commandView` shows a stored command. */
export type CommandView = {
  id: string;
  application_id: string;
  /** A guild command's guild. */
  guild_id?: string;
  version: string;
  type: number;
  name: string;
  name_localizations: Localizations | null;
  description: string;
  description_localizations: Localizations | null;
  options?: NonNullable<CommandBody['options']>;
  default_member_permissions: string | null;
  dm_permission: boolean;
  contexts: number[] | null;
  integration_types: number[];
  nsfw: boolean;
};

/** The API object (discord-api-types' APIApplicationCommand). */
export function commandView(row: CommandRow): CommandView {
  const body = row.body;
  return {
    id: row.id,
    application_id: row.application_id,
    ...(row.guild_id ? { guild_id: row.guild_id } : {}),
    version: row.version,
    type: row.type,
    name: row.name,
    name_localizations: body.name_localizations ?? null,
    description: body.description ?? '',
    description_localizations: body.description_localizations ?? null,
    ...(body.options ? { options: body.options } : {}),
    default_member_permissions: body.default_member_permissions ?? null,
    dm_permission: body.dm_permission ?? true,
    contexts: body.contexts ?? null,
    integration_types: body.integration_types ?? [0],
    nsfw: body.nsfw ?? false,
  };
}
