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

/** The hour alone (e.g. 9:21 PM, 21:21), for "Today at …". */
export function formatTime(value: Date): string {
  const locale = currentLocale();
  const key = `${locale}|time`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeStyle: 'short' });
    dateFormats.set(key, format);
  }
  return format.format(value);
}

/** 'today' or 'yesterday' when `value` falls on this or the previous local calendar day, else null. */
export function recentDay(value: Date, now: Date = new Date()): 'today' | 'yesterday' | null {
  const day = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const today = day(now);
  const yesterday = day(new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1));
  const that = day(value);
  return that === today ? 'today' : that === yesterday ? 'yesterday' : null;
}

/**
 * A message's time as the chat shows it: "Today at 9:21 PM" / "Yesterday at …" (the words from `say`), else the
 * date and time; `full` is always the date and time (for a tooltip).
 */
export function messageTime(
  value: string,
  say: (day: 'today' | 'yesterday', time: string) => string,
): { shown: string; full: string } {
  const date = new Date(value);
  const day = recentDay(date);
  const full = formatDate(date, 'dateTime');
  return { shown: day ? say(day, formatTime(date)) : full, full };
}

/** A file's size in the largest fitting unit, locale formatted (e.g. 2.9 MB, 2,9 Mo, 512 bytes). */
export function formatBytes(size: number): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return new Intl.NumberFormat(currentLocale(), {
    style: 'unit',
    unit: units[unit],
    unitDisplay: unit === 0 ? 'long' : 'short',
    maximumFractionDigits: value < 10 && unit > 0 ? 1 : 0,
  }).format(value);
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
