import type { z } from 'zod';
import { type FieldError, type FormErrorCode, formError } from './errors.ts';

/**
 * Maps a zod failure onto `INVALID_FORM_BODY` elements with dot-joined paths (docs/conventions.md#errors).
 * A string holding U+0000 is refused too (`INVALID_FORMAT` at its path): no text column can store it, so it
 * would otherwise fail deep in the database as a 500.
 */
export function validate<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) {
    const nul = pathOfNul(result.data, []);
    if (nul)
      throw formError([
        {
          path: nul.length === 0 ? 'root' : nul.join('.'),
          code: 'INVALID_FORMAT',
          message: 'Text cannot contain a NUL character',
        },
      ]);
    return result.data;
  }
  const errors: FieldError[] = result.error.issues.map((issue) => {
    const path = issue.path.length === 0 ? 'root' : issue.path.map(String).join('.');
    return { path, code: elementCode(issue), message: issue.message };
  });
  throw formError(errors);
}

function elementCode(issue: z.core.$ZodIssue): FormErrorCode {
  const custom = (issue as { params?: { code?: FormErrorCode } }).params?.code;
  if (custom) return custom;
  switch (issue.code) {
    case 'invalid_type':
      return (issue as { input?: unknown }).input === undefined ? 'BASE_TYPE_REQUIRED' : 'INVALID_FORMAT';
    case 'too_big':
      return 'CONTENT_EXCEEDS_MAX_LENGTH';
    case 'invalid_format':
      return (issue as { format?: string }).format === 'email' ? 'INVALID_EMAIL_ADDRESS' : 'INVALID_FORMAT';
    default:
      return 'INVALID_FORMAT';
  }
}

/** The path of the first string (or object key) holding U+0000 in plain JSON-like data, else undefined. */
function pathOfNul(value: unknown, path: string[]): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = pathOfNul(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, member] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key];
      const found = pathOfNul(member, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
