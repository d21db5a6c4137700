-- The media proxy's shared external-media entries (docs/media.md#external-media-cache), one row per object
-- `external-cache/{key}` (key = SHA-256 of the target URL): its stored size, when it was written and when it
-- expires. `external_cache_usage` holds their total in one row; every change to the entries locks that row
-- first, so the byte budget (HEARTH_MEDIA_EXTERNAL_CACHE_BYTES) holds across processes.
CREATE TABLE external_cache_entries (
  key text PRIMARY KEY,
  bytes bigint NOT NULL,
  stored_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX external_cache_entries_stored_at ON external_cache_entries (stored_at, key);
CREATE INDEX external_cache_entries_expires_at ON external_cache_entries (expires_at);

CREATE TABLE external_cache_usage (
  id smallint PRIMARY KEY CHECK (id = 1),
  bytes bigint NOT NULL
);
INSERT INTO external_cache_usage (id, bytes) VALUES (1, 0);
