import type { TFunction } from 'i18next';
import { errorCode } from '../api/errors.ts';

/** Every error the client can meet, as a human sentence in the current locale (falls back to a generic one). */
export function errorSentence(t: TFunction, error: unknown): string {
  const code = errorCode(error);
  const key = `errors.${code}`;
  const sentence = t(key);
  return sentence === key ? t('errors.UNKNOWN_ERROR') : sentence;
}

/** The sentence for one field of an `INVALID_FORM_BODY`, if the server named that field. */
export function fieldSentence(t: TFunction, codes: Record<string, string>, field: string): string | undefined {
  const code = codes[field];
  if (!code) return undefined;
  const key = `errors.${code}`;
  const sentence = t(key);
  return sentence === key ? t('errors.INVALID_FORMAT') : sentence;
}
