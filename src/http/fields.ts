import { z } from 'zod';
import { parseSnowflake } from '../platform/crypto/snowflake.ts';

/** The element code of an id the checked parser refused (docs/conventions.md#ids-and-time). */
export function snowflakeErrorCode(reason: 'format' | 'range'): 'SNOWFLAKE_OUT_OF_RANGE' | 'INVALID_SNOWFLAKE_FORMAT' {
  return reason === 'range' ? 'SNOWFLAKE_OUT_OF_RANGE' : 'INVALID_SNOWFLAKE_FORMAT';
}

/** A snowflake given as a digit string or JSON integer (docs/conventions.md#ids-and-time), normalised to a string. */
export const snowflakeField = z.unknown().transform((value, ctx) => {
  const parsed = parseSnowflake(value);
  if (parsed.ok) return parsed.value;
  ctx.addIssue({
    code: 'custom',
    message: parsed.reason === 'range' ? 'Snowflake out of range' : 'Value is not a snowflake',
    params: { code: snowflakeErrorCode(parsed.reason) },
  });
  return z.NEVER;
});

/** A non-negative integer as a decimal string of up to 20 digits or a JSON integer. */
const unsignedInteger = z.union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0)]);

/** A 64-bit bitfield (flags) as a decimal string or a JSON integer; wider values are refused. */
export const bitfieldField = unsignedInteger.transform((v, ctx) => {
  const value = BigInt(v);
  if (value >= 1n << 64n) {
    ctx.addIssue({ code: 'custom', message: 'Must fit in 64 bits' });
    return z.NEVER;
  }
  return value;
});

/** Permission bits: like `bitfieldField`, but bits beyond the known ones (even beyond 64) are dropped later. */
export const permissionBitsField = unsignedInteger.transform((v) => BigInt(v));

/** `""` counts as null outside message bodies (docs/conventions.md#requests). */
export const nullableText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => (v === '' ? null : v));

/** `YYYY-MM-DD` naming a day that exists (no month 13, no 29 February outside leap years, no year 0). */
export const calendarDateField = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'Expected YYYY-MM-DD' })
  .refine(isCalendarDate, { error: 'Not a calendar date' });

export function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.split('-').map(Number) as [number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
