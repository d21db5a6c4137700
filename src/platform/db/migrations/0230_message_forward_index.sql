-- The messages that point at another (replies, forwards) by its id: a forward keeps its source's attachment files
-- alive when the source drops one (docs/media.md, Attachments), and that check looks forwards up by source.
CREATE INDEX messages_reference_idx ON messages (reference_message_id) WHERE reference_message_id IS NOT NULL;
