import { ByteBudgetCache } from '../../platform/cache/byte-budget-cache.ts';
import { loadSharp } from './sharp.ts';

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif';

const FORMAT_BY_NAME: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp', gif: 'gif' };
const CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

export function formatFromName(name: string | undefined): ImageFormat | undefined {
  return name ? FORMAT_BY_NAME[name.toLowerCase()] : undefined;
}

/** Sizes snap to the nearest power of two between 16 and 4096, as CDN clients expect. */
export function snapSize(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) return undefined;
  const clamped = Math.min(4096, Math.max(16, n));
  return 2 ** Math.round(Math.log2(clamped));
}

/**
 * Re-encodes an image (always: stripping metadata and anything that is not image data) and optionally
 * fits it in a square or a box. Animated GIFs keep their frames when asked for GIF or animated WebP.
 */
export async function transformImage(
  bytes: Buffer,
  options: { format: ImageFormat; width?: number; height?: number; quality?: number; animated?: boolean },
): Promise<{ bytes: Buffer; contentType: string }> {
  const animated = options.animated ?? options.format === 'gif';
  const sharp = await loadSharp();
  let pipeline = sharp(bytes, { animated, limitInputPixels: 64 * 1024 * 1024 }).rotate();
  if (options.width || options.height) {
    pipeline = pipeline.resize({
      width: options.width,
      height: options.height,
      fit: 'inside',
      withoutEnlargement: true,
    });
  }
  const quality = options.quality ? Math.min(100, Math.max(1, options.quality)) : undefined;
  pipeline =
    options.format === 'png'
      ? pipeline.png()
      : options.format === 'jpeg'
        ? pipeline.jpeg(quality ? { quality } : {})
        : options.format === 'webp'
          ? pipeline.webp(quality ? { quality } : {})
          : pipeline.gif();
  return { bytes: await pipeline.toBuffer(), contentType: CONTENT_TYPES[options.format] };
}

/**
 * What identifies the encoder: a derived image's entity tag includes it, so an upgrade that changes the output
 * bytes also changes the tag (docs/media.md#conditional-requests).
 */
export async function transformRevision(): Promise<string> {
  // Asked only where an image is derived, so sharp still loads at the first image, not at start.
  const sharp = await loadSharp();
  return `sharp ${sharp.versions.sharp ?? ''} vips ${sharp.versions.vips}`;
}

/**
 * Runs at most `concurrency` image transforms at once and queues up to `maxWaiting` more; past that a task is
 * refused (`TransformQueueFull`) rather than queued, so a burst of resize requests holds a bounded number of
 * originals in memory (docs/media.md#resized-images).
 */
export class TransformQueue {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.concurrency) this.active++;
    else {
      if (this.waiting.length >= this.maxWaiting) throw new TransformQueueFull();
      // The finishing task hands its place over: `active` is unchanged.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

export class TransformQueueFull extends Error {
  constructor() {
    super('too many image transforms waiting');
  }
}

/**
 * Derived images (a size or format of a stored one) by entity tag, least recently used first out, within a
 * byte budget; an image above `maxEntryBytes` is not kept. A tag names one representation, so it never expires.
 */
export class DerivedImageCache extends ByteBudgetCache<{ bytes: Buffer; contentType: string }> {}
