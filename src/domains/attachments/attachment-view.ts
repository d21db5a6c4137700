/**
 * A message attachment as `AttachmentService` stores it in `messages.attachments` and every message answer sends it
 * (discord-api-types' APIAttachment, the members Hearth sets; docs/media.md, "Attachments"). Edits keep stored ones as
 * they are, so this is also what an edit reads back.
 */
export interface AttachmentView {
  id: string;
  /** Sanitised and bounded (`safeFilename`); also the last segment of `url`. */
  filename: string;
  /** The name the sender gave before sanitising, when they gave a title. */
  title?: string;
  description: string | null;
  /** Sniffed from the bytes for images; the declared type otherwise. */
  content_type: string;
  size: number;
  url: string;
  proxy_url: string;
  /** Images only, read from the file's first bytes. */
  width?: number;
  height?: number;
  flags: number;
}
