/**
 * Role colours made readable (docs/web.md#role-colours): a role's colour is drawn on the theme's backgrounds
 * (page, surfaces, the sidebar and member list, which mix 8 % of the text colour into the page), and a colour
 * a guild picked may be too light for the light theme or too dark for the dark one. The colour keeps its hue and
 * saturation; only its lightness moves, as little as needed for 4.5:1 (WCAG AA for text) against the least
 * favourable of those backgrounds.
 */

type Rgb = [number, number, number];

const LIGHT = { bg: 0xf6f1ec, surface: 0xffffff, text: 0x1f1a17 };
const DARK = { bg: 0x171311, surface: 0x221c19, text: 0xf3ece7 };
/** A little above 4.5, so rounding to 8-bit channels never lands just under it. */
const TARGET = 4.6;

const rgbOf = (color: number): Rgb => [(color >> 16) & 0xff, (color >> 8) & 0xff, color & 0xff];

/** `color-mix(in srgb, a p, b 1-p)`. */
const mix = (a: Rgb, b: Rgb, p: number): Rgb => [0, 1, 2].map((i) => (a[i] ?? 0) * p + (b[i] ?? 0) * (1 - p)) as Rgb;

function luminance([r, g, b]: Rgb): number {
  const channel = (v: number) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

export function contrast(a: Rgb, b: Rgb): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
  return (x + 0.05) / (y + 0.05);
}

function backgrounds(dark: boolean): Rgb[] {
  const theme = dark ? DARK : LIGHT;
  const bg = rgbOf(theme.bg);
  return [bg, rgbOf(theme.surface), mix(bg, rgbOf(theme.text), 0.92)];
}

function toHsl([r, g, b]: Rgb): [number, number, number] {
  const [rr, gg, bb] = [r / 255, g / 255, b / 255];
  const max = Math.max(rr, gg, bb);
  const min = Math.min(rr, gg, bb);
  const l = (max + min) / 2;
  if (max === min) return [0, 0, l];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  const h = max === rr ? (gg - bb) / d + (gg < bb ? 6 : 0) : max === gg ? (bb - rr) / d + 2 : (rr - gg) / d + 4;
  return [h / 6, s, l];
}

function fromHsl(h: number, s: number, l: number): Rgb {
  if (s === 0) return [l * 255, l * 255, l * 255].map(Math.round) as Rgb;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const hue = (t: number) => {
    const u = t < 0 ? t + 1 : t > 1 ? t - 1 : t;
    if (u < 1 / 6) return p + (q - p) * 6 * u;
    if (u < 1 / 2) return q;
    if (u < 2 / 3) return p + (q - p) * (2 / 3 - u) * 6;
    return p;
  };
  return [hue(h + 1 / 3), hue(h), hue(h - 1 / 3)].map((v) => Math.round(v * 255)) as Rgb;
}

const hex = (rgb: Rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/** The role colour `color` (0xRRGGBB) as a CSS colour readable on the light (or `dark`) theme's backgrounds. */
export function readableRoleColor(color: number, dark: boolean): string {
  const rgb = rgbOf(color);
  const grounds = backgrounds(dark);
  const readable = (c: Rgb) => grounds.every((g) => contrast(c, g) >= TARGET);
  if (readable(rgb)) return hex(rgb);
  const [h, s, l] = toHsl(rgb);
  // Lightness only: down towards black on light backgrounds, up towards white on dark ones; the nearest that reads.
  let [near, far] = [l, dark ? 1 : 0];
  for (let i = 0; i < 24; i++) {
    const mid = (near + far) / 2;
    if (readable(fromHsl(h, s, mid))) far = mid;
    else near = mid;
  }
  return hex(fromHsl(h, s, far));
}

let scheme: MediaQueryList | undefined;

/** Whether the dark theme is in use (the stylesheet follows `prefers-color-scheme`). */
export function prefersDark(): boolean {
  if (typeof window === 'undefined' || !window.matchMedia) return false;
  scheme ??= window.matchMedia('(prefers-color-scheme: dark)');
  return scheme.matches;
}

/** Calls `onChange` when the colour scheme changes; returns the unsubscribe. */
export function watchScheme(onChange: () => void): () => void {
  if (typeof window === 'undefined' || !window.matchMedia) return () => {};
  scheme ??= window.matchMedia('(prefers-color-scheme: dark)');
  const list = scheme;
  list.addEventListener('change', onChange);
  return () => list.removeEventListener('change', onChange);
}
