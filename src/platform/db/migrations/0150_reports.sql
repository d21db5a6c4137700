-- Safety reports (issue 16): a user reports a message, a user or a guild to the instance's admins, who
-- resolve or dismiss it through the Admin API. No foreign keys on purpose: a report is evidence and must
-- outlive the message, the account or the guild it names (and the reporter's own account).
CREATE TABLE reports (
  id bigint PRIMARY KEY,
  reporter_id bigint NOT NULL,
  target_type text NOT NULL CHECK (target_type IN ('message', 'user', 'guild')),
  target_id bigint NOT NULL,
  -- Where a reported message lived (channel_id, and guild_id outside DMs); the guild of a guild report.
  channel_id bigint,
  guild_id bigint,
  category text NOT NULL CHECK (category IN ('spam', 'harassment', 'illegal_content', 'other')),
  description text CHECK (char_length(description) <= 1000),
  -- What the target looked like when it was reported (the message as the reporter saw it, the user, the guild).
  snapshot jsonb NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
  created_at timestamptz NOT NULL,
  closed_at timestamptz,
  closed_by bigint,
  resolution_note text CHECK (char_length(resolution_note) <= 1000)
);
-- One open report per reporter and target: a second filing answers the open one.
CREATE UNIQUE INDEX reports_open_once_idx ON reports (reporter_id, target_type, target_id) WHERE status = 'open';
CREATE INDEX reports_status_idx ON reports (status, id DESC);
CREATE INDEX reports_target_idx ON reports (target_type, target_id, id DESC);
