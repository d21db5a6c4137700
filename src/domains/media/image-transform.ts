import sharp from 'sharp';

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
