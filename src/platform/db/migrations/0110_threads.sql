-- Threads (Discord channel types 10 announcement, 11 public, 12 private). A thread is a row of `channels`
-- (so messages, pins, reactions and typing work unchanged) with `parent_id` = the text channel it lives in;
-- this table holds what only threads have. A thread started from a message has that message's id.
CREATE TABLE threads (
  channel_id bigint PRIMARY KEY REFERENCES channels (id) ON DELETE CASCADE,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  parent_id bigint NOT NULL,
  archived boolean NOT NULL DEFAULT false,
  auto_archive_duration integer NOT NULL DEFAULT 1440,
  -- When `archived` last changed (Discord's archive_timestamp); creation counts as a change.
  archive_timestamp timestamptz NOT NULL,
  locked boolean NOT NULL DEFAULT false,
  invitable boolean NOT NULL DEFAULT true,
  create_timestamp timestamptz NOT NULL,
  total_message_sent integer NOT NULL DEFAULT 0,
  -- Last message or unarchive: the auto-archive countdown starts here.
  last_activity_at timestamptz NOT NULL
);
CREATE INDEX threads_guild_active_idx ON threads (guild_id) WHERE NOT archived;
CREATE INDEX threads_parent_archived_idx ON threads (parent_id, archive_timestamp DESC) WHERE archived;
CREATE INDEX threads_auto_archive_idx ON threads (last_activity_at) WHERE NOT archived;

CREATE TABLE thread_members (
  thread_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  join_timestamp timestamptz NOT NULL,
  flags integer NOT NULL DEFAULT 0,
  PRIMARY KEY (thread_id, user_id)
);
CREATE INDEX thread_members_user_idx ON thread_members (user_id);
