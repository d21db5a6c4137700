-- Attachment files no message shows any more, waiting for their object to be deleted (docs/media.md, Attachments):
-- queued by an edit that drops them, and by this trigger for a message deleted by any path (one, in bulk, a ban's
-- purge, its channel, thread, group DM or guild deleted: the cascade deletes the rows). An entry stays while a
-- forward of its message exists, whose snapshot shows the same file; requests and the janitor delete the rest.
CREATE TABLE attachment_file_deletions (
  object_key text PRIMARY KEY,
  message_id bigint NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attachment_file_deletions_message_idx ON attachment_file_deletions (message_id);

CREATE FUNCTION attachment_files_on_message_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO attachment_file_deletions (object_key, message_id)
  SELECT 'attachments/' || OLD.channel_id || '/' || (a ->> 'id') || '/' || (a ->> 'filename'), OLD.id
    FROM jsonb_array_elements(OLD.attachments) a
   WHERE a ? 'id' AND a ? 'filename'
  ON CONFLICT (object_key) DO NOTHING;
  RETURN OLD;
END;
$$;

CREATE TRIGGER messages_queue_attachment_files
  AFTER DELETE ON messages
  FOR EACH ROW WHEN (OLD.attachments <> '[]'::jsonb) EXECUTE FUNCTION attachment_files_on_message_delete();
