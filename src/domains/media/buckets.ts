/** Object-store prefix of relay uploads (media proxy, attachments and the janitor agree on it). */
export const UPLOAD_BUCKET = 'uploads';
