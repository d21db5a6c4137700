import type { Database, Queryable } from '../../platform/db/database.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import type { AttachmentView } from './attachment-view.ts';

/**
 * The object key of a message attachment's file (its media URL is `/attachments/` + the same path). The trigger of
 * migration 0240 builds the same key for the attachments of a deleted message.
 */
export function attachmentObjectKey(channelId: string, attachment: Pick<AttachmentView, 'id' | 'filename'>): string {
  return `attachments/${channelId}/${attachment.id}/${attachment.filename}`;
}

/**
 * Queues the files of attachments message `messageId` no longer shows (an edit dropped them) for deletion. A deleted
 * message's files are queued by the database itself (trigger of migration 0240), whichever path deleted it.
 */
export async function queueDiscardedFiles(
  db: Queryable,
  channelId: string,
  messageId: string,
  removed: readonly AttachmentView[],
): Promise<void> {
  if (removed.length === 0) return;
  await db.query(
    `INSERT INTO attachment_file_deletions (object_key, message_id)
     SELECT unnest($1::text[]), $2 ON CONFLICT (object_key) DO NOTHING`,
    [removed.map((a) => attachmentObjectKey(channelId, a)), messageId],
  );
}

export interface DiscardedFileSweep {
  /** Only the files these messages lost (what a request just deleted or edited); absent: any. */
  messageIds?: readonly string[];
  /** Files per batch. */
  batchSize: number;
  /** Batches at most; what is left waits for the next sweep. */
  maxBatches: number;
}

/**
 * Deletes queued files from the object store (their URLs answer 404 from then on), oldest first, except those of a
 * message a forward still points at: the forward's snapshot shows the same files, so they stay queued until the last
 * such forward is deleted too (a forward of that forward is not counted). The bytes go first, then the entry, so a
 * store failure leaves an entry the next sweep tries again. Returns how many files went.
 */
export async function deleteDiscardedFiles(
  db: Database,
  objects: ObjectStore,
  sweep: DiscardedFileSweep,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < sweep.maxBatches; batch += 1) {
    const rows = await db.query<{ object_key: string }>(
      `SELECT d.object_key FROM attachment_file_deletions d
        WHERE ($2::bigint[] IS NULL OR d.message_id = ANY($2::bigint[]))
          AND NOT EXISTS (SELECT 1 FROM messages f
                           WHERE f.reference_message_id = d.message_id AND f.extras -> 'message_snapshots' IS NOT NULL)
        ORDER BY d.queued_at, d.object_key LIMIT $1`,
      [sweep.batchSize, sweep.messageIds ?? null],
    );
    if (rows.length === 0) break;
    const deleted: string[] = [];
    for (const { object_key: key } of rows) {
      try {
        await objects.delete(key);
        deleted.push(key);
      } catch {
        // Left queued: the janitor's next sweep tries again.
      }
    }
    if (deleted.length > 0)
      await db.query('DELETE FROM attachment_file_deletions WHERE object_key = ANY($1::text[])', [deleted]);
    total += deleted.length;
    if (rows.length < sweep.batchSize || deleted.length < rows.length) break;
  }
  return total;
}
