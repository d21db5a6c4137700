import type { z } from 'zod';
import { type FieldError, type FormErrorCode, formError } from './errors.ts';

/** Maps a zod failure onto `INVALID_FORM_BODY` elements with dot-joined paths (docs/conventions.md#errors). */
export function validate<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
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
