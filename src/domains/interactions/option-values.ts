import { type FieldError, formError } from '../../http/errors.ts';
import { OPTION_TYPES } from './commands.ts';

/** One option of a stored command definition (the parts the invocation check reads). */
interface OptionDefinition {
  type: number;
  name: string;
  required?: boolean;
  choices?: { name: string; value: string | number }[];
  options?: OptionDefinition[];
  min_value?: number;
  max_value?: number;
  min_length?: number;
  max_length?: number;
  autocomplete?: boolean;
  channel_types?: number[];
}

/**
 * One option as a person's client sends it in `data.options` (discord-api-types'
 * APIApplicationCommandInteractionDataOption): INTERACTION_CREATE passes it on as sent, an attachment option's
 * value replaced by the stored attachment's id.
 */
export type SentOption = {
  name: string;
  type: number;
  value?: string | number | boolean | undefined;
  options?: SentOption[] | undefined;
  focused?: boolean | undefined;
};

/** The leaf options of an invocation (below its subcommand and group) with their definitions. */
export interface CheckedOption {
  sent: SentOption;
  definition: OptionDefinition;
  /** Where it is in the body (`data.options.0.options.1`), for error paths. */
  path: string;
}

const SNOWFLAKE = /^\d{1,20}$/;
const SNOWFLAKE_TYPES: ReadonlySet<number> = new Set([
  OPTION_TYPES.USER,
  OPTION_TYPES.CHANNEL,
  OPTION_TYPES.ROLE,
  OPTION_TYPES.MENTIONABLE,
]);

/**
 * Checks `data.options` of an invocation against the command's definition, as Discord does (docs/bots.md#invoking-a-command):
 * the path of at most one subcommand group and one subcommand the command defines, then each option one the
 * (sub)command defines, once, with its type, and a value of that type within its `choices`, `min_value`/`max_value`
 * and `min_length`/`max_length`; every required option present. An autocomplete request (`autocomplete`) has
 * exactly one option marked `focused`, one the definition marks `autocomplete`, whose value is the text typed so far
 * (a string); there `required` and `choices` are not enforced, since the person is still filling the form in.
 * Refuses with INVALID_FORM_BODY naming `data.options…`; returns the leaf options with their definitions.
 */
export function checkInvocationOptions(
  commandBody: Record<string, unknown>,
  sent: readonly SentOption[] | undefined,
  autocomplete: boolean,
): CheckedOption[] {
  const errors: FieldError[] = [];
  const leaves: CheckedOption[] = [];
  let focused = 0;

  const walk = (definitions: readonly OptionDefinition[], list: readonly SentOption[], path: string) => {
    const nested = definitions.filter(
      (d) => d.type === OPTION_TYPES.SUB_COMMAND || d.type === OPTION_TYPES.SUB_COMMAND_GROUP,
    );
    if (nested.length > 0) {
      const [only] = list;
      const definition = only ? nested.find((d) => d.name === only.name && d.type === only.type) : undefined;
      if (list.length !== 1 || !only || !definition) {
        errors.push({ path, code: 'INVALID_FORMAT', message: 'Name one subcommand of the command' });
        return;
      }
      if (only.value !== undefined || only.focused !== undefined)
        errors.push({ path: `${path}.0`, code: 'INVALID_FORMAT', message: 'A subcommand has no value' });
      walk(definition.options ?? [], only.options ?? [], `${path}.0.options`);
      return;
    }
    const seen = new Set<string>();
    list.forEach((option, index) => {
      const at = `${path}.${index}`;
      const definition = definitions.find((d) => d.name === option.name);
      if (!definition || definition.type !== option.type) {
        errors.push({ path: `${at}.name`, code: 'INVALID_FORMAT', message: 'Not an option of this command' });
        return;
      }
      if (seen.has(definition.name)) {
        errors.push({ path: `${at}.name`, code: 'INVALID_FORMAT', message: 'Option given twice' });
        return;
      }
      seen.add(definition.name);
      if (option.options !== undefined)
        errors.push({ path: `${at}.options`, code: 'INVALID_FORMAT', message: 'Only subcommands have options' });
      if (option.focused === true) {
        focused++;
        if (!autocomplete || !definition.autocomplete) {
          errors.push({ path: `${at}.focused`, code: 'INVALID_FORMAT', message: 'This option has no autocomplete' });
          return;
        }
        if (typeof option.value !== 'string')
          errors.push({ path: `${at}.value`, code: 'INVALID_FORMAT', message: 'The text typed so far' });
        leaves.push({ sent: option, definition, path: at });
        return;
      }
      const problem = valueProblem(definition, option.value, autocomplete);
      if (problem) errors.push({ path: `${at}.value`, code: problem.code, message: problem.message });
      leaves.push({ sent: option, definition, path: at });
    });
    if (!autocomplete)
      for (const d of definitions)
        if (d.required && !seen.has(d.name))
          errors.push({ path, code: 'BASE_TYPE_REQUIRED', message: `The option ${d.name} is required` });
  };

  walk((commandBody.options as OptionDefinition[] | undefined) ?? [], sent ?? [], 'data.options');
  if (autocomplete && focused !== 1 && errors.length === 0)
    errors.push({ path: 'data.options', code: 'INVALID_FORMAT', message: 'Exactly one option is focused' });
  if (errors.length > 0) throw formError(errors);
  return leaves;
}

