/** Object-store prefix of relay uploads (media proxy, attachments and the janitor agree on it). */
export const UPLOAD_BUCKET = 'uploads';
/** Object-store prefix of fetched external media shared by every node (docs/media.md#external-media-cache). */
export const EXTERNAL_CACHE_BUCKET = 'external-cache';
/** Object-store prefix of resized images shared by every node (docs/media.md#resized-images). */
export const DERIVED_CACHE_BUCKET = 'derived-cache';
