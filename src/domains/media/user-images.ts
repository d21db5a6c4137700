import { fieldError } from '../../http/errors.ts';
import { sha256Hex } from '../../platform/crypto/tokens.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';

const DATA_URI = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)$/;
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** Sniffs the image type from its first bytes: the declared type is not trusted. */
export function sniffImageType(bytes: Buffer): string | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (
    bytes.length >= 6 &&
    (bytes.subarray(0, 6).toString('latin1') === 'GIF87a' || bytes.subarray(0, 6).toString('latin1') === 'GIF89a')
  )
    return 'image/gif';
  if (
    bytes.length >= 12 &&
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
    bytes.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/**
 * Stores an avatar, banner or icon given as a data URI and returns its hash (8 lowercase hex, `a_` when
 * animated), or null to clear. Objects live at `<kind>/<ownerId>/<hash>` (a member's per-guild images:
 * `guild-avatars/<guild id>/<user id>/<hash>`; a group DM's icon: `channel-icons/<channel id>/<hash>`).
 */
export class UserImages {
  constructor(private readonly store: ObjectStore) {}

  async storeUserImage(
    kind: 'avatars' | 'banners' | 'icons' | 'splashes' | 'guild-avatars' | 'guild-banners' | 'channel-icons',
    ownerId: string,
    dataUri: string | null,
    field: string,
  ): Promise<string | null> {
    if (dataUri === null || dataUri === '') return null;
    const match = DATA_URI.exec(dataUri);
    if (!match) throw fieldError(field, 'INVALID_FORMAT', 'Expected a base64 image data URI');
    const bytes = Buffer.from((match[2] as string).replace(/\s/g, ''), 'base64');
    const type = sniffImageType(bytes);
    if (!type || bytes.length > MAX_IMAGE_BYTES)
      throw fieldError(field, 'INVALID_FORMAT', 'Unsupported or oversized image');
    const hash = sha256Hex(bytes.toString('base64')).slice(0, 8);
    const name = type === 'image/gif' ? `a_${hash}` : hash;
    await this.store.put(`${kind}/${ownerId}/${name}`, bytes, type);
    return name;
  }
}