function valueProblem(
  definition: OptionDefinition,
  value: unknown,
  autocomplete: boolean,
): { code: 'INVALID_FORMAT' | 'BASE_TYPE_REQUIRED' | 'CONTENT_EXCEEDS_MAX_LENGTH'; message: string } | undefined {
  if (value === undefined) return { code: 'BASE_TYPE_REQUIRED', message: 'An option needs a value' };
  switch (definition.type) {
    case OPTION_TYPES.STRING: {
      if (typeof value !== 'string') return { code: 'INVALID_FORMAT', message: 'Must be a string' };
      const length = [...value].length;
      if (length > (definition.max_length ?? 6000))
        return { code: 'CONTENT_EXCEEDS_MAX_LENGTH', message: `At most ${definition.max_length ?? 6000} characters` };
      if (length < (definition.min_length ?? 0) || length === 0)
        return { code: 'INVALID_FORMAT', message: `At least ${Math.max(1, definition.min_length ?? 0)} characters` };
      break;
    }
    case OPTION_TYPES.INTEGER:
    case OPTION_TYPES.NUMBER: {
      const integer = definition.type === OPTION_TYPES.INTEGER;
      if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value)))
        return { code: 'INVALID_FORMAT', message: integer ? 'Must be an integer' : 'Must be a number' };
      if (definition.min_value !== undefined && value < definition.min_value)
        return { code: 'INVALID_FORMAT', message: `At least ${definition.min_value}` };
      if (definition.max_value !== undefined && value > definition.max_value)
        return { code: 'INVALID_FORMAT', message: `At most ${definition.max_value}` };
      break;
    }
    case OPTION_TYPES.BOOLEAN:
      if (typeof value !== 'boolean') return { code: 'INVALID_FORMAT', message: 'Must be true or false' };
      return undefined;
    case OPTION_TYPES.ATTACHMENT:
      // The id of an entry of `data.attachments` (an upload index), as a string or a number.
      if (!(typeof value === 'string' && SNOWFLAKE.test(value)) && !(Number.isSafeInteger(value) && Number(value) >= 0))
        return { code: 'INVALID_FORMAT', message: 'Must name an entry of data.attachments' };
      return undefined;
    default:
      if (SNOWFLAKE_TYPES.has(definition.type) && !(typeof value === 'string' && SNOWFLAKE.test(value)))
        return { code: 'INVALID_FORMAT', message: 'Must be a snowflake' };
      return undefined;
  }
  if (!autocomplete && definition.choices?.length && !definition.choices.some((c) => c.value === value))
    return { code: 'INVALID_FORMAT', message: 'Not one of the choices' };
  return undefined;
}
