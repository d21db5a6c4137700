-- Data exports ("harvests", issue 16; docs/accounts.md#your-data-data-export): one row per request. A worker claims a
-- pending row (or a running one whose lease ran out: its process died), builds the archive into the object
-- store, mails a one-time download link and marks it completed. Only the digest of the link's token is
-- stored. `object_key` is cleared when the bytes are deleted (downloaded, expired, account deleted).
CREATE TABLE harvests (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  lease_until timestamptz,
  object_key text,
  size_bytes bigint,
  token_hash text,
  link_expires_at timestamptz,
  downloaded_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX harvests_user_idx ON harvests (user_id, created_at DESC);
-- The worker's queue: only rows still to build are indexed.
CREATE INDEX harvests_queue_idx ON harvests (created_at) WHERE status IN ('pending', 'running');
-- The sweep of stored archives: only rows that still hold bytes.
CREATE INDEX harvests_objects_idx ON harvests (link_expires_at) WHERE object_key IS NOT NULL;
