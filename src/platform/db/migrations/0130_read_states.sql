-- Read states (issue 16): per user and channel, the last acknowledged message (0 = none yet), the mentions
-- of the user since then, when the user last acknowledged the channel's pins, and a version bumped by
-- every acknowledgement. A row can exist before any ack: the first mention creates it.
ALTER TABLE read_states
  ALTER COLUMN last_message_id SET DEFAULT 0,
  ADD COLUMN mention_count integer NOT NULL DEFAULT 0,
  ADD COLUMN last_pin_timestamp timestamptz,
  ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- The mentions inbox (GET /users/@me/mentions): direct mentions, @everyone per guild, role mentions.
-- Partial indexes, so the messages that mention nobody (most of them) cost nothing extra.
CREATE INDEX messages_user_mentions_idx ON messages USING gin (mentions) WHERE cardinality(mentions) > 0;
CREATE INDEX messages_role_mentions_idx ON messages USING gin (mention_roles) WHERE cardinality(mention_roles) > 0;
CREATE INDEX messages_everyone_idx ON messages (guild_id, id) WHERE mention_everyone;
