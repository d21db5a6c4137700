import type Sharp from 'sharp';

let library: Promise<typeof Sharp> | undefined;

/**
 * sharp (libvips, a native addon) is loaded at the first image processed, not at start: most starts answer
 * requests long before anyone uploads an image (docs/performance.md#start-up).
 */
export function loadSharp(): Promise<typeof Sharp> {
  library ??= import('sharp').then((module) => module.default);
  return library;
}
