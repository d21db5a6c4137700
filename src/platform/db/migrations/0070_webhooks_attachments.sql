-- Webhooks: the token lives only in the execution URL; we keep its SHA-256 digest.
CREATE TABLE webhooks (
  id bigint PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  creator_id bigint REFERENCES users (id) ON DELETE SET NULL,
  name text NOT NULL,
  avatar text,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_channel_idx ON webhooks (channel_id);
CREATE INDEX webhooks_guild_idx ON webhooks (guild_id);

-- Planned uploads: a key is single-use and bound to the identity and channel that planned it.
CREATE TABLE pending_uploads (
  upload_key text PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  filename text NOT NULL,
  file_size bigint NOT NULL,
  content_type text,
  expires_at timestamptz NOT NULL,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pending_uploads_user_idx ON pending_uploads (user_id);
