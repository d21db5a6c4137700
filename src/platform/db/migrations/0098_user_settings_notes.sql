-- User settings as the platform's clients read them (docs/accounts.md, "Settings and notes"): only the
-- members a user changed are stored; defaults fill the rest. Notes are private, per user and target.
CREATE TABLE user_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  settings jsonb NOT NULL DEFAULT '{}'
);
CREATE TABLE user_notes (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  target_id bigint NOT NULL,
  note text NOT NULL,
  PRIMARY KEY (user_id, target_id)
);
