import { shortcodes } from './emoji-data.ts';

/** `:shortcode:` names for the composer's completion (the text stores the character). */
export const EMOJI: [string, string][] = shortcodes();
