-- Resized images shared through the object store (`derived-cache/{SHA-256 of the entity tag}`,
-- docs/media.md#resized-images) count against the same byte budget as the external-media entries: each row
-- now names its object-store prefix, and (prefix, key) identifies it.
ALTER TABLE external_cache_entries ADD COLUMN bucket text NOT NULL DEFAULT 'external-cache';
ALTER TABLE external_cache_entries DROP CONSTRAINT external_cache_entries_pkey;
ALTER TABLE external_cache_entries ADD PRIMARY KEY (bucket, key);
