import { fieldError } from '../../http/errors.ts';
import { formatFromName, transformImage } from './image-transform.ts';
import { loadSharp } from './sharp.ts';
import { sniffImageType } from './user-images.ts';

const LIMIT_INPUT_PIXELS = 16 * 1024 * 1024;

/**
 * Shrinks an image to fit a `box`-pixel square (frames kept), as Discord does at upload, so the media proxy
 * never re-encodes a huge picture on every view. Images that already fit are kept byte for byte.
 */
async function fitWithin(bytes: Buffer, contentType: string, animated: boolean, box: number): Promise<Buffer> {
  const sharp = await loadSharp();
  const metadata = await sharp(bytes, { animated, limitInputPixels: LIMIT_INPUT_PIXELS }).metadata();
  const width = metadata.width ?? 0;
  const height = metadata.pageHeight ?? metadata.height ?? 0;
  if (width <= box && height <= box) return bytes;
  const format = formatFromName(contentType.split('/')[1]) ?? 'png';
  return (await transformImage(bytes, { format, width: box, height: box, animated })).bytes;
}

/**
 * `image` of an emoji (or sticker) as Discord takes it: a base64 data URI. The declared type is not trusted
 * (discord.js always declares `image/jpg`): the bytes are sniffed and must decode as PNG, JPEG, GIF or WebP.
 */
const DATA_URI = /^data:image\/[A-Za-z0-9.+-]{1,32};base64,([A-Za-z0-9+/=\s]*)$/;

export interface ExpressionImage {
  bytes: Buffer;
  contentType: string;
  /** More than one frame (an animated GIF or WebP). */
  animated: boolean;
}

/**
 * Decodes and checks an image data URI; refusals are IFB on `field` (`INVALID_FORMAT`, `BINARY_TYPE_MAX_SIZE`).
 * A picture larger than `box` pixels either way is shrunk to fit.
 */
export async function readExpressionImage(
  dataUri: string,
  field: string,
  maxBytes: number,
  box: number,
): Promise<ExpressionImage> {
  const match = DATA_URI.exec(dataUri);
  if (!match) throw fieldError(field, 'INVALID_FORMAT', 'Expected a base64 image data URI');
  const bytes = Buffer.from((match[1] as string).replace(/\s/g, ''), 'base64');
  if (bytes.length > maxBytes)
    throw fieldError(field, 'BINARY_TYPE_MAX_SIZE', `File cannot be larger than ${(maxBytes / 1024).toFixed(1)} kb.`);
  const contentType = sniffImageType(bytes);
  if (!contentType) throw fieldError(field, 'INVALID_FORMAT', 'Invalid image data');
  let pages = 1;
  const sharp = await loadSharp();
  try {
    const metadata = await sharp(bytes, { animated: true, limitInputPixels: LIMIT_INPUT_PIXELS }).metadata();
    if (!metadata.width || !metadata.height) throw new Error('no dimensions');
    pages = metadata.pages ?? 1;
  } catch {
    throw fieldError(field, 'INVALID_FORMAT', 'Invalid image data');
  }
  const animated = pages > 1;
  try {
    return { bytes: await fitWithin(bytes, contentType, animated, box), contentType, animated };
  } catch {
    throw fieldError(field, 'INVALID_FORMAT', 'Invalid image data');
  }
}

export interface StickerFile {
  /** What to store: the upload, shrunk to fit the box unless it is an APNG (sharp cannot write APNG). */
  bytes: Buffer;
  /** `image/apng` for an APNG, so the media proxy serves its frames untouched. */
  contentType: 'image/png' | 'image/apng' | 'image/gif';
  /** Discord's `format_type`: 1 PNG, 2 APNG, 4 GIF. */
  formatType: 1 | 2 | 4;
}

/** True when a PNG holds an animation control chunk (`acTL`) before its image data: an APNG. */
function isApng(bytes: Buffer): boolean {
  let offset = 8;
  while (offset + 8 <= bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.subarray(offset + 4, offset + 8).toString('latin1');
    if (type === 'acTL') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    offset += 12 + length;
  }
  return false;
}

/**
 * A sticker file as Discord takes it: PNG, APNG or GIF (Lottie is for Discord's own packs), at most
 * `maxBytes`; refusals are IFB on `field`.
 */
export async function readStickerFile(
  bytes: Buffer,
  field: string,
  maxBytes: number,
  box: number,
): Promise<StickerFile> {
  if (bytes.length > maxBytes)
    throw fieldError(field, 'BINARY_TYPE_MAX_SIZE', `File cannot be larger than ${(maxBytes / 1024).toFixed(1)} kb.`);
  const type = sniffImageType(bytes);
  if (type !== 'image/png' && type !== 'image/gif')
    throw fieldError(field, 'INVALID_FORMAT', 'Stickers must be PNG, APNG or GIF images');
  const sharp = await loadSharp();
  try {
    const metadata = await sharp(bytes, { limitInputPixels: LIMIT_INPUT_PIXELS }).metadata();
    if (!metadata.width || !metadata.height) throw new Error('no dimensions');
  } catch {
    throw fieldError(field, 'INVALID_FORMAT', 'Invalid image data');
  }
  if (type === 'image/png' && isApng(bytes)) return { bytes, contentType: 'image/apng', formatType: 2 };
  let stored: Buffer;
  try {
    stored = await fitWithin(bytes, type, type === 'image/gif', box);
  } catch {
    throw fieldError(field, 'INVALID_FORMAT', 'Invalid image data');
  }
  return type === 'image/gif'
    ? { bytes: stored, contentType: type, formatType: 4 }
    : { bytes: stored, contentType: type, formatType: 1 };
}
