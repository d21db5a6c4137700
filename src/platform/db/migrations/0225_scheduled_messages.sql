-- Scheduled messages (docs/chat.md#scheduled-messages): a message body kept until its time, then posted by the
-- delivery task as its author. No foreign keys: a deleted channel or author makes the delivery fail and record
-- why, and the table stays shardable by channel with the messages (docs/performance.md, scale model).
CREATE TABLE scheduled_messages (
  id bigint PRIMARY KEY,
  channel_id bigint NOT NULL,
  author_id bigint NOT NULL,
  scheduled_at timestamptz NOT NULL,
  payload jsonb NOT NULL,
  failure text,
  -- A delivery in progress: the process that claimed the row until then, and the id the message is posted
  -- under, minted once so that a delivery retried after a crash finds the message it already posted.
  claimed_until timestamptz,
  message_id bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The delivery task's scan: pending messages by time.
CREATE INDEX scheduled_messages_due_idx ON scheduled_messages (scheduled_at) WHERE failure IS NULL;
CREATE INDEX scheduled_messages_author_idx ON scheduled_messages (author_id, channel_id);
