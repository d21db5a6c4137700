-- Account lifecycle: the premium fields the test harness sets, and the index the deletion sweeper scans.
ALTER TABLE users ADD COLUMN premium_type integer NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN premium_until timestamptz;
CREATE INDEX users_pending_deletion_idx ON users (pending_deletion_at) WHERE pending_deletion_at IS NOT NULL;
