import { loadSharp } from './sharp.ts';

/**
 * An image's width and height from its first bytes (an attachment's head, not the whole file). sharp reads
 * PNG and JPEG headers from a prefix; GIF and WebP put their size at fixed offsets, read here because sharp
 * refuses a truncated GIF or WebP. Unknown or damaged: no dimensions, never an error.
 */
export async function imageDimensions(head: Buffer): Promise<{ width?: number; height?: number }> {
  const fixed = fixedOffsetDimensions(head);
  if (fixed) return fixed;
  const sharp = await loadSharp();
  try {
    const meta = await sharp(head).metadata();
    return meta.width && meta.height ? { width: meta.width, height: meta.height } : {};
  } catch {
    return {};
  }
}

function fixedOffsetDimensions(bytes: Buffer): { width: number; height: number } | undefined {
  const tag = bytes.subarray(0, 6).toString('latin1');
  if ((tag === 'GIF87a' || tag === 'GIF89a') && bytes.length >= 10)
    return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length < 30 || bytes.subarray(0, 4).toString('latin1') !== 'RIFF') return undefined;
  if (bytes.subarray(8, 12).toString('latin1') !== 'WEBP') return undefined;
  const chunk = bytes.subarray(12, 16).toString('latin1');
  if (chunk === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  // Lossy: a key frame's start code, then 14-bit width and height.
  if (chunk === 'VP8 ' && bytes[23] === 0x9d && bytes[24] === 0x01 && bytes[25] === 0x2a)
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  // Lossless: a signature byte, then 14-bit width-1 and height-1 packed little-endian.
  if (chunk === 'VP8L' && bytes[20] === 0x2f) {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  return undefined;
}
