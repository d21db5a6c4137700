-- Saved messages ("save for later", issue 16): a user's bookmarks of messages, with an optional note and
-- reminder time. A deleted message takes its saves with it.
CREATE TABLE saved_messages (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  channel_id bigint NOT NULL,
  guild_id bigint,
  saved_at timestamptz NOT NULL,
  notes text,
  due_at timestamptz,
  PRIMARY KEY (user_id, message_id)
);
CREATE INDEX saved_messages_user_idx ON saved_messages (user_id, saved_at DESC, message_id DESC);
CREATE INDEX saved_messages_message_idx ON saved_messages (message_id);
