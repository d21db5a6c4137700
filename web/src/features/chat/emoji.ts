import { shortcodes } from './emoji-data.ts';

/** `:shortcode:` names for the composer's completion (the text stores the character). */
export const EMOJI: [string, string][] = shortcodes();

const BY_NAME = new Map(EMOJI);

/**
 * A message as sent: every `:name:` typed out in full becomes its emoji, as in the clients people know (the
 * server's own emoji by that name first, else the standard one); unknown names, code spans and code blocks stay
 * as typed, and so does the name inside a custom emoji's `<:name:id>`.
 */
export function resolveShortcodes(
  text: string,
  custom: readonly { id: string | null; name: string; animated?: boolean | null }[] = [],
): string {
  if (!text.includes(':')) return text;
  return text
    .split(/(```[\s\S]*?```|`[^`\n]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part.replace(/(?<![<\w:]):([\w+-]{2,32}):(?!\d)/g, (whole, name: string) => {
            const own = custom.find((e) => e.id && e.name === name);
            if (own) return `<${own.animated ? 'a' : ''}:${own.name}:${own.id}>`;
            return BY_NAME.get(name.toLowerCase()) ?? whole;
          }),
    )
    .join('');
}
