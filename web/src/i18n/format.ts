import { currentLocale } from './index.ts';

/** Dates, numbers and lists through Intl in the current locale; plurals go through i18next (Intl.PluralRules). */
export function formatDate(value: string | number | Date, style: 'date' | 'dateTime' = 'date'): string {
  const date = value instanceof Date ? value : new Date(value);
  return dateFormat(style).format(date);
}

/**
 * Formatters by locale and style: building an Intl.DateTimeFormat costs far more than using one, and a page of
 * history formats a time per message.
 */
const dateFormats = new Map<string, Intl.DateTimeFormat>();

function dateFormat(style: 'date' | 'dateTime'): Intl.DateTimeFormat {
  const locale = currentLocale();
  const key = `${locale}|${style}`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(
      locale,
      style === 'date' ? { dateStyle: 'long' } : { dateStyle: 'medium', timeStyle: 'short' },
    );
    dateFormats.set(key, format);
  }
  return format;
}

export function formatNumber(value: number): string {
  return new Intl.NumberFormat(currentLocale()).format(value);
}

export function formatList(items: string[]): string {
  return new Intl.ListFormat(currentLocale(), { style: 'long', type: 'conjunction' }).format(items);
}

/** Snowflake → creation time (bits 63–22 are ms since 2015-01-01Z, docs/conventions.md#ids-and-time). */
export function snowflakeDate(id: string): Date {
  return new Date(Number(BigInt(id) >> 22n) + 1420070400000);
}
